"""The fuzz campaign: malformed and edge-case inputs through the command line and
the Python API, for every formulation family.

Every input must end in exit 0 with a valid result or exit 2 with one line ``s3vm: error: ...``
(the API: a valid Result or an S3VMError): never a traceback, a hang, a NaN objective, labels of
the wrong length or a partial output file (tests/contract.py states the checks). The cases:

- ``DATA``: malformed and edge-case CSV files (empty, header only, BOM, CRLF, other separators,
  repeated columns, labels 0.5 / "+1" / "yes" / blank, huge and tiny values, NaN and infinity
  spellings, one labeled point per class, no unlabeled point, constant features, duplicate
  points with opposite labels, 1,000 features, non-UTF-8 bytes, a directory, ...), each solved
  by two formulations (in turn, so that every formulation meets malformed data);
- ``EDGE``: the valid edge cases among them, solved by every formulation;
- ``TOML``: instance files with missing keys, wrong types, unknown keys, a missing, a
  directory or a self-referencing CSV;
- ``OPTIONS``: extreme, unknown and repeated options (C = 0 or 1e12, sigma = 0 or 1e-300,
  positives < 0 or > u or non-integer, time limit 0 / nan / inf, dim 0, rank > n, ...), each
  on the formulations that take it;
- ``API``: the same kinds of mistakes through ``s3vm.api`` and ``Instance``;
- a hypothesis property over random small tables.

The normal run keeps the campaign under two minutes (every solve gets a short time limit); the
long profile (``S3VM_FUZZ=long``) draws many more random tables:
``S3VM_FUZZ=long pytest -n 2 tests/test_fuzz.py``. docs/reliability.md records the figures.
"""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from s3vm import api, cli
from s3vm.core.registry import FORMULATIONS
from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.solvers.errors import S3VMError
from s3vm.solvers.registry import installed_solvers
from s3vm.solvers.results import Result

from contract import BLOBS, check_run, leftovers

LONG = os.environ.get("S3VM_FUZZ") == "long"
HANG_SECONDS = 60  # a case that runs longer is a hang
NAMES = [n for n in FORMULATIONS if n != "l2-miqp" or "scip" in installed_solvers("miqp")]
# Per formulation: options that make it run on a 12-point instance (bb-sdp has no bias).
NEEDS = {"bb-sdp": ["--no-bias"], "cvs3vm": ["--label-fraction", "0.5"]}
SOLVE_LIMIT = "5"  # every fuzz solve: a malformed input must not make a long run

BLOBS_ROWS = [
    (-2.165194673, 0.3515100701, -1, -1), (-1.628534663, 1.366463471, 0, -1),
    (0.7962647642, -1.265421471, 0, 1), (-2.745910947, -0.7322673547, 0, -1),
    (-2.044258983, -0.3163001564, 0, -1), (-3.825030775, -0.2187916639, -1, -1),
    (-1.088369464, 1.042513369, 0, -1), (0.9643306268, 0.3615950549, 0, 1),
    (2.804000045, 0.9470809631, 0, 1), (0.8767255375, 0.04132597935, 1, 1),
    (1.625730221, -0.1321048633, 1, 1), (2.14042265, 0.1049001172, 0, 1),
]


def table(rows=BLOBS_ROWS, header="x1,x2,label,truth", sep=",", newline="\n",
          fmt=lambda v: repr(v) if isinstance(v, float) else str(v)) -> bytes:
    lines = [header] + [sep.join(fmt(v) for v in row) for row in rows]
    return (newline.join(lines) + newline).encode()


def replace_cell(row_index: int, column: int, text: str) -> bytes:
    rows = [list(map(str, r)) for r in BLOBS_ROWS]
    rows[row_index][column] = text
    return table(rows, fmt=str)


