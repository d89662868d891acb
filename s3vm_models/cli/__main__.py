"""``python -m s3vm.cli``: the command line, as the ``s3vm`` script runs it."""

from s3vm.cli import console_main

console_main()
