"""Writing output files whole or not at all."""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import sys
import tempfile
import time
import tomllib
from contextlib import contextmanager
from typing import Optional

from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.stdio import real_stdout_fd

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


def is_special_file(path: str) -> bool:
    """Whether ``path`` is a FIFO, a character device (a pipe, ``/dev/null``, a terminal) or
    names a descriptor (``/dev/stdout``): written in place, never replaced."""
    if _names_descriptor(path) is not None:  # /dev/stdout: a rename would replace the link
        return True
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def check_writable(path: str) -> None:
    """Raise InputError unless ``path`` can be created: its folder exists and is writable (or,
    for a FIFO or a character device, the file itself is writable)."""
    if is_special_file(path):
        if not os.access(path, os.W_OK):
            raise InputError(f"cannot write {path}: permission denied")
        return
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
    temporary file is removed, so no partial output is ever left. The suffix lets writers that
    choose a format from the extension see the right one.

    A FIFO or a character device (``-o /dev/stdout``, a named pipe) is written in place: the
    finished output is copied into it, as a rename would put a regular file in its stead (and
    its folder, ``/dev``, may not be ours to write). The temporary file is then in the system's
    temporary folder.
    """
    check_writable(path)
    special = is_special_file(path)
    folder = None if special else os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(suffix=suffix, dir=folder)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would make exports private to the user
    _temporary.add(tmp)
    try:
        yield tmp
        if special:
            _copy_into(tmp, path)
        else:
            os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        _temporary.discard(tmp)
        if os.path.exists(tmp):
            os.unlink(tmp)


def _copy_into(source: str, target: str) -> None:
    """Write the bytes of ``source`` into the FIFO or device ``target`` (a FIFO once its reader
    has opened it, within :data:`FIFO_READER_SECONDS`). ``/dev/stdout`` is the real standard
    output, not the descriptor 1 that the command line points elsewhere while a command runs."""

    real = real_stdout_fd()
    if real is not None and _names_descriptor(target) == 1:
        sys.stdout.flush()
        with open(source, "rb") as src, open(os.dup(real), "wb") as dst:
            shutil.copyfileobj(src, dst)
        return
    with open(source, "rb") as src, _open_for_writing(target) as dst:
        shutil.copyfileobj(src, dst)


#: Seconds an output into a FIFO waits for a reader to open it before it gives up (exit 2).
FIFO_READER_SECONDS = 10.0


def _open_for_writing(target: str, wait: Optional[float] = None):
    """``target`` opened for writing; a FIFO only once a reader has it open.

    Opening a FIFO for writing blocks until a reader opens it: ``s3vm export -o FIFO`` with no
    reader hung until it was killed. A FIFO is opened without blocking (which fails with ENXIO
    while no reader has it) every 50 ms for up to ``wait`` seconds (:data:`FIFO_READER_SECONDS`),
    then written in blocking mode.

    Raises
    ------
    InputError
        No reader opened the FIFO in time.
    """
    try:
        fifo = stat.S_ISFIFO(os.stat(target).st_mode)
    except OSError:
        fifo = False
    if not fifo:
        return open(target, "wb")
    wait = FIFO_READER_SECONDS if wait is None else wait
    give_up = time.monotonic() + wait
    while True:
        try:
            fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
            if time.monotonic() >= give_up:
                raise InputError(f"cannot write {target}: no reader opened the FIFO within "
                                 f"{wait:g} s") from None
            time.sleep(0.05)
    os.set_blocking(fd, True)
    return open(fd, "wb")


def _names_descriptor(path: str):
    """The descriptor number a path such as ``/dev/stdout``, ``/dev/fd/1`` or
    ``/proc/self/fd/1`` stands for (following its links), else None."""
    path = os.path.abspath(path)
    for _ in range(8):
        match = re.fullmatch(r"/(?:dev/fd|proc/self/fd|proc/%d/fd)/(\d+)" % os.getpid(), path)
        if match:
            return int(match.group(1))
        if not os.path.islink(path):
            return None
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    return None


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string, quotes included: a quote, a backslash and every control
    character escaped (TOML 1.0, section "String"), so that any file name reads back as it is.

    Raises
    ------
    InputError
        ``text`` holds a character TOML cannot carry (a lone surrogate: the undecodable bytes
        of a file name).
    """
    escapes = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n",
               "\f": "\\f", "\r": "\\r"}
    out = []
    for char in text:
        code = ord(char)
        if 0xD800 <= code <= 0xDFFF:
            raise InputError(f"{text!r} cannot be written in a TOML file (it holds bytes that "
                             "are not UTF-8)")
        if char in escapes:
            out.append(escapes[char])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def read_toml(path: str) -> dict:
    """The table of a TOML file; a file that is not valid TOML, not UTF-8 text, or not readable
    is an :class:`InputError` naming it (one line, exit 2), never a traceback."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:  # tomllib reads nested arrays and tables recursively
        raise InputError(f"{path}: values nested too deeply to read (arrays or tables "
                         "within each other)") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not valid TOML (not UTF-8 text: {exc.reason} at byte "
                         f"{exc.start})") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