# -- data files ------------------------------------------------------------------------------
DATA = {
    "empty": b"",
    "blank-lines": b"\n\n\n",
    "header-only": b"x1,x2,label,truth\n",
    "header-only-crlf": b"x1,x2,label\r\n",
    "bom": b"\xef\xbb\xbf" + table(),
    "crlf": table(newline="\r\n"),
    "cr-only": table(newline="\r"),
    "semicolon": table(header="x1;x2;label;truth", sep=";"),
    "tab": table(header="x1\tx2\tlabel\ttruth", sep="\t"),
    "pipe": table(header="x1|x2|label|truth", sep="|"),
    "spaces-after-commas": table(header="x1, x2, label, truth", sep=", "),
    "quoted": table(fmt=lambda v: f'"{v}"'),
    "duplicate-truth": table([r + (r[3],) for r in BLOBS_ROWS], "x1,x2,label,truth,truth"),
    "duplicate-label": table([r + (r[2],) for r in BLOBS_ROWS], "x1,x2,label,truth,label"),
    "duplicate-feature": table([(r[0],) + r for r in BLOBS_ROWS], "x1,x1,x2,label,truth"),
    "no-label-column": table([r[:2] + r[3:] for r in BLOBS_ROWS], "x1,x2,truth"),
    "only-label": table([(r[2],) for r in BLOBS_ROWS], "label"),
    "label-half": replace_cell(0, 2, "0.5"),
    "label-plus-one": replace_cell(9, 2, "+1"),
    "label-yes": replace_cell(9, 2, "yes"),
    "label-blank": replace_cell(9, 2, ""),
    "label-two": replace_cell(9, 2, "2"),
    "label-minus-zero": replace_cell(1, 2, "-0"),
    "label-float-one": replace_cell(9, 2, "1.0"),
    "truth-zero": replace_cell(1, 3, "0"),
    "truth-blank": replace_cell(1, 3, ""),
    "feature-blank": replace_cell(2, 0, ""),
    "feature-text": replace_cell(2, 0, "abc"),
    "feature-comma-number": replace_cell(2, 0, '"1,5"'),
    "feature-hex": replace_cell(2, 0, "0x10"),
    "nan": replace_cell(2, 0, "nan"),
    "NaN": replace_cell(2, 0, "NaN"),
    "NA": replace_cell(2, 0, "NA"),
    "null": replace_cell(2, 0, "null"),
    "inf": replace_cell(2, 0, "inf"),
    "minus-inf": replace_cell(2, 0, "-inf"),
    "Infinity": replace_cell(2, 0, "Infinity"),
    "1e999": replace_cell(2, 0, "1e999"),
    "huge-1e300": table([(r[0] * 1e300, r[1] * 1e300) + r[2:] for r in BLOBS_ROWS]),
    "huge-1e16": table([(r[0] * 1e16, r[1]) + r[2:] for r in BLOBS_ROWS]),
    "tiny-1e-300": table([(r[0] * 1e-300, r[1] * 1e-300) + r[2:] for r in BLOBS_ROWS]),
    "mixed-scale": table([(r[0] * 1e12, r[1] * 1e-12) + r[2:] for r in BLOBS_ROWS]),
    "subnormal": table([(r[0] * 1e-310, r[1]) + r[2:] for r in BLOBS_ROWS]),
    "ragged-long-row": table(fmt=str) + b"1,2,0,1,7\n",
    "ragged-short-row": table(fmt=str) + b"1,2\n",
    "trailing-comma": b"x1,x2,label,\n1,2,1,\n2,1,-1,\n3,3,0,\n",
    "non-utf8": b"x1,x2,label\n1,2,1\n2,\xff\xfe,-1\n3,3,0\n",
    "latin1-header": "x\u00e9,x2,label\n1,2,1\n2,1,-1\n3,3,0\n".encode("latin-1"),
    "utf16": "x1,x2,label\n1,2,1\n2,1,-1\n3,3,0\n".encode("utf-16"),
    "binary": bytes(range(256)) * 4,
    "no-labeled": table([r[:2] + (0, r[3]) for r in BLOBS_ROWS]),
    "one-class-labeled": table([r[:2] + ((1 if r[2] else 0), r[3]) for r in BLOBS_ROWS]),
    "one-row": b"x1,label\n1,1\n",
    "group-column-text": b"x1,label,group\n1,1,a\n2,-1,b\n3,0,c\n",
    "group-contradictory": b"x1,label,group\n1,1,1\n2,-1,1\n3,0,0\n4,0,2\n",
    "group-fractional": b"x1,label,group\n1,1,0.5\n2,-1,0\n3,0,0\n",
    "long-column-name": table(header="x" * 5000 + ",x2,label,truth"),
    "unicode-names": "\u03b1,\u03b2,label,truth\n".encode() + table().split(b"\n", 1)[1],
}

