"""``s3vm list``: the formulations, and which solvers can run here."""

from __future__ import annotations

from s3vm.core.registry import FORMULATIONS, formulation_class
from s3vm.solvers.registry import BACKENDS, unavailable_reason


def add_parser(sub) -> None:
    sub.add_parser("list", help="formulations and installed solvers")


def run(args, out) -> int:
    print("formulations:", file=out)
    for name in FORMULATIONS:
        cls = formulation_class(name)
        print(f"  {name:<14} {cls.problem_class:<4} {cls.summary}", file=out)
    print("solvers:", file=out)
    for name, classes in BACKENDS.items():
        states = {}
        for cls in classes:
            reason = unavailable_reason(name, cls)
            states.setdefault("installed" if reason is None else f"unavailable: {reason}",
                              []).append(cls)
        for state, which in states.items():
            print(f"  {name:<14} {','.join(which):<14} {state}", file=out)
    return 0
