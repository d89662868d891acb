"""Regenerate the bundled instance CSV files and TOML files of this folder.

Run from the repository root: ``.venv/bin/python instances/generate.py``. The output is
deterministic (fixed seeds); floats are written with ``%.10g``.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from s3vm.data.generators import gaussian_blobs, two_moons  # noqa: E402
from s3vm.data.instance import Instance  # noqa: E402
from s3vm.data.loaders import load_dataset, load_sdp_instance, sdp_rbf_sigma  # noqa: E402

SEED = 0
UCI_SETS = ("sonar", "ionosphere", "pima", "heart", "housing", "breast-cancer", "musk1", "wdbc")
# The two-dimensional SDP-S3VM instances (small files; the others are loaded from
# data/sdp-s3vm-instances with loaders.load_sdp_instance).
SDP_SETS = ("art100", "art150", "2moons")


def write_csv(instance: Instance, path: str) -> None:
    instance.to_csv(path, float_format="%.10g")


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(float(value)) if isinstance(value, float) else str(value)


def write_toml(path: str, entries: dict) -> None:
    with open(path, "w") as fh:
        for key, value in entries.items():
            fh.write(f"{key} = {toml_value(value)}\n")


def main() -> None:
    data = os.path.join(HERE, "data")

    moons = two_moons(n_per_class_labeled=2, n_unlabeled_per_class=48, noise=0.1, seed=SEED)
    write_csv(moons, os.path.join(data, "two_moons.csv"))
    write_toml(os.path.join(HERE, "two_moons.toml"), {
        "name": "two_moons",
        "description": "Two moons (Chapelle-Sindhwani-Keerthi style): 100 points in R^2, "
                       "2 labeled + 48 unlabeled per moon, noise 0.1, generators.two_moons seed 0",
        "data": "data/two_moons.csv",
        "kernel": "rbf", "sigma": 0.5, "C": 10.0, "C_star": 10.0, "bias": True,
        "balance": "count", "mu": 0.1, "nu": 1.0,
    })

    blobs = gaussian_blobs(n=12, p=2, separation=3.0, n_labeled_per_class=2, seed=SEED)
    write_csv(blobs, os.path.join(data, "blobs_small.csv"))
    write_toml(os.path.join(HERE, "blobs_small.toml"), {
        "name": "blobs_small",
        "description": "Two Gaussian blobs in R^2 (means 3 apart), 12 points, 2 labeled per class, "
                       "u = 8 (2^8 labelings: enumeration tests, LP demo); "
                       "generators.gaussian_blobs seed 0",
        "data": "data/blobs_small.csv",
        "kernel": "linear", "C": 1.0, "C_star": 1.0, "bias": True,
        "balance": "none", "mu": 0.1, "nu": 1.0,
    })

    for name in UCI_SETS:
        inst = load_dataset(name, labeled_fraction=0.1, seed=SEED)
        stem = name.replace("-", "_")
        write_csv(inst, os.path.join(data, f"{stem}_10pct.csv"))
        write_toml(os.path.join(HERE, f"{stem}.toml"), {
            "name": f"{stem}_10pct",
            "description": f"{name}: {inst.n} x {inst.p}, unscaled features, 10% of each class "
                           f"labeled (l = {inst.l}), loaders.load_dataset seed {SEED}; "
                           f"see docs/data.md",
            "data": f"data/{stem}_10pct.csv",
            "kernel": "linear", "C": 1.0, "C_star": 1.0, "bias": True,
            "balance": "count", "mu": 0.1, "nu": 1.0,
        })
        check = pd.read_csv(os.path.join(data, f"{stem}_10pct.csv"))
        assert np.array_equal(check[list(inst.feature_names)].to_numpy(float), inst.X), name

    for name in SDP_SETS:
        inst = load_sdp_instance(name, labeled_fraction=0.3, seed=SEED)
        stem = f"sdp_{name}"
        write_csv(inst, os.path.join(data, f"{stem}_30pct.csv"))
        write_toml(os.path.join(HERE, f"{stem}.toml"), {
            "name": f"{stem}_30pct",
            "description": f"SDP-S3VM standardized instance {name}: {inst.n} x {inst.p}, 30% of "
                           f"each class labeled (l = {inst.l}, our seeded draw: "
                           f"loaders.load_sdp_instance "
                           f"seed {SEED}); rbf with their default width gamma = 1/p (sigma = "
                           f"{sdp_rbf_sigma(inst.p):g}); see data/sdp-s3vm-instances/SOURCE.md",
            "data": f"data/{stem}_30pct.csv",
            "kernel": "rbf", "sigma": sdp_rbf_sigma(inst.p), "C": 1.0, "C_star": 1.0, "bias": True,
            "balance": "count", "mu": 0.1, "nu": 1.0,
        })


if __name__ == "__main__":
    main()
