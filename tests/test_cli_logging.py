"""The command line's stderr handler for drivers' log lines (``s3vm.cli.output.StderrLog``)."""

from __future__ import annotations

import io
import logging

import pytest

from s3vm.cli.output import StderrLog


class _Tty(io.StringIO):
    def isatty(self):
        return True


def _logger(handler):
    logger = logging.getLogger("s3vm.test-handler")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return logger


@pytest.mark.parametrize("stream_type", [io.StringIO, _Tty])
def test_log_lines_are_written_whole(stream_type):
    stream = stream_type()
    log = _logger(StderrLog(stream))
    log.info("nodes 10 open 3")
    log.info("nodes 20 open 1")
    assert stream.getvalue().splitlines()[-2:] == ["nodes 10 open 3", "nodes 20 open 1"]


def test_progress_is_dropped_off_a_terminal():
    stream = io.StringIO()
    log = _logger(StderrLog(stream))
    log.info("progress 1", extra={"progress": True})
    log.info("a line")
    assert stream.getvalue() == "a line\n"


def test_progress_is_redrawn_in_place_on_a_terminal():
    stream = _Tty()
    handler = StderrLog(stream)
    log = _logger(handler)
    log.info("progress 1", extra={"progress": True})
    log.info("progress 2", extra={"progress": True})
    log.info("a line")
    text = stream.getvalue()
    # Each redraw starts with a carriage return; no newline until a real line comes.
    assert text.count("\r") >= 3 and "progress 2" in text
    assert text.endswith("a line\n") and text.count("\n") == 1
    log.info("progress 3", extra={"progress": True})
    handler.close()
    assert stream.getvalue().endswith("\r\033[K")


def test_quiet_installs_no_handler():
    from s3vm.cli.output import configure_logging

    class Args:
        quiet = True

    assert configure_logging(Args()) is None
