"""The ``s3vm`` command line: parse, call the Python API, print. Nothing else lives here.

- :mod:`~s3vm.cli.main`: the entry points (:func:`main`, :func:`console_main`) and exit statuses;
- :mod:`~s3vm.cli.parser`: one-line parse errors, the flag groups commands share, and the
  flags read back into the API's arguments;
- :mod:`~s3vm.cli.output`: what is printed (results, tables, log lines on stderr);
- :mod:`~s3vm.cli.commands`: one module per command; a new command is one module there and one
  line in its table.

The top face: it may import anything of the package; nothing imports it.
"""

from s3vm.cli.main import console_main, main

__all__ = ["main", "console_main"]