rng = np.random.default_rng(14)
_duplicated = [r for r in BLOBS_ROWS] + [(BLOBS_ROWS[9][0], BLOBS_ROWS[9][1], -1, -1)]
# Valid edge cases: solved by every formulation (exit 0 with a valid result, or exit 2 when a
# formulation cannot take them: no unlabeled point, say).
EDGE = {
    "one-labeled-per-class": table([r[:2] + ((r[2] if i in (0, 9) else 0), r[3])
                                    for i, r in enumerate(BLOBS_ROWS)]),
    "no-unlabeled": table([r[:2] + (r[3], r[3]) for r in BLOBS_ROWS]),
    "constant-features": table([(1.0, 2.0) + r[2:] for r in BLOBS_ROWS]),
    "duplicate-points-opposite-labels": table(_duplicated),
    "all-points-equal-unlabeled": table([(r[0], r[1], r[2], r[3]) if r[2] else (0.5, 0.5, 0, r[3])
                                         for r in BLOBS_ROWS]),
    "1000-features": table([tuple(rng.standard_normal(1000).round(6)) + r[2:]
                            for r in BLOBS_ROWS],
                           ",".join(f"f{j}" for j in range(1000)) + ",label,truth"),
    "one-unlabeled": table([r[:2] + ((r[2] or r[3]) if i != 1 else 0, r[3])
                            for i, r in enumerate(BLOBS_ROWS)]),
    "tiny-values": table([(r[0] * 1e-8, r[1] * 1e-8) + r[2:] for r in BLOBS_ROWS]),
    "integer-features": table([(int(r[0] * 10), int(r[1] * 10)) + r[2:] for r in BLOBS_ROWS]),
}

TOML = {
    "missing-data": "kernel = \"linear\"\n",
    "empty": "",
    "not-toml": "data = \n",
    "data-int": "data = 5\n",
    "data-list": "data = [\"data.csv\"]\n",
    "data-empty": "data = \"\"\n",
    "data-missing-file": "data = \"nowhere.csv\"\n",
    "data-directory": "data = \".\"\n",
    "data-self": "data = \"inst.toml\"\n",
    "unknown-key": "data = \"data.csv\"\nkernal = \"rbf\"\n",
    "kernel-int": "data = \"data.csv\"\nkernel = 5\n",
    "kernel-unknown": "data = \"data.csv\"\nkernel = \"poly\"\n",
    "C-string": "data = \"data.csv\"\nC = \"1\"\n",
    "C-negative": "data = \"data.csv\"\nC = -1.0\n",
    "C-nan": "data = \"data.csv\"\nC = nan\n",
    "C-inf": "data = \"data.csv\"\nC = inf\n",
    "sigma-zero": "data = \"data.csv\"\nkernel = \"rbf\"\nsigma = 0.0\n",
    "bias-no": "data = \"data.csv\"\nbias = \"no\"\n",
    "bias-int": "data = \"data.csv\"\nbias = 1\n",
    "hard-margin-no": "data = \"data.csv\"\nhard_margin = \"no\"\n",
    "balance-maybe": "data = \"data.csv\"\nbalance = \"maybe\"\n",
    "positives-float": "data = \"data.csv\"\nbalance = \"count\"\npositives = 2.5\n",
    "positives-negative": "data = \"data.csv\"\nbalance = \"count\"\npositives = -1\n",
    "positives-string": "data = \"data.csv\"\nbalance = \"count\"\npositives = \"all\"\n",
    "name-int": "data = \"data.csv\"\nname = 5\n",
    "table-section": "data = \"data.csv\"\n[settings]\nC = 1\n",
    "mu-table": "data = \"data.csv\"\nmu = {a = 1}\n",
    "valid": "data = \"data.csv\"\nkernel = \"rbf\"\nsigma = 1.0\nbalance = \"count\"\n",
}

