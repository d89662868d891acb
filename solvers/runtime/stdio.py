"""Keep a program's standard output for its own results, whatever native libraries print.

Solver libraries write to file descriptor 1 from C (HiGHS's banner, SCIP's and SCS's logs), below
Python's ``sys.stdout``. :func:`own_stdout` moves descriptor 1 to stderr (or to the null device)
for the duration of a block and hands the block a stream on the real standard output, so that a
program's JSON or table is the only thing its reader sees. :func:`native_stdout_elsewhere` is
the library's form: every solve through the Python API runs inside it, so a program that imports
s3vm owns its standard output.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from contextlib import contextmanager
from typing import IO, Iterator


def _flush_c_stdio() -> None:
    """Flush the C library's stdio buffers, so that text a library printed before the switch
    lands where fd 1 pointed when it was printed."""
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # pragma: no cover - no C runtime to reach
        pass


_real_stdout: list = []  # the descriptors of the real standard output, innermost block last


def real_stdout_fd():
    """The descriptor of the real standard output while :func:`own_stdout` has moved fd 1
    (None outside such a block): an output file named ``/dev/stdout`` is written there."""
    return _real_stdout[-1] if _real_stdout else None


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
    _real_stdout.append(real_fd)
    try:
        yield stream
    finally:
        _real_stdout.pop()
        try:
            stream.flush()
        finally:
            sys.stdout.flush()
            _flush_c_stdio()
            os.dup2(real_fd, 1)
            os.close(real_fd)


# The redirection of :func:`native_stdout_elsewhere` is process-wide (fd 1 is), so concurrent
# solves share it: the first to enter moves fd 1, the last to leave puts it back.
_SHARED_LOCK = threading.Lock()
_shared: dict = {"depth": 0, "real_fd": None, "stream": None, "previous": None}


@contextmanager
def native_stdout_elsewhere(to_stderr: bool = False) -> Iterator[None]:
    """Send what native code writes to fd 1 to the null device (or stderr) during a block.

    The library's counterpart of :func:`own_stdout`: a solve through the Python API prints
    nothing on standard output, whatever a solver library writes there from C (HiGHS's banner,
    SDPA's notes). Python's own ``print`` keeps reaching the real standard output: while fd 1
    is elsewhere, ``sys.stdout`` (when it is the interpreter's stream) is a stream on a copy of
    the real descriptor. Re-entrant and thread-safe: nested and concurrent blocks share one
    redirection, which the first block sets up (its ``to_stderr`` wins) and the last undoes.

    Parameters
    ----------
    to_stderr : bool
        Send native output to stderr (a solver's log asked for with ``verbose``) rather than
        discarding it.
    """
    with _SHARED_LOCK:
        if _shared["depth"] == 0:
            _redirect(to_stderr)
        _shared["depth"] += 1
    try:
        yield
    finally:
        with _SHARED_LOCK:
            _shared["depth"] -= 1
            if _shared["depth"] == 0:
                _restore()


def _redirect(to_stderr: bool) -> None:
    try:
        real_fd = os.dup(1)
    except OSError:  # no fd 1 at all (a closed stdout): nothing to protect
        return
    if sys.stdout is not None:
        sys.stdout.flush()
    _flush_c_stdio()
    sink = os.dup(2) if to_stderr else os.open(os.devnull, os.O_WRONLY)
    os.dup2(sink, 1)
    os.close(sink)
    _shared["real_fd"] = real_fd
    original = sys.__stdout__
    if original is not None and sys.stdout is original:
        stream = open(real_fd, "w", buffering=1 if original.line_buffering else -1,
                      encoding=original.encoding, errors=original.errors, closefd=False)
        _shared["stream"], _shared["previous"] = stream, original
        sys.stdout = stream


def _restore() -> None:
    real_fd, stream = _shared["real_fd"], _shared["stream"]
    if real_fd is None:
        return
    if stream is not None:
        stream.flush()
        if sys.stdout is stream:
            sys.stdout = _shared["previous"]
    if sys.stdout is not None:
        sys.stdout.flush()
    _flush_c_stdio()
    os.dup2(real_fd, 1)
    os.close(real_fd)
    _shared.update(real_fd=None, stream=None, previous=None)


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


class Captured:
    """What :func:`captured_native_output` caught: ``text`` once the block has ended."""

    text: str = ""


@contextmanager
def captured_native_output() -> Iterator[Captured]:
    """Catch everything written to file descriptors 1 and 2 during a block (a solver's log
    from C, Python's own writes to ``sys.stdout`` and ``sys.stderr``) in a temporary file,
    and hand it back whole as ``text``.

    For a worker process that runs beside others (a branch and bound's node bounds): written
    straight to a shared stderr, the logs of two workers interleave line by line; caught, each
    can be written out at once, as a block.
    """
    import tempfile

    with tempfile.TemporaryFile() as sink:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        _flush_c_stdio()
        # fd 1 is caught only where it shares stderr's file (a verbose solve sends the solver's
        # log there); where it goes to the null device, what is written there stays unread.
        fds = (1, 2) if _same_file(1, 2) else (2,)
        saved = [os.dup(fd) for fd in fds]
        caught = Captured()
        try:
            for fd in fds:
                os.dup2(sink.fileno(), fd)
            yield caught
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    if stream is not None:
                        stream.flush()
                except (OSError, ValueError):
                    pass
            _flush_c_stdio()
            for fd, copy in zip(fds, saved):
                os.dup2(copy, fd)
                os.close(copy)
            sink.seek(0)
            caught.text = sink.read().decode("utf-8", errors="replace")


def _same_file(a: int, b: int) -> bool:
    """Whether descriptors ``a`` and ``b`` are open on the same file."""
    try:
        first, second = os.fstat(a), os.fstat(b)
    except OSError:
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)
