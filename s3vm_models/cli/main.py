"""The entry points of the ``s3vm`` command line: :func:`main` (in-process, returns the exit
status) and :func:`console_main` (the console script).

Exit status: 0 with a result, 2 on bad input or a missing solver (one line on stderr),
1 on an unexpected internal failure (one line; S3VM_DEBUG=1 shows the traceback), 130 after
SIGINT (Ctrl-C) and 143 after SIGTERM (128 + the signal number; a solve stopped by either prints
its best result so far first, as JSON with --json), 141 when the reader of stdout went away.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import warnings
from typing import Optional, Sequence

from s3vm.cli.commands import command_module
from s3vm.cli.output import configure_logging
from s3vm.cli.parser import PROG, build_parser
from s3vm.solvers.errors import MESSAGES, InputError, S3VMError
from s3vm.solvers.runtime.clock import charge_imports, process_start
from s3vm.solvers.runtime.files import remove_temporary_files
from s3vm.solvers.runtime.keys import check_environment, environment_value
from s3vm.solvers.runtime.stdio import own_stdout, quiet_stderr
from s3vm.solvers.runtime.supervisor import (
    Interrupted,
    abandoned_workers,
    received_signal,
    set_isolation,
    signal_name,
    signals_interrupt,
    signals_noted,
)

#: Whether the last command solved under a time limit (:func:`console_main` then exits at
#: once; not ``bench``, whose worker processes are ended at the interpreter's exit).
_TIMED = [False]


def main(argv: Optional[Sequence[str]] = None, started: Optional[float] = None,
         noted: Optional[list] = None) -> int:
    """Entry point of the ``s3vm`` console script; returns the exit status.

    A command's time limit counts from ``started`` (a ``time.perf_counter()`` value; the console
    script gives the process's start), else from this call: building the parser and reading
    the data count.

    Standard output carries only the command's output: while a command runs, whatever else
    reaches file descriptor 1 (solver libraries print from C) goes to the null device, or to
    stderr with ``--verbose``. Python warnings (numpy's, the solvers') are shown with
    ``--verbose`` only: a message of ours is one line. SIGTERM, like Ctrl-C, stops a solve, which
    prints its best result so far; the status is then 128 + the signal number.

    A signal before the command can answer it (the environment checked, the arguments read,
    stdout taken over) is noted, not raised, and appended to ``noted`` (the console script
    passes the list its first module noted signals in, before this module was imported); the
    first one is then delivered to a command that answers signals (``solve``:
    ``answers_noted_signals``) at its start, where it answers "interrupted before the data was
    read" (a JSON object with ``--json``), and raised before any other command runs.
    """
    pending = noted if noted is not None else []
    started = time.perf_counter() if started is None else started
    handler = None
    # Messages name the flags the user typed (--kernel), not the Python API's keywords.
    spelling, MESSAGES["spelling"] = MESSAGES["spelling"], "cli"
    try:
        with signals_interrupt(), warnings.catch_warnings(), \
                signals_noted(pending) as stop_noting:
            # Every environment variable is checked first: a wrong value is one line and exit 2
            # before anything runs, not an internal error when a solve first reads it.
            check_environment()
            try:
                args = build_parser().parse_args(argv)
            except SystemExit as exc:  # --help and --version print and stop: a success
                return int(exc.code or 0)
            args.started = started
            _TIMED[0] = (args.command in ("solve", "compare", "plot")
                         and getattr(args, "time_limit", None) is not None)
            if not getattr(args, "verbose", False):
                warnings.simplefilter("ignore")
            handler = configure_logging(args)
            quiet = getattr(args, "quiet", False) and not getattr(args, "verbose", False)
            if sys.stdout is None:
                # Started with stdout closed (`s3vm ... >&-`): the descriptor the results would
                # go to may be any file the program opens next.
                raise InputError("standard output is closed: redirect it to a file or to "
                                 "/dev/null")
            out = None
            try:
                with own_stdout(native_to_stderr=getattr(args, "verbose", False)) as real, \
                        quiet_stderr(quiet):
                    out = OutputStream(real)
                    # The command's module imports the API (a second under load): a signal
                    # during that import is noted too (raised, it left stdout empty).
                    command = command_module(args.command)
                    # From here a signal is raised (Interrupted); one noted before is the
                    # command's to answer, or ends it before it runs.
                    stop_noting()
                    args.noted_signal = pending[0] if pending else None
                    if pending and not getattr(command, "answers_noted_signals", False):
                        raise Interrupted(pending[0])
                    try:
                        status = command.run(args, out)
                    finally:
                        out.flush()  # a closed pipe or a full disk shows here, not at exit
            except BrokenPipeError:
                raise
            except OSError:
                # Standard output refused a write (`> /dev/full`): the flush that closes the
                # block fails again, after the write reported it.
                if out is None or out.failed is None:
                    raise
                raise InputError(out.failed) from None
            return status
    except BrokenPipeError:
        # The reader of stdout went away (`s3vm ... | head`): stop quietly, as `cat` would.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141  # 128 + SIGPIPE, what the shell reports for a tool killed by the pipe
    except S3VMError as exc:
        print(f"{PROG}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except Interrupted as exc:
        print(f"{PROG}: interrupted by {exc.name}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted by SIGINT", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug, not the user's fault: one line unless debugging
        signum = received_signal()
        if signum is not None:
            # The signal landed inside a library that turned it into an error of its own.
            print(f"{PROG}: interrupted by {signal_name(signum)}", file=sys.stderr)
            return 128 + signum
        if _debugging():
            raise
        print(f"{PROG}: internal error: {type(exc).__name__}: {_one_line(exc)}", file=sys.stderr)
        return 1
    finally:
        MESSAGES["spelling"] = spelling
        if handler is not None:
            logging.getLogger("s3vm").removeHandler(handler)
            handler.close()


def _debugging() -> bool:
    try:
        return environment_value("S3VM_DEBUG", "0") == "1"
    except InputError:  # refused before the command ran
        return False


class OutputStream:
    """The command's standard output: a write that fails for want of space or of a device
    (``> /dev/full``, a full disk) is an :class:`InputError` (exit 2, one line), not an
    internal error; a reader that went away stays a BrokenPipeError (exit 141)."""

    def __init__(self, stream):
        self._stream = stream
        self.failed = None  # the message of a write that failed

    def write(self, text: str) -> int:
        return self._guard(self._stream.write, text)

    def flush(self) -> None:
        self._guard(self._stream.flush)

    def _guard(self, call, *args):
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            self.failed = f"cannot write standard output: {exc.strerror or exc}"
            raise InputError(self.failed) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def console_main(noted: Optional[list] = None) -> None:
    """The console script: :func:`main` with each solve in a child process, then exit. When a
    solve step that could not be cut short was left running in a thread (a time limit or a
    signal), the process ends at once, after its output is flushed and no temporary file is
    left, instead of waiting for the step; so does a command a signal stopped, and one run
    with a time limit, whose caller waits on the wall clock (tearing down the solver libraries'
    modules at exit took 4.3 s on a machine at load 15, against 0.35 s for ``os._exit``). Its time
    limit counts from the process's start and charges the solver library's import: the whole command
    is on the clock.

    ``noted``: the signals the console script's first module (:mod:`s3vm.console`) noted
    before this module was imported, and that its handler notes after :func:`main` returns;
    :func:`main` delivers the first. One that comes after the answer is written ends the
    command with its status (128 + its number) all the same."""
    noted = [] if noted is None else noted
    # Each solve in a child process (Linux): a library that holds the GIL for seconds cannot
    # make the time limit or a signal wait, and running out of memory ends the solve, not the
    # program. S3VM_ISOLATE=0 keeps solves in a thread of this process.
    try:
        set_isolation(environment_value("S3VM_ISOLATE", "1") != "0")
    except InputError:
        pass  # main() refuses the value in one line

    # The caller waits on the wall clock: a time limit covers the whole command, from the
    # process's start (starting Python, the imports, the solver library's included).
    charge_imports()
    status = main(started=process_start(), noted=noted)
    if noted and status == 0:
        # Noted after main's handlers were gone (the answer written) or while --help printed:
        # the answer stands, and the status says that a signal ended the command.
        status = 128 + noted[-1]
    # A signal's status (128 + its number): the user asked to stop, and the answer is printed;
    # the interpreter's teardown of the solver libraries took 2 s more at load 12.
    if abandoned_workers() or _TIMED[0] or status > 128:
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:  # None: started with the stream closed
                    stream.flush()
            except (OSError, ValueError):
                pass
        remove_temporary_files()
        os._exit(status)
    sys.exit(status)
