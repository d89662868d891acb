"""The search's log, trace and progress (:func:`s3vm.solvers.bnb.driver.search`): a log line
every ``log_every`` nodes and at least every :data:`LOG_SECONDS`, the trace of incumbent and bound
against time (thinned past :data:`TRACE_POINTS`), and the progress published on the clock and
shown on the display. The driver's search class holds the state these methods read (a mixin)."""

from __future__ import annotations

import math
from typing import Optional

LOG_SECONDS = 5.0  # a log line at least this often, whatever log_every says
TRACE_SECONDS = 0.02  # a trace point at least this far apart (and at every new incumbent)
TRACE_POINTS = 500  # past this many, every other point is dropped and the spacing doubled
PROGRESS_SECONDS = 0.2  # the progress display is refreshed at most this often


def _gap(objective, lower_bound) -> Optional[float]:
    if objective is None or lower_bound is None:
        return None
    return max(0.0, objective - lower_bound) / max(1.0, abs(objective))


def _format_row(nodes: int, open_nodes: int, incumbent: float, bound: float,
                seconds: float) -> str:
    gap = _gap(incumbent, bound) if math.isfinite(incumbent) else None
    gap_text = "-" if gap is None or not math.isfinite(gap) else f"{gap:.2%}"
    return (f"{nodes:>10} {open_nodes:>9} {_num(incumbent):>14} {_num(bound):>14} "
            f"{gap_text:>9} {seconds:>8.1f}s")


def _num(value: Optional[float]) -> str:
    return f"{value:.8g}" if value is not None and math.isfinite(value) else "-"


class SearchLog:
    """The log, trace and progress of the driver's search (a mixin: module docstring)."""

    def _trace(self, frontier, now: float, bound: Optional[float] = None) -> None:
        bound = self._lower_bound(frontier) if bound is None else bound
        point = (now - self.start, self.nodes, self.incumbent, bound)
        for key, value in zip(("seconds", "nodes", "incumbent", "bound"), point):
            if key in ("incumbent", "bound"):
                value = float(value) if math.isfinite(value) else None
            self.trace[key].append(value)
        self.trace_last, self.trace_incumbent = now, self.incumbent
        if len(self.trace["seconds"]) > TRACE_POINTS:
            for key, values in self.trace.items():
                self.trace[key] = values[:-1:2] + values[-1:]
            self.trace_seconds *= 2

    def _report(self, frontier, now: float) -> None:
        if self.incumbent != self.trace_incumbent or now - self.trace_last >= self.trace_seconds:
            self._trace(frontier, now)
        row = None
        if self.nodes >= self.next_log or now - self.last_log >= LOG_SECONDS:
            row = self._row(frontier, now)
            self.log(row)
            self.last_log = now
            self.clock.logged()
            if self.log_every:
                self.next_log = (self.nodes // self.log_every + 1) * self.log_every
        if now - self.last_report >= PROGRESS_SECONDS:
            bound = self._lower_bound(frontier)
            self.clock.report(phase="branch and bound", nodes=self.nodes,
                              lower_bound=bound if math.isfinite(bound) else None)
            self.last_report = now
        if now - self.last_progress >= PROGRESS_SECONDS:
            self.progress(row if row is not None else self._row(frontier, now))
            self.last_progress = now

    def _row(self, frontier, now: float) -> str:
        return _format_row(self.nodes, len(frontier), self.incumbent,
                           self._lower_bound(frontier), now - self.start)