# (flags, formulations that take them): extreme, unknown and repeated options
OPTIONS = [
    (["--C", "0"], ["bb", "sdp", "switching", "l2-miqp"]),
    (["--C", "1e12"], ["bb", "sdp", "switching", "bb-sdp", "l2-miqp", "sdp-lowrank"]),
    (["--C", "-1"], ["bb"]),
    (["--C", "nan"], ["sdp"]),
    (["--C", "inf"], ["switching"]),
    (["--C-star", "0"], ["bb", "sdp"]),
    (["--C", "1e-12"], ["bb", "sdp-subspace"]),
    (["--kernel", "rbf", "--sigma", "0"], ["vs3vm", "bb"]),
    (["--kernel", "rbf", "--sigma", "1e-300"], ["bb", "vs3vm", "sdp", "sdp-lowrank",
                                                "switching", "l2-miqp"]),
    (["--kernel", "rbf", "--sigma", "1e-100"], ["bb", "sdp", "bd-mip"]),
    (["--kernel", "rbf", "--sigma", "1e300"], ["bb", "sdp", "vs3vm", "sdp-lowrank"]),
    (["--kernel", "rbf", "--sigma", "nan"], ["bb"]),
    (["--kernel", "rbf", "--sigma", "-1"], ["sdp"]),
    (["--balance", "count", "--positives", "-1"], ["bb", "bd-mip", "sdp", "bb-mip"]),
    (["--balance", "count", "--positives", "9"], ["bb", "bd-mip", "sdp", "bb-mip",
                                                  "sdp-lowrank", "l2-miqp"]),
    (["--balance", "count", "--positives", "2.5"], ["bb"]),
    (["--balance", "count", "--positives", "0"], ["bb", "sdp", "bd-mip", "switching"]),
    (["--balance", "count", "--positives", "8"], ["bb-mip", "sdp-subspace", "l2-miqp"]),
    (["--positives", "3"], ["bb"]),
    (["--time-limit", "0"], ["vs3vm", "bb", "sdp"]),
    (["--time-limit", "-1"], ["rlp"]),
    (["--time-limit", "nan"], ["bd-mip", "sdp-lowrank"]),
    (["--time-limit", "inf"], ["svm1", "bb"]),
    (["--time-limit", "1e-9"], ["vs3vm", "bd-mip", "bb", "sdp", "switching", "l2-miqp",
                                "sdp-subspace"]),
    (["--dim", "0"], ["sdp-subspace", "sdp-lowrank"]),
    (["--dim", "1000"], ["sdp-subspace", "sdp-lowrank"]),
    (["--dim", "1"], ["sdp-subspace", "sdp-lowrank"]),
    (["--rank", "13"], ["sdp-lowrank"]),
    (["--rank", "0"], ["sdp-lowrank"]),
    (["--kernel", "rbf", "--rank", "1"], ["sdp-lowrank"]),
    (["--max-lps", "0"], ["vs3vm", "cvs3vm"]),
    (["--max-lps", "1"], ["vs3vm"]),
    (["--clusters", "0"], ["cvs3vm"]),
    (["--clusters", "100"], ["cvs3vm"]),
    (["--label-fraction", "0"], ["cvs3vm"]),
    (["--label-fraction", "1.5"], ["cvs3vm"]),
    (["--label-fraction", "1"], ["cvs3vm"]),
    (["--node-limit", "0"], ["bb", "bb-mip"]),
    (["--node-limit", "1"], ["bb", "bb-mip", "bb-sdp"]),
    (["--gap", "1"], ["bb"]),
    (["--gap", "0.5"], ["bb-mip"]),
    (["--abs-gap", "-1"], ["bb"]),
    (["--log-every", "-1"], ["bb"]),
    (["--tree", "/nonexistent/dir/tree.graphml"], ["bb"]),
    (["--working-set", "-1"], ["sdp-lowrank"]),
    (["--working-set", "5"], ["sdp-lowrank"]),
    (["--rounding", "eigenvector"], ["sdp", "sdp-subspace", "sdp-lowrank"]),
    (["--lp-form", "dual"], ["rlp", "vs3vm"]),
    (["--form", "sos1"], ["l2-miqp"]),
    (["--hard-margin"], ["sdp", "sdp-lowrank", "sdp-subspace"]),
    (["--mu", "0"], ["bd-mip", "bb-mip", "vs3vm"]),
    (["--mu", "1e12"], ["vs3vm", "svm1"]),
    (["--nu", "0"], ["vs3vm", "bd-mip"]),
    (["--solver", "nonexistent"], ["rlp", "sdp"]),
    (["--solver", "scip"], ["sdp"]),
    (["--solver", "scs"], ["bb"]),
    (["--solver", "builtin"], ["bb", "rlp"]),
    (["--profile", "/nonexistent.toml"], ["rlp"]),
    (["--frobnicate"], ["rlp"]),
    (["--C", "1", "--C", "2"], ["bb"]),
    (["--kernel", "rbf", "--kernel", "linear"], ["sdp"]),
    (["--formulation", "rlp"], ["svm1"]),
    (["--no-bias"], ["rlp", "bb"]),
    (["--scale", "minmax"], ["bb", "sdp", "vs3vm"]),
    (["--scale", "standard"], ["bd-mip", "sdp-lowrank"]),
    # (--verbose: tests/test_stdout.py checks the solvers' logs in a real process, where they
    # go to stderr; in-process, Python-level logs would land in the test's capture of stdout)
    (["--verbose"], ["bd-mip"]),
]


