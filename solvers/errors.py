"""Exceptions that the command line turns into exit status 2 and one line.

Everything below the CLI raises; nothing below it prints or exits.
"""


class S3VMError(Exception):
    """Base class of the errors a user can cause and fix."""


#: How messages name parameters. The Python API speaks in keywords (``kernel='rbf'``), the
#: command line in flags (``--kernel rbf``): messages are written once, with flags, and
#: ``translate`` (set by the model layer, which owns the table of flags) rewrites them for the
#: Python API unless ``spelling`` is ``"cli"``, which the command line sets for its run. A
#: process-wide value, not a context variable: solves run in threads of their own.
MESSAGES = {"spelling": "python", "translate": None}


class InputError(S3VMError, ValueError):
    """Bad data, bad parameters, or an unknown name: the user's input is at fault.

    The message names parameters as the caller gives them: keywords from the Python API
    (``kernel= must be ...``), flags from the command line (``--kernel must be ...``); see
    :data:`MESSAGES`.
    """

    def __init__(self, *args):
        translate = MESSAGES["translate"]
        if (args and isinstance(args[0], str) and translate is not None
                and MESSAGES["spelling"] == "python"):
            args = (translate(args[0]),) + args[1:]
        super().__init__(*args)


class SolverUnavailableError(S3VMError, RuntimeError):
    """The requested solver is not installed or has no license."""


class NumericalError(S3VMError):
    """Options or data so extreme that a computation cannot be carried out in floating point
    (a Newton method that cannot converge at C = 1e12, say); the message says what to change."""


class InexactFileWarning(UserWarning):
    """A model file written out that another reader may solve below the problem's optimum (its
    big-M constants within reach of the readers' integrality tolerance): exports warn with it,
    and ``s3vm export`` prints it as one line."""
