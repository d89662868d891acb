"""Time l2-miqp's model on its way to SCIP: the Pyomo build and its translation into SCIP.

What ``s3vm solve -f l2-miqp`` does before SCIP's first node, timed in two parts on two moons
under rbf (sigma 1, the count balance):

- ``build``: :meth:`L2MIQP.model_to_solve` (the kernel factor, the big-M bound, the Pyomo model
  and J's exact objective);
- ``translate``: the Pyomo model into a pyscipopt model (``_create_solver_model`` of the SCIP
  backend), once through Pyomo's expression walker for every row (``walker``, the code before
  the matrix rows' fast path) and once with the fast path (``matrix``).

Medians of ``--repeat`` runs, each part in the same process. Run with one BLAS thread::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/l2_miqp_build.py 270 1000 \\
        --repeat 5 --out benchmarks/l2_miqp_build.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", type=int, nargs="+", help="numbers of points (n)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", help="JSON lines file to append the rows to")
    args = parser.parse_args()

    import pyomo.environ  # noqa: F401  (imported once, outside every timing)
    from pyomo.common.timing import HierarchicalTimer
    from pyomo.contrib.solver.solvers.scip.scip_direct import ScipDirect

    from s3vm.core.settings import Settings
    from s3vm.data.generators import two_moons
    from s3vm.formulations.families import labeling
    from s3vm.formulations.l2_miqp import L2MIQP
    from s3vm.solvers.backends.pyomo.scip import _scip_direct_class

    fast_class = _scip_direct_class()

    class WalkerOnly(fast_class):
        """Every row through Pyomo's expression walker (the translation before the fast path)."""

        def _add_constraint(self, con):
            return ScipDirect._add_constraint(self, con)

    def translate(solver_class, model) -> float:
        solver = solver_class()
        config = solver.config(value={}, preserve_implicit=True)
        config.timer = HierarchicalTimer()
        start = time.perf_counter()
        solver._create_solver_model(model, config)
        return time.perf_counter() - start

    settings = Settings(kernel="rbf", sigma=1.0, balance="count")
    formulation = L2MIQP()
    for n in args.sizes:
        instance = two_moons(5, (n - 10) // 2, seed=0)
        times: dict = {"build": [], "walker": [], "matrix": []}
        for _ in range(args.repeat):
            labeling._LAST[0] = None  # J made anew each time, as in one solve
            start = time.perf_counter()
            model = formulation.model_to_solve(instance, settings, None)
            times["build"].append(time.perf_counter() - start)
            times["walker"].append(translate(WalkerOnly, model))
            times["matrix"].append(translate(fast_class, model))
        row = {"n": instance.n, "repeat": args.repeat,
               **{f"{k}_median_s": round(statistics.median(v), 4) for k, v in times.items()},
               **{f"{k}_s": [round(x, 4) for x in v] for k, v in times.items()},
               "loadavg": open("/proc/loadavg").read().split()[:3] if os.path.exists(
                   "/proc/loadavg") else None,
               "machine": platform.node(), "date": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                 time.gmtime())}
        print(json.dumps(row), flush=True)
        if args.out:
            with open(args.out, "a") as fh:
                fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
