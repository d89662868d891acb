"""Exceptions that the command line turns into exit status 2 and one line.

Everything below the CLI raises; nothing below it prints or exits.
"""


class S3VMError(Exception):
    """Base class of the errors a user can cause and fix."""


class InputError(S3VMError, ValueError):
    """Bad data, bad parameters, or an unknown name: the user's input is at fault."""


class SolverUnavailableError(S3VMError, RuntimeError):
    """The requested solver is not installed or has no license."""


class NumericalError(S3VMError):
    """Options or data so extreme that a computation cannot be carried out in floating point
    (a Newton method that cannot converge at C = 1e12, say); the message says what to change."""
