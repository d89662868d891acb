"""Writing output files whole or not at all."""

from __future__ import annotations

import os
import tempfile
import tomllib
from contextlib import contextmanager

from s3vm.solvers.errors import InputError


_temporary: set = set()


def check_not_input(path: str, inputs) -> None:
    """Raise InputError when ``path`` is one of the files ``inputs`` (an output must never
    overwrite the data it was made from)."""
    target = os.path.realpath(path)
    for item in inputs or ():
        if item is None:
            continue
        source = os.path.realpath(os.fspath(item))
        same = source == target
        if not same and os.path.exists(path) and os.path.exists(source):
            try:
                same = os.path.samefile(path, source)
            except OSError:
                same = False
        if same:
            raise InputError(f"cannot write {path}: it is an input of this command "
                             f"({os.fspath(item)}); choose another file")


def remove_temporary_files() -> None:
    """Remove the temporary files of :func:`atomic_output` blocks still open (before a process
    ends without unwinding them)."""
    for tmp in list(_temporary):
        try:
            os.unlink(tmp)
        except OSError:
            pass
        _temporary.discard(tmp)


def check_writable(path: str) -> None:
    """Raise InputError unless ``path`` can be created: its folder exists and is writable."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError(f"cannot write {path}: directory {directory} does not exist")
    if os.path.isdir(path):
        raise InputError(f"cannot write {path}: it is a directory")
    if not os.access(directory, os.W_OK):
        raise InputError(f"cannot write {path}: directory {directory} is not writable")


@contextmanager
def atomic_output(path: str, suffix: str = ""):
    """Yield a temporary path beside ``path``; rename it to ``path`` when the block succeeds.

    On any failure (a signal included: the command line turns SIGTERM into an exception) the
    temporary file is removed, so no partial output is ever left. The suffix lets writers that choose a format from the extension see the right one.
    """
    check_writable(path)
    fd, tmp = tempfile.mkstemp(suffix=suffix, dir=os.path.dirname(os.path.abspath(path)))
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would make exports private to the user
    _temporary.add(tmp)
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        _temporary.discard(tmp)
        if os.path.exists(tmp):
            os.unlink(tmp)


def read_toml(path: str) -> dict:
    """The table of a TOML file; a file that is not valid TOML, not UTF-8 text, or not readable
    is an :class:`InputError` naming it (one line, exit 2), never a traceback."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML ({exc})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not valid TOML (not UTF-8 text: {exc.reason} at byte "
                         f"{exc.start})") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
