"""Benchmark: peak memory (resident set) of the scalable paths, and the memory guard's estimate.

Each run is its own child process, so its peak RSS is its own: the parent starts
``peak_memory.py --child ...`` and reads the child's ``ru_maxrss`` from ``os.wait4`` (the child
and every descendant it waited for, such as SDPA's solver process). The child draws
``gaussian_blobs(n, p=10, separation=2, 10% labeled, seed 0)``, records its resident set before
solving (interpreter, imports and data: the baseline), solves through :func:`s3vm.solve` with a
time limit and prints one JSON line (status, objective, the solve's own time). The parent kills
a child that outlives its time limit by more than a margin and reports it ``killed``.

Runs (``--runs``, default all):

  scale     sdp-lowrank, vs3vm, svm1 (linear) and sdp-lowrank rbf rank 100, at n = 10^4 and 10^5
  guard     sdp at n = 1000 and 2000 (linear): the guard's estimate (bytes per entry x n^2)
            against the measured peak
  bb-sdp    bb-sdp at n = 300 to 1500: its bytes per n^2 entry, the slope between two sizes
  estimates every dense formulation (and `s3vm select`, `sdp-lowrank --graph dense`) at three
            small sizes: the guard's estimate against the solve's growth (peak - baseline)

``--formulations`` keeps only the runs of the formulations named. Besides ``ru_maxrss`` (the
largest single process of the child's tree) the parent samples the tree's summed PSS.

    .venv/bin/python benchmarks/peak_memory.py
    .venv/bin/python benchmarks/peak_memory.py --runs guard --no-doc     # one group, no doc
    .venv/bin/python benchmarks/peak_memory.py --runs estimates --formulations bb --no-doc
    .venv/bin/python benchmarks/peak_memory.py --render runs.jsonl       # the doc from records
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchmd  # noqa: E402
from benchmd import fmt, table  # noqa: E402

P = 10
#: Seconds a child may outlive its time limit before the parent kills it: the supervisor's grace
#: plus interpreter start, imports and drawing the data.
KILL_MARGIN = 60.0

RUNS = {
    "scale": [(name, "linear", n, 240.0, {}) for name in ("sdp-lowrank", "vs3vm", "svm1")
              for n in (10_000, 100_000)]
    + [("sdp-lowrank", "rbf", n, 300.0, {"rank": 100}) for n in (10_000, 100_000)]
    # sigma = 3, about sqrt(p): at the default sigma = 1 the 10-dimensional points are nearly
    # orthogonal in the kernel's feature space and SCS did not finish in 300 s
    + [("sdp-lowrank", "rbf", n, 300.0, {"rank": 100, "sigma": 3.0}) for n in (10_000, 100_000)],
    "guard": [("sdp", "linear", n, 120.0, {}) for n in (1000, 2000)],
    "bb-sdp": [("bb-sdp", "linear", n, 120.0, {}) for n in (300, 1000, 1500)],
    # Three sizes per dense path, small enough for a shared 24 GiB machine; each estimate is
    # bytes per n^2 entry x n^2, so the three sizes check the declared scaling too. The time
    # limits let each run get past its model build into the solver, where the peak is.
    "estimates": [("sdp", k, n, 90.0, {}) for k in ("linear", "rbf") for n in (300, 600, 900)]
    # the CVXPY model of V M V' has n^2 d^2 coefficients: n = 200 at d = 40 is 1.5 GB
    + [("sdp-subspace", "rbf", n, 90.0, {"solver": "scs", "dim": 40}) for n in (100, 150, 200)]
    + [("sdp-lowrank", "linear", n, 45.0, {"graph": "dense"}) for n in (1000, 2000, 4000)]
    + [("select", "-", n, 120.0, {}) for n in (1000, 2000, 3000)]
    + [("l2-miqp", "linear", n, 45.0, {}) for n in (1000, 2000, 3000)]
    + [("l2-miqp", "rbf", n, 45.0, {}) for n in (300, 600, 900)]
    + [("sdp-subspace", "rbf", n, 45.0, {}) for n in (500, 1000, 1500)]
    + [(f, "rbf", n, 45.0, {}) for f in ("bd-mip", "vs3vm") for n in (500, 1000, 1500)]
    # The seven formulations the first measurement left out. switching forms K only under rbf
    # up to EXACT_MAX_N = 1,000 points (a factor otherwise, no n x n matrix: estimate 0);
    # rlp and svm1 expand the kernel over all n points on their l labeled rows, hence larger n;
    # bb-sdp bounds its nodes in forked processes, which the tree's PSS sum counts together.
    + [("bb", "linear", n, 45.0, {}) for n in (1000, 2000, 4000)]
    + [("bb", "rbf", n, 45.0, {}) for n in (1000, 2000, 3000)]
    + [("switching", "rbf", n, 45.0, {}) for n in (400, 700, 1000)]
    + [("bb-sdp", "linear", n, 45.0, {}) for n in (300, 500, 700)]
    + [(f, "rbf", n, 45.0, {}) for f in ("rlp", "svm1") for n in (1000, 2000, 3000)]
    + [(f, "rbf", n, 45.0, {}) for f in ("cvs3vm", "bb-mip") for n in (400, 700, 1000)],
}


#: Entries of a run's options that are settings or solve keywords (of s3vm.solve), not
#: formulation options.
SETTING_KEYS = ("sigma", "solver")


def split_options(options: dict) -> tuple[dict, dict]:
    """(formulation options, settings) of a run's options."""
    settings = {k: v for k, v in options.items() if k in SETTING_KEYS}
    return {k: v for k, v in options.items() if k not in SETTING_KEYS}, settings


