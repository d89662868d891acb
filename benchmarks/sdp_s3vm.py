"""The exact solver in SDP-S3VM's setting (Piccialli, Schwiddessen and Sudoso 2024) on their eleven
instances, and the count balance's root bounds (docs/benchmarks/exact.md and sdp.md; the earlier
runs in docs/changelog.md).

Part ``mean`` (their problem): each instance of ``load_sdp_instance`` with 30% of each class
labeled (``rounding="floor"``, their floor(0.3 n_c); our seeded draws, seeds 0-2 for n <= 300 and
seed 0 above), kernel and C from their cross-validation on the labeled points
(:func:`s3vm.selection.select_parameters`), C* = C l / u, no bias, the mean balance, relative gap
1e-3. Per run, one at a time:

- ``bb-sdp`` (SDP-S3VM's bound, SDPA) with ``--time-limit`` (n <= 300) or ``--time-limit-large``;
- on seed 0 only, ``bb --no-bias`` (the SVM bound of Chapelle, Sindhwani and Keerthi) with
  ``--bb-limit``;
- on seed 0 only, and with ``--old PATH`` (a tree holding the previous code's packages as
  ``PATH/s3vm``), the root of the previous ``bb-sdp`` (the De Bie-Cristianini relaxation on
  K + diag(1/(2 C_i)), SCS) with ``--balance none`` (it has no mean balance; its bound is still a
  lower bound of the mean-balanced optimum), one node, ``--old-limit``.

Part ``count`` (the project's default problem): art100 and art150, seed 0, 30% labeled
(half-up rounding, as the earlier count benchmarks), rbf with sigma = 1 (gamma = 1/p, p = 2),
C = C* = 1, no bias, the count at the true number of unlabeled positives; root bounds (one node)
of ``bb-sdp`` with ``--count-bound none`` and ``lifted``, of ``bb --no-bias``, and of the previous
``bb-sdp`` (with ``--old``); the root gap is taken against the best labeling any of these runs (or
the ``--count-full`` run, a full ``bb-sdp`` search of art150 with that limit) found.

Part ``mean`` can be run in pieces into one file (``--mean-instances`` a few at a time, each piece
on a quiet machine, with ``--resume``, which skips the runs the file already holds).

With ``--previous PATH`` (a tree holding the previous code's packages as ``PATH/s3vm``), part
``mean`` also runs the previous code's ``bb-sdp`` on each seed 0 search, same problem and limit,
one after the other; ``table`` then prints the two side by side.

Part ``mean`` runs each ``bb-sdp`` under both conventions of the selection (``--conventions
paper,code``: their parameters.txt, C* = C l / u; their code's defaults, C* = 0.5 C l / u with the
product rows), the labeled points shuffled by order 0 before the folds.

Part ``compare`` (a short run that fits a shared machine): a few instances (``--instances``,
seed 0), the kernel and C their CV chooses over ``--orders`` shuffled orders of the labeled points
and in file order (the spread of the choice), then per convention ``bb-sdp`` by this code with
each of ``--workers`` and, in the same run, by the previous code (``--baseline``: the python of a
worktree of the previous commit with its own virtual environment), all with the kernel, C, C* and
options of order 0; ``compare-table`` prints the table of docs/changelog.md.

Every run is a child process with a hard timeout (its limit x 1.5 + 60 s); each line of the output
JSONL carries the load average (``os.getloadavg``) at its start.

    .venv/bin/python benchmarks/sdp_s3vm.py mean --out benchmarks/sdp_s3vm-mean.jsonl \\
        --time-limit 100 --time-limit-large 240 --bb-limit 30 --old /tmp/oldpkg --old-limit 60
    .venv/bin/python benchmarks/sdp_s3vm.py count --out benchmarks/sdp_s3vm-count.jsonl \\
        --root-limit 300 --old /tmp/oldpkg
    .venv/bin/python benchmarks/sdp_s3vm.py compare --out benchmarks/sdp_s3vm-compare.jsonl \\
        --instances art100,2moons,heart --time-limit 30 --orders 5 --workers 1,2 \\
        --baseline ../baseline/.venv/bin/python
    .venv/bin/python benchmarks/sdp_s3vm.py compare-table --out benchmarks/sdp_s3vm-compare.jsonl
    .venv/bin/python benchmarks/sdp_s3vm.py roots --out benchmarks/sdp_s3vm-roots.jsonl \\
        --instances ionosphere,wdbc,GunPoint --conventions code --root-limit 300 --old /tmp/oldpkg
    .venv/bin/python benchmarks/sdp_s3vm.py roots-table --out benchmarks/sdp_s3vm-roots.jsonl

Part ``roots``: the root alone (one node) by this code and by the previous one (``--old``), same
settings, one after the other; ``roots-table`` prints its table (docs/benchmarks/sdp.md).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.abspath(__file__)


def one(spec: dict) -> dict:
    """Run one solve described by ``spec`` in this process and return its record."""
    from s3vm.api import solve

    try:
        from s3vm.data.loaders import load_sdp_instance
    except ImportError:  # the previous code's layout (--baseline), before the role folders
        from s3vm.loaders import load_sdp_instance

    if spec.get("labeled_idx") is not None:
        # The previous code's loader has no ``rounding``: the labeled rows come from the parent.
        full = load_sdp_instance(spec["instance"], None)
        if full.n > spec.get("old_max_n", 300):
            # Its root SDP (CVXPY + SCS) overran a 60 s limit already at n = 300.
            return {"n": full.n, "status": "skipped", "reason": f"n > {spec.get('old_max_n', 300)}"}
        y = np.zeros(full.n, dtype=int)
        idx = np.asarray(spec["labeled_idx"], dtype=int)
        y[idx] = full.label[idx]
        data = (full.X, y, full.label)
    else:
        data = load_sdp_instance(spec["instance"], 0.3, seed=spec["seed"],
                                 rounding=spec["rounding"])
    from s3vm.api import load

    inst = load(data)[0]
    out = {"n": inst.n, "l": int((inst.label != 0).sum()), "u": inst.u}
    settings = dict(spec.get("settings") or {})
    options = dict(spec.get("options") or {})
    if spec.get("select"):
        from s3vm.selection import select_parameters

        t = time.perf_counter()
        sel = select_parameters(inst, seed=spec.get("order", 0),
                                convention=spec.get("convention", "paper"))
        out["selection_seconds"] = time.perf_counter() - t
        settings.update(sel.settings())
        if spec["formulation"] == "bb-sdp":
            options.update(sel.options())
        out["selection"] = {"kernel": sel.kernel, "C": sel.C, "C_star": sel.C_star,
                            "sigma": sel.sigma, "convention": sel.convention,
                            "order": sel.seed}
    t, c = time.perf_counter(), time.process_time()
    r = solve(data, spec["formulation"], time_limit=spec["time_limit"], options=options,
              **settings)
    info = r.info or {}
    root = info.get("root_bound")
    trace = info.get("trace") or {}
    if root is None and trace.get("bound"):
        root = trace["bound"][0]
    out.update(status=r.status, objective=r.objective, lower_bound=r.lower_bound, gap=r.gap,
               nodes=r.nodes, seconds=r.seconds, wall=time.perf_counter() - t,
               cpu=time.process_time() - c, root_bound=root,
               root_seconds=info.get("root_seconds"), root_rounds=info.get("root_rounds"),
               sdp_solves=info.get("sdp_solves"), sdp_seconds=info.get("sdp_seconds"),
               sdp_cpu=info.get("sdp_cpu"), positives=info.get("positives"),
               root_incumbent=info.get("root_incumbent"),
               incumbent_source=info.get("incumbent_source"),
               product_rows=info.get("product_rows"), products_dropped=info.get("products_dropped"),
               root_finished=info.get("root_finished"), root_ended=info.get("root_ended"),
               certificate_loss=info.get("certificate_loss"),
               child_seconds_median=info.get("child_seconds_median"),
               fixed=info.get("fixed"), fixed_max=info.get("fixed_max"),
               cheap_pruned=info.get("cheap_pruned"),
               branching=options.get("branching"))
    certified = getattr(r, "certified_labels", None)
    if certified is not None:
        out["certified"] = int(np.sum(certified))
    return out


def run(spec: dict, pythonpath: str | None = None, python: str | None = None) -> dict:
    """``one(spec)`` in a child process with a hard timeout (``python``: another interpreter,
    e.g. the virtual environment of the previous code's worktree); the record, or an error
    record."""
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = "1"
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    timeout = spec["time_limit"] * 1.5 + 60
    load = os.getloadavg()
    t = time.perf_counter()
    base = {**{k: spec[k] for k in ("instance", "seed", "formulation")},
            "convention": spec.get("convention"), "code": spec.get("code", "new"),
            "label": spec.get("label", spec["formulation"]), "time_limit": spec["time_limit"],
            "options": spec.get("options"), "load": [round(x, 2) for x in load],
            "started": time.strftime("%H:%M:%S", time.gmtime())}
    try:
        proc = subprocess.run([python or sys.executable, HERE, "one", json.dumps(spec)], env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {**base, "status": "killed", "wall": time.perf_counter() - t}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {**base, "status": "crash", "wall": time.perf_counter() - t,
                "stderr": proc.stderr[-2000:]}
    return {**base, **json.loads(lines[-1])}


def labeled_idx(name: str, seed: int, rounding: str) -> list:
    from s3vm.data.loaders import load_sdp_instance

    return np.flatnonzero(load_sdp_instance(name, 0.3, seed=seed, rounding=rounding).label
                          != 0).tolist()


def emit(fh, row):
    line = json.dumps(row)
    print(line, flush=True)
    fh.write(line + "\n")
    fh.flush()


def finished_runs(path: str) -> set:
    """The (instance, seed, formulation, convention, time limit) of every run already in ``path``
    that ended on its own (not killed or crashed): ``mean --resume`` skips them, so that the
    benchmark can be run in pieces, each on a quiet machine, into one file."""
    if not os.path.exists(path):
        return set()
    done = set()
    with open(path) as fh:
        for line in fh:
            r = json.loads(line)
            if r.get("resume_key") and r.get("status") not in (None, "killed", "crash"):
                done.add(tuple(r["resume_key"]))
    return done


def run_key(spec: dict) -> tuple:
    return (spec["instance"], spec.get("seed", 0), spec["formulation"], spec.get("convention"),
            float(spec["time_limit"]), spec.get("label", spec["formulation"]))


def mean_part(args):
    from s3vm.data.loaders import SDP_INSTANCES

    names = sorted(SDP_INSTANCES, key=lambda k: SDP_INSTANCES[k][0])
    if args.mean_instances:
        unknown = set(args.mean_instances.split(",")) - set(names)
        if unknown:
            sys.exit(f"unknown instance(s): {', '.join(sorted(unknown))}")
        names = [k for k in names if k in args.mean_instances.split(",")]
    done = finished_runs(args.out) if args.resume else set()

    def run_new(spec, pythonpath=None):
        key = run_key(spec)
        if key in done:
            print(f"done already: {key}", file=sys.stderr)
            return None
        return {**run(spec, pythonpath), "resume_key": list(key)}

    with open(args.out, "a") as fh:
        emit(fh, {"part": "header", "uptime": subprocess.run(["uptime"], capture_output=True,
                                                              text=True).stdout.strip(),
                  "args": vars(args)})
        for name in names:
            n = SDP_INSTANCES[name][0]
            seeds = [int(k) for k in args.mean_seeds.split(",")] if n <= 300 else [0]
            limit = args.time_limit if n <= 300 else args.time_limit_large
            common = {"instance": name, "rounding": "floor", "select": True}
            for seed in seeds:
                row = None
                for convention in args.conventions.split(","):
                    found = run_new({**common, "seed": seed, "formulation": "bb-sdp",
                                     "convention": convention, "time_limit": limit,
                                     "options": {"rel_gap": 1e-3}})
                    if found is not None:
                        emit(fh, found)
                    if convention == "paper":
                        row = found
                    if args.previous and seed == 0:
                        # The previous code's search on the same problem and limit, its own
                        # defaults otherwise (its selection picks the same kernel and C).
                        found = run_new({**common, "seed": 0, "formulation": "bb-sdp",
                                         "convention": convention, "time_limit": limit,
                                         "code": "previous", "label": "bb-sdp previous",
                                         "options": {"rel_gap": 1e-3}}, args.previous)
                        if found is not None:
                            emit(fh, found)
                if seed == 0 and "paper" in args.conventions.split(","):
                    found = run_new({**common, "seed": 0, "formulation": "bb", "time_limit":
                                     args.bb_limit, "options": {"rel_gap": 1e-3}})
                    if found is not None:
                        emit(fh, found)
                    if args.old and row is not None and row.get("selection"):
                        sel = row["selection"]
                        settings = {**sel, "bias": False, "balance": "none"}
                        emit(fh, run({"instance": name, "seed": 0, "rounding": "floor",
                                      "labeled_idx": labeled_idx(name, 0, "floor"),
                                      "settings": settings, "formulation": "bb-sdp",
                                      "label": "bb-sdp-previous (balance none)",
                                      "old_max_n": args.old_max_n,
                                      "time_limit": args.old_limit,
                                      "options": {"node_limit": 1}}, args.old))


def selection_spread(name: str, seed: int, orders: int) -> dict:
    """The kernel and C that the cross-validation chooses over ``orders`` shuffled orders of the
    labeled points (seeds 0, 1, ...) and in file order (the previous code's choice)."""
    from s3vm.data.loaders import load_sdp_instance
    from s3vm.selection import select_parameters

    inst = load_sdp_instance(name, 0.3, seed=seed, rounding="floor")
    chosen = [select_parameters(inst, seed=k) for k in range(orders)]
    file_order = select_parameters(inst, seed=None)
    return {"kernels": [c.kernel for c in chosen], "C": [c.C for c in chosen],
            "file_order": [file_order.kernel, file_order.C]}


def compare_part(args):
    """Both conventions on a few instances (seed 0, their CV with the labeled points in order 0),
    by this code (``--workers``) and, in the same run, by the previous code (``--baseline``:
    the python of a worktree of the previous commit), with the same kernel, C, C* and options."""
    from s3vm.data.loaders import SDP_INSTANCES

    with open(args.out, "a") as fh:
        emit(fh, {"part": "header", "uptime": subprocess.run(["uptime"], capture_output=True,
                                                              text=True).stdout.strip(),
                  "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                  "args": vars(args)})
        for name in args.instances.split(","):
            n = SDP_INSTANCES[name][0]
            seeds = range(args.seeds if n <= 300 else 1)
            limit = args.time_limit if n <= 300 else args.time_limit_large
            for seed in seeds:
                compare_one(fh, args, name, seed, limit)


def compare_one(fh, args, name: str, seed: int, limit: float):
    """One instance and seed of ``compare``: the spread of the CV's choice, then per convention
    this code with each of ``--workers`` and (seeds in ``--baseline-seeds``) the previous code."""
    from s3vm.data.loaders import load_sdp_instance
    from s3vm.selection import select_parameters

    emit(fh, {"part": "spread", "instance": name, "seed": seed,
              **selection_spread(name, seed, args.orders)})
    inst = load_sdp_instance(name, 0.3, seed=seed, rounding="floor")
    baseline_seeds = {int(s) for s in args.baseline_seeds.split(",") if s}
    for convention in args.conventions.split(","):
        sel = select_parameters(inst, seed=0, convention=convention)
        common = {"instance": name, "seed": seed, "rounding": "floor",
                  "formulation": "bb-sdp", "time_limit": limit,
                  "convention": convention, "settings": sel.settings(),
                  "selection": {"kernel": sel.kernel, "C": sel.C,
                                "C_star": sel.C_star}}
        options = {"rel_gap": args.gap, **sel.options()}
        for workers in [int(w) for w in args.workers.split(",")]:
            emit(fh, {**run({**common, "options": {**options, "workers": workers},
                             "label": f"bb-sdp workers={workers}"}),
                      "selection": common["selection"]})
        if args.baseline and seed in baseline_seeds:
            emit(fh, {**run({**common, "options": options, "code": "previous",
                             "label": "bb-sdp previous"}, python=args.baseline),
                      "selection": common["selection"]})


def nodes_part(args):
    """Node costs and branching (issue 35's benchmark, the part that fits a shared 2-core
    machine): per instance (seed 0, their CV with the labeled points in order 0) and convention,
    ``bb-sdp`` by this code with each branching rule of ``--variants`` (``previous``: the
    previous code, ``--baseline``), one run at a time, all with the same kernel, C, C* and
    options; each record carries nodes, the root's seconds, the median child's, the labels the
    boxes fixed and the labels certified."""
    from s3vm.data.loaders import load_sdp_instance
    from s3vm.selection import select_parameters

    with open(args.out, "a") as fh:
        emit(fh, {"part": "header", "uptime": subprocess.run(["uptime"], capture_output=True,
                                                              text=True).stdout.strip(),
                  "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                  "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                           capture_output=True, text=True).stdout.strip(),
                  "args": vars(args)})
        for name in args.instances.split(","):
            inst = load_sdp_instance(name, 0.3, seed=0, rounding="floor")
            for convention in args.conventions.split(","):
                sel = select_parameters(inst, seed=0, convention=convention)
                common = {"instance": name, "seed": 0, "rounding": "floor",
                          "formulation": "bb-sdp", "time_limit": args.time_limit,
                          "convention": convention, "settings": sel.settings()}
                options = {"rel_gap": args.gap, **sel.options()}
                for variant in args.variants.split(","):
                    if variant == "previous":
                        if args.baseline:
                            emit(fh, {**run({**common, "options": options, "code": "previous",
                                             "label": "bb-sdp previous"},
                                            python=args.baseline), "variant": variant})
                        continue
                    # "rank+probe": the rule, and the labels the tree left open probed after
                    # the search (certify="probe")
                    rule, _, certify = variant.partition("+")
                    extra = {"certify": certify} if certify else {}
                    emit(fh, {**run({**common, "options": {**options, "branching": rule,
                                                           **extra},
                                     "label": f"bb-sdp {variant}"}), "variant": variant})


def nodes_table(args):
    """Markdown table of a ``nodes`` results file (stdout): *child / root* is the median
    child's seconds over the root's (the mean child's where the median was not recorded)."""
    rows = [json.loads(ln) for ln in open(args.out)]
    for h in (r for r in rows if r.get("part") == "header"):
        print(f"<!-- {h['date']} commit {h.get('commit')} -->")
        print(h["uptime"])
    print("| instance | n | convention | code, branching | status | s | gap | nodes | root s "
          "| median child s | mean child s | child / root | fixed (max a node) "
          "| certified of u |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r.get("part") == "header" or "variant" not in r:
            continue
        root, child = r.get("root_seconds"), r.get("child_seconds_median")
        nodes = r.get("nodes") or 0
        # The mean child from the totals: every code records them (the previous one has no
        # median); it includes the search's own work between nodes.
        mean = (r["seconds"] - root) / (nodes - 1) if root and nodes > 1 else None
        per = child if child is not None else mean
        ratio = f"{per / root:.2f}" if root and per is not None else "-"
        gap = "-" if r.get("gap") is None else f"{100 * r['gap']:.2f}%"
        code = "previous" if r["variant"] == "previous" else f"this, {r['variant']}"
        fixed = "-" if r.get("fixed") is None else f"{r['fixed']} ({r.get('fixed_max')})"
        cert = "-" if r.get("certified") is None else f"{r['certified']} of {r.get('u')}"
        print(f"| {r['instance']} | {r.get('n')} | {r['convention']} | {code} | {r['status']} "
              f"| {_num(r.get('seconds'), 1)} | {gap} | {r.get('nodes')} "
              f"| {_num(root, 1)} | {_num(child, 2)} | {_num(mean, 2)} | {ratio} | {fixed} "
              f"| {cert} |")


def _num(x, digits: int) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def compare_table(args):
    """Markdown table of a ``compare`` results file (stdout)."""
    rows = [json.loads(ln) for ln in open(args.out)]
    header = [r for r in rows if r.get("part") == "header"]
    spread = {(r["instance"], r.get("seed", 0)): r for r in rows if r.get("part") == "spread"}
    runs = [r for r in rows if r.get("part") is None]
    best = {}
    for r in runs:
        if r.get("objective") is not None:
            key = (r["instance"], r.get("seed", 0), r["convention"])
            best[key] = min(best.get(key, float("inf")), r["objective"])
    print("| instance | n | seed | convention | kernel, C, C* | C over orders (file order) | code | "
          "root gap | root s | nodes | total s | status | final gap | previous s / this s "
          "(both proved) | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        sel = r.get("selection") or {}
        sp = spread.get((r["instance"], r.get("seed", 0)), {})
        cs = sp.get("C") or []
        kinds = sp.get("kernels") or []
        mixed = f", {kinds.count('rbf')} of {len(kinds)} rbf" if len(set(kinds)) > 1 else ""
        order_text = (f"{_fmt(min(cs), 3)}-{_fmt(max(cs), 3)}{mixed} "
                      f"({sp['file_order'][0]} {_fmt(sp['file_order'][1], 3)})" if cs else "-")
        b = best.get((r["instance"], r.get("seed", 0), r["convention"]))
        root = r.get("root_bound")
        root_gap = None if root is None or b is None else (b - root) / abs(b)
        ratio = "-"
        if r.get("code") == "new":
            prev = next((p for p in runs if p["instance"] == r["instance"] and p.get("seed", 0) == r.get("seed", 0)
                         and p["convention"]
                         == r["convention"] and p.get("code") == "previous"
                         and p["time_limit"] == r["time_limit"]
                         and p.get("started", "") > r.get("started", "")), None)
            # a ratio of times only where both closed the gap (at a limit both took the limit)
            if prev and prev.get("seconds") and r.get("seconds") and _proved(prev) \
                    and _proved(r):
                ratio = f"{prev['seconds'] / r['seconds']:.2f}"
        label = r["label"].replace("bb-sdp ", "")
        status = r.get("status")
        if status == "feasible" and r.get("code") == "previous" and r.get("gap") is not None \
                and r["gap"] <= (r.get("options") or {}).get("rel_gap", 0):
            status = "feasible (gap closed)"
        print(f"| {r['instance']} | {r.get('n', '-')} | {r.get('seed', 0)} | {r['convention']} | {sel.get('kernel')}, "
              f"{_fmt(sel.get('C'), 3)}, {_fmt(sel.get('C_star'), 3)} | {order_text} | {label} | "
              f"{_pct(root_gap)} | {_fmt(r.get('root_seconds'), 3)} | {_fmt(r.get('nodes'))} | "
              f"{_fmt(r.get('seconds'), 3)} | {status} | {_pct(_relative_gap(r))} | {ratio} | "
              f"{r['load'][0]} |")
    for h in header:
        print(f"\n{h.get('date', '')}: {h['uptime']}")


def _relative_gap(r):
    """(objective - lower bound) / |objective| of a run (its ``gap`` divides by max(1, |UB|))."""
    obj, lb = r.get("objective"), r.get("lower_bound")
    if obj is None or lb is None or obj == 0:
        return None
    return max(0.0, (obj - lb) / abs(obj))


def compare_summary(args):
    """Per instance and convention over the seeds of one or more ``compare`` files (a later
    file's run of the same instance, seed, convention and code replaces an earlier one): runs,
    proved, proved within 60 s, root and final gaps, the root incumbent against the best
    labeling any run found, and the previous code's seed-0 row beside this code's (stdout)."""
    runs = {}
    for path in args.out.split(","):
        for line in open(path):
            r = json.loads(line)
            if r.get("part") is None:
                runs[(r["instance"], r.get("seed", 0), r["convention"], r.get("code"))] = r
    best = {}
    for (name, seed, conv, _), r in runs.items():
        if r.get("objective") is not None:
            key = (name, seed, conv)
            best[key] = min(best.get(key, float("inf")), r["objective"])

    def rel(value, key):
        b = best.get(key)
        return None if value is None or b is None else (value - b) / abs(b)

    print("| instance | n | convention | seeds | proved | proved in 60 s | root gap (median, "
          "range) | final gap (median) | root incumbent above the best (max) | previous code, "
          "seed 0: status, final gap | this code, seed 0: status, final gap | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    order = []
    for key in runs:
        if key[:1] + key[2:3] not in order:
            order.append(key[:1] + key[2:3])
    for name, conv in order:
        mine = [r for (i, s, c, code), r in runs.items()
                if i == name and c == conv and code == "new"]
        if not mine:
            continue
        roots = [rel(r.get("objective"), (name, r["seed"], conv)) for r in mine]
        root_gaps = sorted(-(rel(r.get("root_bound"), (name, r["seed"], conv)) or 0.0)
                           for r in mine if r.get("root_bound") is not None)
        finals = sorted(_relative_gap(r) for r in mine if _relative_gap(r) is not None)
        incs = [rel(r.get("root_incumbent"), (name, r["seed"], conv)) for r in mine
                if r.get("root_incumbent") is not None]
        proved = [r for r in mine if _proved(r)]
        fast = [r for r in proved if (r.get("seconds") or 1e9) <= 60.0]
        prev = runs.get((name, 0, conv, "previous"))
        this = runs.get((name, 0, conv, "new"))

        def status(r):
            return "-" if r is None else f"{r.get('status')}, {_pct(_relative_gap(r))}"

        def med(xs):
            return None if not xs else xs[len(xs) // 2]
        del roots
        loads = [r["load"][0] for r in mine]
        print(f"| {name} | {mine[0].get('n', '-')} | {conv} | {len(mine)} | {len(proved)} | "
              f"{len(fast)} | {_pct(med(root_gaps))} ({_pct(root_gaps[0]) if root_gaps else '-'}"
              f"-{_pct(root_gaps[-1]) if root_gaps else '-'}) | {_pct(med(finals))} | "
              f"{_pct(max(incs)) if incs else '-'} | {status(prev)} | {status(this)} | "
              f"{min(loads):.1f}-{max(loads):.1f} |")


COUNT = {"kernel": "rbf", "sigma": 1.0, "C": 1.0, "C_star": 1.0, "bias": False,
         "balance": "count", "positives": "truth"}


def roots_part(args):
    """The root of ``bb-sdp`` (one node) on ``--instances`` (seed 0, ``--conventions``), by this code
    and, in the same run and one after the other, by the previous code (``--old``: a PYTHONPATH
    holding its packages as s3vm/), with the same kernel, C, C* and options, ``--root-limit``."""
    from s3vm.data.loaders import load_sdp_instance
    from s3vm.selection import select_parameters

    with open(args.out, "a") as fh:
        emit(fh, {"part": "header", "uptime": subprocess.run(["uptime"], capture_output=True,
                                                              text=True).stdout.strip(),
                  "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                  "args": vars(args)})
        for name in args.instances.split(","):
            inst = load_sdp_instance(name, 0.3, seed=0, rounding="floor")
            for convention in args.conventions.split(","):
                sel = select_parameters(inst, seed=0, convention=convention)
                spec = {"instance": name, "seed": 0, "rounding": "floor", "part": "roots",
                        "formulation": "bb-sdp", "time_limit": args.root_limit,
                        "convention": convention, "settings": sel.settings(),
                        "options": {"rel_gap": args.gap, "node_limit": 1, "workers": 1,
                                    **sel.options()}}
                selection = {"kernel": sel.kernel, "C": sel.C, "C_star": sel.C_star}
                emit(fh, {**run({**spec, "label": "bb-sdp root"}), "part": "roots",
                          "selection": selection})
                if args.old:
                    emit(fh, {**run({**spec, "code": "previous", "label": "bb-sdp root"},
                                    args.old), "part": "roots", "selection": selection})


def roots_table(args):
    """The table of docs/benchmarks/sdp.md from the ``roots`` part's rows: per instance and
    convention, the root's gap to its incumbent, time, rounds, SDPs, product rows and whether it
    finished, this code against the previous one."""
    rows = [json.loads(line) for line in open(args.out)]
    rows = [r for r in rows if r.get("part") == "roots" and "status" in r]
    print("| instance | convention | code | root gap | root s | rounds | SDPs | product rows "
          "| root finished | certificate loss (max of gap) | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        inc, lb = r.get("root_incumbent") or r.get("objective"), r.get("root_bound")
        gap = "-" if inc is None or lb is None or not math.isfinite(lb) \
            else f"{100 * (inc - lb) / abs(inc):.3f}%"
        loss = (r.get("certificate_loss") or {}).get("max")
        print(f"| {r['instance']} | {r['convention']} | {r['code']} | {gap} "
              f"| {_fmt(r.get('root_seconds'), 3)} | {r.get('root_rounds', '-')} "
              f"| {r.get('sdp_solves', '-')} | {r.get('product_rows') or '?'} "
              f"| {r.get('root_finished', '?')} | {_pct(loss) if loss is not None else '-'} "
              f"| {r['load'][0]} |")


def count_part(args):
    with open(args.out, "a") as fh:
        emit(fh, {"part": "header", "uptime": subprocess.run(["uptime"], capture_output=True,
                                                              text=True).stdout.strip(),
                  "args": vars(args)})
        for name in ("art100", "art150"):
            common = {"instance": name, "seed": 0, "rounding": "half-up", "settings": COUNT,
                      "time_limit": args.root_limit}
            for variant in ("none", "lifted"):
                emit(fh, run({**common, "formulation": "bb-sdp", "label": f"bb-sdp {variant}",
                              "options": {"node_limit": 1, "count_bound": variant}}))
            emit(fh, run({**common, "formulation": "bb", "options": {"node_limit": 1}}))
            if args.old:
                emit(fh, run({**common, "formulation": "bb-sdp", "label": "bb-sdp-previous",
                              "labeled_idx": labeled_idx(name, 0, "half-up"),
                              "options": {"node_limit": 1}}, args.old))
        if args.count_full:
            emit(fh, run({"instance": "art150", "seed": 0, "rounding": "half-up",
                          "settings": COUNT, "time_limit": args.count_full,
                          "formulation": "bb-sdp", "label": "bb-sdp lifted full",
                          "options": {"rel_gap": 1e-3}}))


def _fmt(x, digits=4):
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def _pct(x):
    return "-" if x is None else f"{100 * x:.2f}%"


def _proved(r):
    """Optimal (within the gap tolerance, the driver's status since it closes it), or status
    feasible without a node limit (how records of older code say the same)."""
    return r.get("status") == "optimal" or (r.get("status") == "feasible" and not
                                           (r.get("options") or {}).get("node_limit"))


def _status(r) -> str:
    return "proved" if _proved(r) else r.get("status")


def _root_s(r) -> str:
    """The root's seconds, with ``*`` where the limit cut the root off."""
    cut = "*" if (r.get("root_seconds") or 0) >= 0.95 * r["time_limit"] else ""
    return f"{_fmt(r.get('root_seconds'), 3)}{cut}"


def _rel(r):
    """(objective - lower bound) / |objective|."""
    o, b = r.get("objective"), r.get("lower_bound")
    return None if o is None or b is None else (o - b) / abs(o)


def _loss(loss) -> str:
    """The certificate's loss over a search's nodes, each a share of its node's gap (the
    solver's dual value less the certified bound): median, max (nodes over 1% of nodes)."""
    if not loss or not loss.get("nodes"):
        return "-"
    return (f"{_pct(loss['median'])}, {_pct(loss['max'])} "
            f"({loss['over_1pct']} of {loss['nodes']})")


def table(args):
    """Markdown tables of a ``mean`` results file (stdout)."""
    rows = [json.loads(ln) for ln in open(args.out)]
    header = [r for r in rows if r.get("part") == "header"]
    # A file run in pieces holds its runs in the order they ran: the table reads by size.
    rows = sorted((r for r in rows if r.get("part") != "header"),
                  key=lambda r: (r.get("n") or 0, r["instance"], r["seed"],
                                 r.get("convention") == "code"))
    # The conventions pose two problems (C* = C l / u, or half of it): each gap is taken against
    # the best labeling of its own (bb and the previous bb-sdp solve the paper's).
    def problem(r):
        return (r["instance"], r["seed"], r.get("convention") or "paper")

    best = {}
    for r in rows:
        if r.get("objective") is not None and r["label"] in ("bb-sdp", "bb", "bb-sdp previous"):
            best[problem(r)] = min(best.get(problem(r), float("inf")), r["objective"])

    def gap(r, bound):
        b = best.get(problem(r))
        return None if bound is None or b is None else (b - bound) / abs(b)

    print("| instance | n | seed | kernel, C | root bound | best value | root gap | root s | nodes |"
          " total s (CPU s) | status | final gap | product rows | root finished |"
          " certificate loss, median, max (nodes over 1%) | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r["label"] != "bb-sdp":
            continue
        sel = r.get("selection") or {}
        print(f"| {r['instance']} ({r.get('convention') or 'paper'}) | {r.get('n', '-')} | {r['seed']} | {sel.get('kernel', '-')}, "
              f"{_fmt(sel.get('C'), 3)} | {_fmt(r.get('root_bound'), 6)} | "
              f"{_fmt(best.get(problem(r)), 6)} | {_pct(gap(r, r.get('root_bound')))} | "
              f"{_root_s(r)} | {_fmt(r.get('nodes'))} | "
              f"{r.get('seconds', 0):.1f} ({r.get('cpu', 0):.1f}) | "
              f"{_status(r)} | {_pct(_rel(r))} | {r.get('product_rows') or '?'} | "
              f"{_fmt(r.get('root_finished'))} | {_loss(r.get('certificate_loss'))} | "
              f"{r['load'][0]} |")
    previous = [r for r in rows if r["label"] == "bb-sdp previous"]
    if previous:
        print()
        print("| instance | code | root gap | root s | nodes | total s | status | final gap "
              "| product rows | root finished | load |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for old in previous:
            new = next((r for r in rows if r["label"] == "bb-sdp" and problem(r) == problem(old)),
                       None)
            for r in (new, old):
                if r is None:
                    continue
                print(f"| {r['instance']} ({r.get('convention') or 'paper'}) | {r['code']} | "
                      f"{_pct(gap(r, r.get('root_bound')))} | "
                      f"{_root_s(r)} | {_fmt(r.get('nodes'))} | "
                      f"{r.get('seconds', 0):.1f} | "
                      f"{_status(r)} | {_pct(_rel(r))} | "
                      f"{r.get('product_rows') or '?'} | {_fmt(r.get('root_finished'), 4)} | "
                      f"{r['load'][0]} |")
    if not any(r["label"] == "bb" for r in rows):  # a piece without the paper convention
        return
    print()
    print("| instance | bb status | bb s | bb nodes | bb root gap | bb final gap | previous bb-sdp root "
          "gap (balance none) | its s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r["label"] != "bb":
            continue
        old = next((o for o in rows if o["instance"] == r["instance"] and o["label"].startswith(
            "bb-sdp-previous")), None)
        status = _status(r)
        old_gap = _pct(gap(old, old.get("root_bound"))) if old and old.get("root_bound") else (
            old.get("status") if old else "-")
        print(f"| {r['instance']} | {status} | {_fmt(r.get('seconds'), 3)} | {_fmt(r.get('nodes'))} | "
              f"{_pct(gap(r, r.get('root_bound')))} | {_pct(_rel(r))} | {old_gap} | "
              f"{_fmt(old.get('wall') if old else None, 3)} |")
    for h in header:
        print(f"\n{h['uptime']}")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "one":
        print(json.dumps(one(json.loads(sys.argv[2]))), flush=True)
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("part", choices=("mean", "count", "table", "compare", "compare-table",
                                     "nodes", "nodes-table",
                                     "compare-summary", "roots", "roots-table"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--time-limit", type=float, default=100.0)
    ap.add_argument("--time-limit-large", type=float, default=240.0)
    ap.add_argument("--bb-limit", type=float, default=30.0)
    ap.add_argument("--old", help="PYTHONPATH of the previous code (a folder with s3vm/)")
    ap.add_argument("--previous",
                    help="mean: PYTHONPATH of the previous code (a folder with s3vm/), whose "
                         "bb-sdp then runs each seed 0 search too, with the same limit")
    ap.add_argument("--old-limit", type=float, default=60.0)
    ap.add_argument("--old-max-n", type=int, default=300,
                    help="skip the previous bb-sdp above this n (its root SDP is too slow)")
    ap.add_argument("--root-limit", type=float, default=300.0)
    ap.add_argument("--count-full", type=float, default=0.0,
                    help="also a full bb-sdp search of art150 with the count, this limit")
    ap.add_argument("--instances", default="art100,2moons,heart",
                    help="compare: comma-separated instances (seed 0)")
    ap.add_argument("--conventions", default="paper,code",
                    help="mean, compare: the selection's conventions to run")
    ap.add_argument("--orders", type=int, default=5,
                    help="compare: fold orders (shuffle seeds) for the spread of the chosen C")
    ap.add_argument("--workers", default="2",
                    help="compare: comma-separated worker counts of this code's runs")
    ap.add_argument("--gap", type=float, default=1e-3, help="compare: relative gap")
    ap.add_argument("--baseline", help="compare: the python of the previous code's worktree")
    ap.add_argument("--seeds", type=int, default=1,
                    help="compare: seeds 0..k-1 of each instance up to n = 300 (one above)")
    ap.add_argument("--mean-instances", default="",
                    help="mean: comma-separated instances (default: all eleven)")
    ap.add_argument("--mean-seeds", default="0,1,2",
                    help="mean: comma-separated seeds of the instances up to n = 300 (one, 0, "
                         "above)")
    ap.add_argument("--resume", action="store_true",
                    help="mean: skip the runs --out already holds (to run it in pieces)")
    ap.add_argument("--variants", default="rank,strong,fractional,previous",
                    help="nodes: branching rules of this code (RULE+probe: certify='probe' too), "
                         "and 'previous' (--baseline)")
    ap.add_argument("--baseline-seeds", default="0",
                    help="compare: comma-separated seeds the previous code also runs")
    args = ap.parse_args()
    {"mean": mean_part, "count": count_part, "table": table, "compare": compare_part,
     "compare-table": compare_table, "compare-summary": compare_summary, "roots": roots_part,
     "roots-table": roots_table, "nodes": nodes_part, "nodes-table": nodes_table}[args.part](args)


if __name__ == "__main__":
    main()
