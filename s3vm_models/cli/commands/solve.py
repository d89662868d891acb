"""``s3vm solve DATA -f NAME``: solve one formulation and print the result."""

from __future__ import annotations

from s3vm import api
from s3vm.cli.output import print_solve
from s3vm.cli.parser import (
    add_formulation_options,
    add_problem_options,
    add_solver_options,
    inputs,
    overrides,
    read_data,
    started,
    typed_options,
)
from s3vm.solvers.results import Result
from s3vm.solvers.runtime.clock import signal_name
from s3vm.solvers.runtime.supervisor import (
    Interrupted,
    received_signal,
    signal_of,
    signals_deferred,
    signals_received,
)

#: A signal noted before the command ran (the console script's start, the arguments read) is
#: this command's to answer (s3vm.cli.main): it answers every signal with one result.
answers_noted_signals = True


def add_parser(sub) -> None:
    p = sub.add_parser("solve", help="solve one formulation and print the result")
    p.add_argument("data", help="CSV data file, TOML instance file, or a shipped instance name")
    p.add_argument("--formulation", "-f", required=True)
    add_problem_options(p)
    add_formulation_options(p)
    add_solver_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--primal", action="store_true", help="with --json: include the primal solution")


def run(args, out) -> int:
    instance = None
    signals = signals_received()
    try:
        if getattr(args, "noted_signal", None) is not None:
            raise Interrupted(args.noted_signal)  # came before the command could answer it
        instance, settings = read_data(args)
        result = api.solve(instance, args.formulation, settings, solver=args.solver,
                           profile=args.profile, time_limit=args.time_limit,
                           options=typed_options(args), verbose=args.verbose,
                           inputs=inputs(args), started=started(args), **overrides(args))
    except KeyboardInterrupt as exc:
        # Every signal has an answer: the solve's best result so far, or, before the data was
        # read (no labeling can exist), status "error" saying so.
        result = getattr(exc, "result", None)
        if result is None:
            result = unanswered(args, signal_of(exc), instance)
        with signals_deferred():
            print_solve(args, out, instance, result)
        raise
    except Exception:
        if signals_received() == signals:
            raise
        # A library turned the signal into an error of its own (an import it cut short, then
        # failed): the signal's answer all the same (exit 130 with nothing on stdout before).
        signum = received_signal()
        with signals_deferred():
            print_solve(args, out, instance, unanswered(args, signum, instance))
        raise Interrupted(signum) from None
    # A signal while the answer is written ends the command after it (exit 130), not halfway.
    with signals_deferred():
        print_solve(args, out, instance, result)
    return 0


def unanswered(args, signum: int, instance) -> Result:
    """The answer to a signal that came before the solve had one: status ``error``, no labels,
    the reason in the message (the API answers any signal after the data was read itself,
    with the supervised fallback's labels where they can be had)."""
    when = "before the data was read" if instance is None else "before the solve began"
    result = Result(formulation=args.formulation, solver=args.solver or "", status="error",
                    message=f"interrupted by {signal_name(signum)} {when}: no labeling yet")
    result.info["applied"] = {"time_limit": args.time_limit, "solver": args.solver,
                              "profile": args.profile}
    return result