def cases():
    """(id, argv-builder) of every command-line case; each builder takes the tmp folder."""
    out = []
    for k, (name, content) in enumerate(sorted(DATA.items())):
        for j in (0, 1):
            form = NAMES[(2 * k + j) % len(NAMES)]
            out.append((f"data-{name}-{form}", "data", name, form, []))
    for name in sorted(EDGE):
        for form in NAMES:
            out.append((f"edge-{name}-{form}", "edge", name, form, []))
    for k, (name, _) in enumerate(sorted(TOML.items())):
        form = NAMES[k % len(NAMES)]
        out.append((f"toml-{name}-{form}", "toml", name, form, []))
    for flags, forms in OPTIONS:
        for form in forms:
            out.append((f"option-{'_'.join(flags)}-{form}", "option", None, form, flags))
    return out


CASES = cases()


def test_the_campaign_has_at_least_300_command_line_inputs():
    assert len(CASES) >= 300, len(CASES)
    assert {case[3] for case in CASES} == set(NAMES)


class Hang(Exception):
    pass


def run_main(capsys, argv, seconds=HANG_SECONDS):
    """``s3vm ARGV`` in-process, with a watchdog: a case that runs longer is a hang."""
    timer = None
    if threading.current_thread() is threading.main_thread():
        def alarm(signum, frame):
            raise Hang(f"no answer within {seconds} s: {argv}")

        previous = signal.signal(signal.SIGALRM, alarm)
        signal.alarm(seconds)
        timer = previous
    try:
        status = cli.main([str(a) for a in argv])
    finally:
        if timer is not None:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, timer)
    out, err = capsys.readouterr()
    return status, out, err


def prepare(tmp_path, kind, name):
    """The data argument of a case (a file written under tmp_path)."""
    data = tmp_path / "data.csv"
    data.write_bytes(table())
    if kind == "data":
        if name == "directory":
            return str(tmp_path)
        data.write_bytes(DATA[name])
        return str(data)
    if kind == "edge":
        data.write_bytes(EDGE[name])
        return str(data)
    if kind == "toml":
        toml = tmp_path / "inst.toml"
        toml.write_text(TOML[name])
        return str(toml)
    return BLOBS


#: The formulations whose cases take seconds (the SDPs, the MIQP and the exact searches: 0.4 to 5 s
#: a case on the shared machine, against 0.1 s for the others): their cases are marked slow, so
#: that `make test-fast` keeps the campaign's other 150.
SLOW_FORMULATIONS = {"sdp", "sdp-subspace", "sdp-lowrank", "l2-miqp", "bd-mip", "bb", "bb-mip",
                     "bb-sdp"}


@pytest.mark.solver
@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow)
                                  if c[3] in SLOW_FORMULATIONS else c for c in CASES],
                         ids=[c[0] for c in CASES])
def test_command_line_input(capsys, tmp_path, case):
    _, kind, name, form, flags = case
    data = prepare(tmp_path, kind, name)
    before = leftovers(tmp_path)
    argv = ["solve", data, "-f", form, "--json", "-q"]
    if "--time-limit" not in flags:
        argv += ["--time-limit", SOLVE_LIMIT]
    needs = NEEDS.get(form, [])
    if needs and needs[0] not in flags:
        argv += needs
    argv += flags
    status, out, err = run_main(capsys, argv)
    u = None
    if status == 0:
        try:
            from s3vm.core.settings import load_instance

            u = load_instance(data)[0].u
        except S3VMError:
            pass
    check_run(status, out, err, u=u, formulation=form)
    assert leftovers(tmp_path) == before  # no partial or temporary file


