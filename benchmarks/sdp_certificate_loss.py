"""The certificate's loss per node of ``bb-sdp`` (docs/benchmarks/sdp.md, whose table
``benchmarks/pages.py`` prints from this script's JSON lines).

One instance of load_sdp_instance (seed 0, 30% of each class labeled with floor rounding, the code
convention's kernel, C and product rows, the mean balance, gap 1e-3), best-first search with a
node limit, in this process (one worker), with ``ShorOptions.cert_gap_share`` (a certificate
losing more than this share of the node's gap to the solver's dual value b'y is solved again
more accurately). One JSON line on stdout: CPU and wall seconds, SDPs, escalations, the bound,
:meth:`s3vm.bounds.shor.ShorBoundProblem.certificate_losses` and per node (bound, b'y, UB,
rounds, why its rounds ended).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/sdp_certificate_loss.py \
        art150 8 0.1 >> benchmarks/sdp_certificate_loss.jsonl
    .venv/bin/python benchmarks/sdp_certificate_loss.py --table benchmarks/sdp_certificate_loss.jsonl
"""
import json
import resource
import sys
import time

from s3vm.api import load
from s3vm.core.registry import get_formulation
from s3vm.core.settings import Settings
from s3vm.data.loaders import load_sdp_instance
from s3vm.selection import select_parameters
from s3vm.solvers.bnb.driver import search
from s3vm.solvers.profiles import get_profile
from s3vm.solvers.registry import get_backend


def cpu():
    o, k = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return o.ru_utime + o.ru_stime + k.ru_utime + k.ru_stime
if sys.argv[1] == "--table":
    print("| instance | nodes | escalation threshold (share of gap) | SDPs | escalations | CPU s "
          "| nodes with a gap | loss median | loss max | nodes over 1% |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for line in open(sys.argv[2]):
        r = json.loads(line)
        loss = r["loss"]

        def pct(x):
            return "-" if x is None else f"{100 * x:.2f}%"

        print(f"| {r['instance']} | {r['nodes']} | {r['cert_gap_share']} | {r['sdp']} "
              f"| {r['escalations']} | {r['cpu']:.1f} | {loss['nodes']} | {pct(loss['median'])} "
              f"| {pct(loss['max'])} | {loss['over_1pct']} |")
    sys.exit(0)
name, nodes, share = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
inst = load(load_sdp_instance(name, 0.3, seed=0, rounding="floor"))[0]
sel = select_parameters(inst, seed=0, convention="code")
settings = Settings(**{**sel.settings(), "bias": False, "balance": "mean"})
form = get_formulation("bb-sdp", **sel.options())
problem = form.labeling_problem(inst, settings, get_backend("sdpa", "conic"), get_profile("sdpa", None, "conic"))
problem.options.cert_gap_share = share
problem.rel_gap = 1e-3
t, c = time.perf_counter(), cpu()
found = search(problem, node_selection="best", node_limit=nodes, keep_tree=False, log_every=0)
rec = {"instance": name, "nodes": nodes, "cert_gap_share": share, "wall": time.perf_counter() - t, "cpu": cpu() - c,
       "sdp": problem.stats["sdp"], "escalations": problem.stats["sdp_escalations"],
       "lower_bound": found.lower_bound, "objective": found.objective, "loss": problem.certificate_losses(),
       "per_node": [(float(e.bound), float(e.dual), float(e.incumbent), e.rounds, e.ended) for e in problem.log]}
print(json.dumps(rec), flush=True)
