"""One module per command of the ``s3vm`` command line, each with ``add_parser(subparsers)``
(its flags) and ``run(args, out) -> int`` (its work, over the Python API; ``out`` is the
command's own standard output).

A new command is one module here and one line in :data:`COMMANDS`.
"""

from __future__ import annotations

import importlib

#: command name -> its module, in the order ``s3vm --help`` lists them.
COMMANDS = {
    "solve": "s3vm.cli.commands.solve",
    "compare": "s3vm.cli.commands.compare",
    "export": "s3vm.cli.commands.export",
    "list": "s3vm.cli.commands.list",
    "plot": "s3vm.cli.commands.plot",
    "select": "s3vm.cli.commands.select",
    "bench": "s3vm.cli.commands.bench",
    "dataset": "s3vm.cli.commands.dataset",
    "check-certificate": "s3vm.cli.commands.check_certificate",
}


def command_module(name: str):
    """The module of command ``name``."""
    return importlib.import_module(COMMANDS[name])