def test_a_directory_as_data(capsys, tmp_path):
    status, out, err = run_main(capsys, ["solve", str(tmp_path), "-f", "rlp", "--json"])
    check_run(status, out, err)
    assert status == 2 and "directory" in err


@pytest.mark.parametrize("form", ["rlp", "bd-mip", "l2-miqp", "sdp"])
def test_export_inputs(capsys, tmp_path, form):
    if form == "l2-miqp" and "scip" not in installed_solvers("miqp"):
        pytest.skip("needs SCIP")
    data = tmp_path / "data.csv"
    data.write_bytes(DATA["nan"])
    for target, fmt in ((tmp_path / "a.lp", None), (tmp_path / "b.xyz", None),
                        (tmp_path / "c.mps", "cbf"), (tmp_path / "no" / "d.lp", None)):
        status, out, err = run_main(capsys, ["export", str(data), "-f", form, "-o",
                                             str(target)] + (["--format", fmt] if fmt else []))
        check_run(status, out, err, json_mode=False)
        assert not target.exists()
    assert leftovers(tmp_path) == ["data.csv"]


# -- the Python API --------------------------------------------------------------------------
def _instance(**changes):
    X = np.array([r[:2] for r in BLOBS_ROWS])
    label = np.array([r[2] for r in BLOBS_ROWS])
    fields = dict(X=X, label=label)
    fields.update(changes)
    return fields


API_INSTANCES = {
    "complex-X": _instance(X=np.array([r[:2] for r in BLOBS_ROWS]) + 1j),
    "text-X": _instance(X=np.array([[str(v) for v in r[:2]] for r in BLOBS_ROWS])),
    "object-X": _instance(X=np.array([[object(), 1.0]] * 12, dtype=object)),
    "3d-X": _instance(X=np.zeros((12, 2, 2))),
    "1d-X": _instance(X=np.zeros(12)),
    "empty-X": _instance(X=np.zeros((0, 2)), label=np.zeros(0)),
    "no-columns": _instance(X=np.zeros((12, 0))),
    "nan-X": _instance(X=np.full((12, 2), np.nan)),
    "inf-X": _instance(X=np.full((12, 2), np.inf)),
    "ragged-list": _instance(X=[[1.0, 2.0], [3.0]] + [[0.0, 0.0]] * 10),
    "label-two": _instance(label=np.array([2] + [0] * 11)),
    "label-half": _instance(label=np.array([0.5] + [0] * 11)),
    "label-nan": _instance(label=np.array([np.nan] + [0] * 11)),
    "label-short": _instance(label=np.array([1, -1])),
    "label-text": _instance(label=np.array(["1"] * 12)),
    "label-complex": _instance(label=np.array([1, -1] + [0] * 10, dtype=complex)),
    "truth-zero": _instance(truth=np.zeros(12)),
    "group-nan": _instance(group=np.array([np.nan] * 12)),
    "names-wrong-count": _instance(feature_names=("a",)),
    "float32-X": _instance(X=np.array([r[:2] for r in BLOBS_ROWS], dtype=np.float32)),
    "bool-X": _instance(X=np.array([[r[0] > 0, r[1] > 0] for r in BLOBS_ROWS])),
    "int-labels": _instance(label=np.array([r[2] for r in BLOBS_ROWS], dtype=np.int64)),
}

