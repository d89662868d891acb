"""Keep a program's standard output for its own results, whatever native libraries print.

Solver libraries write to file descriptor 1 from C (HiGHS's banner, SCIP's and SCS's logs), below
Python's ``sys.stdout``. :func:`own_stdout` moves descriptor 1 to stderr (or to the null device)
for the duration of a block and hands the block a stream on the real standard output, so that a
program's JSON or table is the only thing its reader sees.
"""

from __future__ import annotations

import ctypes
import os
import sys
from contextlib import contextmanager
from typing import IO, Iterator


def _flush_c_stdio() -> None:
    """Flush the C library's stdio buffers, so that text a library printed before the switch
    lands where fd 1 pointed when it was printed."""
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # pragma: no cover - no C runtime to reach
        pass


@contextmanager
def own_stdout(native_to_stderr: bool = False) -> Iterator[IO[str]]:
    """Yield a text stream on the real standard output while fd 1 goes elsewhere.

    Parameters
    ----------
    native_to_stderr : bool
        Where everything else written to fd 1 goes: stderr (True, for ``--verbose``) or the null
        device (False).

    Notes
    -----
    Python-level writes to ``sys.stdout`` follow fd 1 when ``sys.stdout`` is the interpreter's
    own stream; a caller that replaced ``sys.stdout`` (a test's capture) gets that object back
    unchanged, and fd 1 is still redirected.
    """
    try:
        real_fd = os.dup(1)
    except OSError:  # no fd 1 at all (a closed stdout): nothing to protect
        yield sys.stdout
        return
    sys.stdout.flush()
    _flush_c_stdio()
    sink = os.dup(2) if native_to_stderr else os.open(os.devnull, os.O_WRONLY)
    os.dup2(sink, 1)
    os.close(sink)
    replaced = sys.stdout is not sys.__stdout__
    stream = sys.stdout if replaced else open(real_fd, "w", encoding="utf-8",
                                              errors="replace", closefd=False)
    try:
        yield stream
    finally:
        try:
            stream.flush()
        finally:
            sys.stdout.flush()
            _flush_c_stdio()
            os.dup2(real_fd, 1)
            os.close(real_fd)


@contextmanager
def quiet_stderr(on: bool = True) -> Iterator[None]:
    """Send file descriptor 2 to the null device for the duration of a block (when ``on``).

    For a quiet command line (``-q``): solver libraries write errors and warnings to fd 2 from
    C whatever their log settings (SCIP's error call traces, up to hundreds of lines when an
    allocation fails, its warnings while a model is created), and a solve's child process
    inherits the descriptor. The program's own one-line messages are printed after the block.
    """
    if not on:
        yield
        return
    try:
        saved = os.dup(2)
    except OSError:  # no fd 2 at all: nothing to silence
        yield
        return
    sys.stderr.flush()
    _flush_c_stdio()
    sink = os.open(os.devnull, os.O_WRONLY)
    os.dup2(sink, 2)
    os.close(sink)
    try:
        yield
    finally:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        _flush_c_stdio()
        os.dup2(saved, 2)
        os.close(saved)
