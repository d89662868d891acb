"""The ``s3vm`` console script's own module: it notes SIGINT and SIGTERM from its first line on,
before the command line's modules are imported.

Importing :mod:`s3vm.cli` (the parser, the output, the supervisor, numpy, tabulate) takes 0.25 to
0.35 s on a lightly loaded 2-core machine and more under load; a signal there ended the process
with a traceback (SIGINT) or at once (SIGTERM), with nothing on stdout. Here the signal is only
noted; :func:`s3vm.cli.main.console_main` delivers it once the command can answer it (a solve
then answers with what it has: docs/reliability.md, "Signals"). What remains unanswered is the
start of the interpreter itself, before this module's first line (``python -c "import s3vm"``:
0.04 to 0.10 s on that machine), where the system's default action applies.

Only the console script imports this module: importing :mod:`s3vm` or :mod:`s3vm.cli` from a
program installs no handler.
"""

import signal

#: The signals noted before the command line's handlers took over, in the order they came.
NOTED: list = []


def _note(signum, frame):
    NOTED.append(signum)


for _signum in (signal.SIGINT, signal.SIGTERM):
    signal.signal(_signum, _note)


def main() -> None:
    """The console script: :func:`s3vm.cli.main.console_main`, handed the signals noted so far."""
    # Imported after the handlers above are in place: that import is the window they cover.
    from s3vm.cli.main import console_main

    console_main(noted=NOTED)