def _vm_kib(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def child(formulation: str, kernel: str, n: int, time_limit: float, options: dict) -> None:
    """Draw the data, solve once, print one JSON line (the parent measures the peak)."""
    import s3vm
    from s3vm.data.generators import gaussian_blobs

    if formulation == "select":  # the parameter selection's kernels over labeled points
        instance = gaussian_blobs(n=n, p=P, separation=2.0, labeled_fraction=1.0, seed=0)
        select_child(instance)
        return
    instance = gaussian_blobs(n=n, p=P, separation=2.0, labeled_fraction=0.1, seed=0)
    baseline = _vm_kib("VmHWM")
    from s3vm.core.registry import get_formulation
    from s3vm.core.settings import Settings

    options, settings = split_options(options)
    # the memory guard's estimate for this run (bytes per n^2 entry x n^2)
    estimate = get_formulation(formulation, **options).dense_bytes_per_entry(
        Settings(kernel=kernel, **{k: v for k, v in settings.items() if k != "solver"})) * n * n
    start = time.perf_counter()
    status, objective, error, seconds, bound, nodes = None, None, None, None, None, None
    try:
        result = s3vm.solve(instance, formulation, kernel=kernel, time_limit=time_limit,
                            options=options or None, **settings)
        status, objective, seconds = result.status, result.objective, result.seconds
        bound, nodes = result.lower_bound, getattr(result, "nodes", None)
    except Exception as exc:  # reported, not raised: the figures say what happened
        status, error = "error", f"{type(exc).__name__}: {exc}"
    wall = time.perf_counter() - start
    print(json.dumps({"status": status, "objective": objective, "solve_seconds": wall,
                      "seconds": seconds, "lower_bound": bound, "nodes": nodes,
                      "baseline_kib": baseline, "estimate_bytes": estimate, "error": error}),
          flush=True)
    # Leave without joining a solve thread the time limit abandoned.
    os._exit(0)


def select_child(instance) -> None:
    """`s3vm select`'s footprint on every point labeled: the l x l rbf kernel of the labeled
    points and one fold's squared-hinge SVM (K + I/2C scaled by y y', its Cholesky factor,
    NNLS), the step whose matrices set the peak; the whole selection repeats it per fold, C and
    kernel (400 times, hours at l = 3,000 on 2 cores)."""
    import numpy as np
    from scipy.optimize import nnls  # noqa: F401  (imported before the baseline)

    from s3vm.core.kernels import kernel_matrix
    from s3vm.selection import SELECT_BYTES, l2svm_no_bias, stratified_folds

    baseline = _vm_kib("VmHWM")
    start = time.perf_counter()
    y = instance.label.astype(float)
    K = kernel_matrix(np.asarray(instance.X), None, "rbf", (P / 2.0) ** 0.5)
    train, test = stratified_folds(y, 10)[0]
    beta = l2svm_no_bias(K[np.ix_(train, train)], y[train], 1.0)
    np.sign(K[np.ix_(test, train)] @ beta)
    wall = time.perf_counter() - start
    print(json.dumps({"status": "done", "objective": None, "solve_seconds": wall,
                      "seconds": wall, "lower_bound": None, "nodes": None,
                      "baseline_kib": baseline, "estimate_bytes": SELECT_BYTES * instance.l ** 2,
                      "error": None}), flush=True)
    os._exit(0)


#: Seconds between two samples of the child's process tree.
SAMPLE_EVERY = 0.2


def _descendants(root: int) -> list:
    """``root`` and every process below it (a scan of /proc: the kernel's per-task children
    lists are not always built in)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, ()))
    return tree


def _pss_bytes(pid: int) -> int:
    """The proportional set size of ``pid`` (0 once it is gone): pages shared by the forked
    processes of a tree are counted once across the tree, not once per process."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def sample_tree(root: int, done: threading.Event, peak: list) -> None:
    """Keep in ``peak[0]`` the largest sum of PSS over ``root``'s process tree, sampled every
    :data:`SAMPLE_EVERY` s until ``done``: what the machine holds at once, where ``ru_maxrss``
    is the largest single process (bb-sdp's node processes, SDPA's child)."""
    while not done.wait(SAMPLE_EVERY):
        peak[0] = max(peak[0], sum(_pss_bytes(pid) for pid in _descendants(root)))


def measure(formulation, kernel, n, time_limit, options) -> dict:
    """Run one child; its peak RSS (wait4) and wall time, and what it printed."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", formulation, kernel, str(n),
           str(time_limit), json.dumps(options)]
    started = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load": benchmd.load()}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = []
    timer = threading.Timer(time_limit + KILL_MARGIN, lambda: (killed.append(1), proc.kill()))
    timer.start()
    done, tree_peak = threading.Event(), [0]
    sampler = threading.Thread(target=sample_tree, args=(proc.pid, done, tree_peak), daemon=True)
    sampler.start()
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status_word, usage = os.wait4(proc.pid, 0)
    done.set()
    sampler.join()
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status_word)
    wall = time.perf_counter() - start
    record = {"formulation": formulation, "kernel": kernel, "n": n, "time_limit": time_limit,
              "options": options, "wall": wall, "peak_bytes": usage.ru_maxrss * 1024,
              "tree_pss_bytes": tree_peak[0],
              "exit": proc.returncode, "killed": bool(killed), **started}
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if lines:
        record.update(json.loads(lines[-1]))
    else:
        record.update(status="killed" if killed else f"exit {proc.returncode}",
                      error=err.strip().splitlines()[-1:] or None)
    return record


def guard_estimate(record: dict) -> float:
    """The memory guard's estimate for a run, from the formulation's current declaration."""
    from s3vm.core.registry import get_formulation
    from s3vm.core.settings import Settings

    if record["formulation"] == "select":
        from s3vm.selection import SELECT_BYTES

        return SELECT_BYTES * record["n"] ** 2

    from s3vm.core.formulation import DENSE_BASE_BYTES
    from s3vm.solvers.registry import get_backend

    options, settings = split_options(record["options"])
    formulation = get_formulation(record["formulation"], **options)
    solver = settings.pop("solver", None) or formulation.default_solver()
    backend = get_backend(solver, formulation.problem_class)
    per_entry = formulation.dense_bytes_per_entry(Settings(kernel=record["kernel"], **settings),
                                                  backend)
    return DENSE_BASE_BYTES + per_entry * record["n"] ** 2 if per_entry > 0 else 0


def mb(value) -> str:
    return "-" if value is None else f"{value / 2**20:,.0f}"


def _ratio(record: dict, key: str = "peak_bytes") -> str:
    """The guard's estimate over the solve's growth (``key``'s peak - baseline): at least 1
    when the estimate is safe."""
    if not record.get(key):
        return "-"
    growth = record[key] - record.get("baseline_kib", 0) * 1024
    if not record.get("estimate_bytes") or not record.get("baseline_kib") or growth <= 0:
        return "-"
    return f"{record['estimate_bytes'] / growth:.2f}"


def render(records: list, info: dict, load: str, command: Optional[str] = None) -> str:
    body = [
        "Peak resident set (RSS) of one solve per child process (`ru_maxrss` from `os.wait4`: the",
        "child and the solver processes it waited for), on `gaussian_blobs(n, p=10, separation=2,",
        "10% labeled, seed 0)`, through `s3vm.solve` with the time limit given. *Baseline* is the",
        "child's peak before solving (interpreter, imports, data); *peak* minus baseline is the",
        "solve's own growth. *Solve* is the result's `seconds` (its clock, model building",
        "included); the child's wall time adds the interpreter, the imports inside `s3vm.solve`",
        "and drawing the data. A run past its limit by more than 60 s is killed. *Tree PSS* is",
        "the largest sum of the proportional set sizes of the child and its descendants, sampled",
        f"every {SAMPLE_EVERY} s (forked processes counted together, their shared pages once).",
        "",
        f"- command: {command or '`' + benchmd.command_line() + '`'}",
        *benchmd.machine_lines(info),
        f"- load before the runs (`/proc/loadavg`): {load} (the machine is shared; wall times",
        "  are inflated by other processes, memory figures are not)",
        "",
    ]
    rows = []
    for r in records:
        r["estimate_bytes"] = guard_estimate(r)
        opts = ", ".join(f"{k}={v}" for k, v in r["options"].items())
        rows.append([r["formulation"], r["kernel"] + (f" ({opts})" if opts else ""),
                     f"{r['n']:,}", fmt(r["time_limit"], 0), r.get("status"),
                     fmt(r.get("seconds"), 1), fmt(r["wall"], 1), mb(r.get("baseline_kib", 0) * 1024
                                           if r.get("baseline_kib") else None),
                     mb(r["peak_bytes"]),
                     mb(r["peak_bytes"] - r["baseline_kib"] * 1024
                        if r.get("baseline_kib") else None),
                     mb(r.get("tree_pss_bytes")),
                     mb(r.get("estimate_bytes")) if r.get("estimate_bytes") else "-",
                     _ratio(r), _ratio(r, "tree_pss_bytes")])
    body.append(table(["formulation", "kernel", "n", "limit (s)", "status", "solve (s)",
                       "child's wall (s)",
                       "baseline (MiB)", "peak (MiB)", "peak - baseline (MiB)",
                       "tree PSS (MiB)", "guard's estimate (MiB)", "estimate / growth",
                       "estimate / tree growth"], rows))
    errors = [f"- {r['formulation']} {r['kernel']} n = {r['n']:,}: {r['error']}"
              for r in records if r.get("error")]
    if errors:
        body += ["", "Errors:", "", *errors]
    return "\n".join(body)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", nargs="+", choices=sorted(RUNS), default=list(RUNS))
    parser.add_argument("--formulations", nargs="+", metavar="NAME",
                        help="only the runs of these formulations (of the groups chosen)")
    parser.add_argument("--no-doc", action="store_true", help="print, do not write the doc")
    parser.add_argument("--json", help="also append every record to this JSON-lines file")
    parser.add_argument("--render", help="write the doc from the records of this JSON-lines "
                        "file (earlier --json runs) instead of running")
    parser.add_argument("--load", help="with --render: the load to state (/proc/loadavg then)")
    parser.add_argument("--command", help="with --render: the commands that made the records")
    parser.add_argument("--date", help="with --render: the date of the runs")
    args = parser.parse_args(argv)
    with open("/proc/loadavg") as fh:
        load = " ".join(fh.read().split()[:3])
    info = benchmd.machine()
    records = []
    if args.render:
        with open(args.render) as fh:
            records = [json.loads(line) for line in fh if line.strip()]
        load = args.load or load
        info["date"] = args.date or info["date"]
        args.runs = []
    for group in args.runs:
        for spec in RUNS[group]:
            if args.formulations and spec[0] not in args.formulations:
                continue
            record = measure(*spec)
            records.append(record)
            print(json.dumps(record), flush=True)
            if args.json:
                with open(args.json, "a") as fh:
                    fh.write(json.dumps(record) + "\n")
    text = render(records, info, load, args.command)
    if args.no_doc:
        print(text)
    else:
        benchmd.write_section("peak-memory", "Peak memory", text)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        formulation, kernel, n, limit, options = sys.argv[2:7]
        child(formulation, kernel, int(n), float(limit), json.loads(options))
    else:
        sys.exit(main())
