"""SDP-S3VM's parameter selection (s3vm.selection): the labeled points shuffled before the folds
as their code's folds see them, and the two named conventions (their parameters.txt, their
code's defaults).

The shuffled selection is checked against an independent construction: the same instance with
its rows reordered here, selected in file order."""

from __future__ import annotations

import json

import numpy as np
import pytest

from s3vm import cli
from s3vm.data.instance import Instance
from s3vm.selection import CONVENTIONS, select_parameters
from s3vm.solvers.errors import InputError


def sorted_instance(seed=0, per_class=12, u=20):
    """Two overlapping Gaussian classes, labeled rows sorted by class (as connectionist's
    file), then the unlabeled ones."""
    rng = np.random.default_rng(seed)
    Xp = rng.normal(0.6, 1.0, size=(per_class, 3))
    Xn = rng.normal(-0.6, 1.0, size=(per_class, 3))
    Xu = rng.normal(0.0, 1.2, size=(u, 3))
    X = np.vstack([Xp, Xn, Xu])
    label = np.r_[np.ones(per_class), -np.ones(per_class), np.zeros(u)].astype(int)
    return Instance(X, label)


def reordered(instance, order):
    """The instance with its labeled rows in ``order`` (positions among the labeled rows)."""
    lab, unl = instance.labeled, instance.unlabeled
    rows = np.r_[lab[order], unl]
    return Instance(instance.X[rows], instance.label[rows])


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_shuffled_folds_equal_file_order_of_the_shuffled_rows(seed):
    instance = sorted_instance(seed=seed + 10)
    chosen = select_parameters(instance, folds=4, seed=seed)
    order = np.random.default_rng(seed).permutation(instance.labeled.size)
    expected = select_parameters(reordered(instance, order), folds=4, seed=None)
    assert (chosen.kernel, chosen.C, chosen.accuracy) == \
        (expected.kernel, expected.C, expected.accuracy)
    assert chosen.seed == seed


def test_default_is_shuffled_with_seed_0_and_file_order_stays_available():
    instance = sorted_instance(seed=3)
    default = select_parameters(instance, folds=4)
    assert default.accuracy == select_parameters(instance, folds=4, seed=0).accuracy
    # file order: each fold of a class-sorted file tests on one block of each class, which the
    # reordering check above reproduces with the identity
    identity = np.arange(instance.labeled.size)
    assert select_parameters(instance, folds=4, seed=None).accuracy == \
        select_parameters(reordered(instance, identity), folds=4, seed=None).accuracy


def test_conventions_paper_and_code():
    instance = sorted_instance(seed=5)
    l, u = instance.labeled.size, instance.u
    paper = select_parameters(instance, folds=4)
    code = select_parameters(instance, folds=4, convention="code")
    assert CONVENTIONS == {"paper": (1.0, False), "code": (0.5, True)}
    assert paper.C == code.C and paper.kernel == code.kernel
    assert paper.C_star == pytest.approx(paper.C * l / u)
    assert code.C_star == pytest.approx(0.5 * code.C * l / u)
    assert paper.options() == {} and "--mean-products" not in paper.flags()
    assert code.options() == {"mean_products": True} and code.flags().endswith("--mean-products")
    with pytest.raises(InputError, match="convention"):
        select_parameters(instance, convention="theirs")
    with pytest.raises(InputError, match="seed"):
        select_parameters(instance, seed=-1)


@pytest.mark.slow
def test_cli_select_takes_seed_file_order_and_convention(capsys):
    from s3vm.core.settings import load_instance

    shipped, _ = load_instance("sdp_art100")
    status = cli.main(["select", "sdp_art100", "--convention", "code", "--seed", "3", "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    doc = json.loads(out)
    expected = select_parameters(shipped, seed=3, convention="code")
    assert doc["C"] == expected.C and doc["C_star"] == pytest.approx(expected.C_star)
    assert doc["convention"] == "code" and doc["seed"] == 3
    assert doc["options"] == {"mean_products": True} and "--mean-products" in doc["flags"]
    status = cli.main(["select", "sdp_art100", "--file-order", "--json"])
    out, _ = capsys.readouterr()
    doc = json.loads(out)
    assert status == 0 and doc["seed"] is None
    assert doc["C"] == select_parameters(shipped, seed=None).C