API_CALLS = {
    "formulation-int": lambda: api.solve(BLOBS, 5),
    "formulation-unknown": lambda: api.solve(BLOBS, "svm3"),
    "settings-dict": lambda: api.solve(BLOBS, "rlp", settings={"C": 1}),
    "settings-list": lambda: api.solve(BLOBS, "rlp", settings=[1]),
    "options-not-dict": lambda: api.solve(BLOBS, "vs3vm", options=[("max_lps", 2)]),
    "option-unknown": lambda: api.solve(BLOBS, "vs3vm", options={"max_lp": 2}),
    "option-wrong-type": lambda: api.solve(BLOBS, "vs3vm", options={"max_lps": "2"}),
    "setting-unknown": lambda: api.solve(BLOBS, "rlp", gamma=1),
    "setting-wrong-type": lambda: api.solve(BLOBS, "sdp", C="1"),
    "setting-float32": lambda: api.solve(BLOBS, "sdp", C=np.float32(2)),
    "setting-numpy-bool": lambda: api.solve(BLOBS, "bb", bias=np.bool_(False)),
    "time-limit-string": lambda: api.solve(BLOBS, "rlp", time_limit="3"),
    "time-limit-nan": lambda: api.solve(BLOBS, "rlp", time_limit=float("nan")),
    "time-limit-zero": lambda: api.solve(BLOBS, "rlp", time_limit=0),
    "time-limit-negative": lambda: api.solve(BLOBS, "bb", time_limit=-5),
    "solver-int": lambda: api.solve(BLOBS, "rlp", solver=3),
    "profile-missing": lambda: api.solve(BLOBS, "rlp", profile="/nope.toml"),
    "data-int": lambda: api.solve(12, "rlp"),
    "data-none": lambda: api.solve(None, "rlp"),
    "data-missing": lambda: api.solve("/nonexistent/data.csv", "rlp"),
    "compare-empty": lambda: api.compare(BLOBS, []),
    "compare-twice": lambda: api.compare(BLOBS, ["rlp", "rlp"]),
    "compare-unknown": lambda: api.compare(BLOBS, ["rlp", "nope"]),
    "compare-per-formulation-unknown": lambda: api.compare(BLOBS, ["rlp"],
                                                           per_formulation={"bb": {"C": 1}}),
    "export-format": lambda: api.export(BLOBS, "rlp", "/tmp/x.unknown"),
    "export-directory": lambda: api.export(BLOBS, "rlp", "/tmp", fmt="lp"),
    "export-sdp-lp": lambda: api.export(BLOBS, "sdp", "/tmp/s3vm-fuzz.lp", fmt="lp"),
    "settings-nan": lambda: Settings(C=float("nan")),
    "settings-kernel": lambda: Settings(kernel="poly"),
    "settings-positives": lambda: Settings(positives=1.5),
}


@pytest.mark.solver
@pytest.mark.parametrize("name", list(API_INSTANCES))
def test_api_instance_input(name):
    try:
        instance = Instance(**API_INSTANCES[name])
    except S3VMError:
        return
    for form in ("rlp", "bb", "sdp"):
        try:
            result = api.solve(instance, form, time_limit=5)
        except S3VMError:
            continue
        check_api_result(result, instance.u)


@pytest.mark.solver
@pytest.mark.parametrize("name", list(API_CALLS))
def test_api_call(name):
    try:
        outcome = API_CALLS[name]()
    except S3VMError:
        return
    if isinstance(outcome, Result):
        check_api_result(outcome, 8)


def check_api_result(result: Result, u: int) -> None:
    from contract import check_result_object

    check_result_object(result.to_dict(), u=u)
    if result.objective is not None:
        assert np.isfinite(result.objective)


# -- random tables ---------------------------------------------------------------------------
CELL = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64).map(repr),
    st.integers(-3, 3).map(str),
    st.sampled_from(["", "nan", "inf", "-inf", "1e999", "1e-320", "+1", "yes", " ", "\"1\"",
                     "0x1", "1,0", "1e308", "-0", "\u00e9"]),
)
LABEL = st.sampled_from(["1", "-1", "0", "0", "0", "+1", "0.5", "", "2", "1.0", "-1.0"])


@st.composite
def tables(draw):
    n = draw(st.integers(1, 8))
    p = draw(st.integers(1, 3))
    header = [f"x{j}" for j in range(p)] + ["label"]
    if draw(st.booleans()):
        header.append("truth")
    rows = []
    for _ in range(n):
        row = [draw(CELL) for _ in range(p)] + [draw(LABEL)]
        if "truth" in header:
            row.append(draw(st.sampled_from(["1", "-1", "0", ""])))
        rows.append(",".join(row))
    return "\n".join([",".join(header)] + rows) + "\n"


@pytest.mark.slow
@hsettings(max_examples=2000 if LONG else 40, deadline=None, derandomize=not LONG,
           suppress_health_check=list(HealthCheck))
@given(text=tables(), form=st.sampled_from(["rlp", "svm1", "vs3vm", "bb", "sdp-lowrank"]))
def test_random_tables(capsys, tmp_path_factory, text, form):
    folder = tmp_path_factory.mktemp("random")
    path = folder / "data.csv"
    path.write_text(text, encoding="utf-8")
    status, out, err = run_main(capsys, ["solve", str(path), "-f", form, "--json", "-q",
                                         "--time-limit", SOLVE_LIMIT])
    check_run(status, out, err, formulation=form)
