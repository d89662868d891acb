"""A wall clock with an optional limit, shared by a solve and every step inside it.

One clock starts when a solve starts, before its model is built, so that the time limit covers
data preparation, model building and every solver call; each step asks for the time that remains
(:meth:`Clock.remaining`) instead of the whole limit.
"""

from __future__ import annotations

import math
import time
from typing import Optional

#: The time handed to a solver call when the limit is used up: solvers reject a limit of 0 (or
#: read it as none), and a call this short returns at once with its time-limit status.
MIN_CALL_SECONDS = 1e-9


class Clock:
    """Seconds since creation (``time.perf_counter``), against an optional limit.

    Parameters
    ----------
    limit : float, optional
        Seconds; None for no limit.
    """

    def __init__(self, limit: Optional[float] = None):
        self.start = time.perf_counter()
        self.limit = None if limit is None else float(limit)

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start

    def remaining(self) -> Optional[float]:
        """Seconds left (at least :data:`MIN_CALL_SECONDS`), None without a limit."""
        if self.limit is None:
            return None
        return max(self.limit - self.seconds, MIN_CALL_SECONDS)

    def expired(self) -> bool:
        """Whether the limit is reached."""
        return self.limit is not None and self.seconds >= self.limit

    @property
    def deadline(self) -> float:
        """The ``time.perf_counter()`` value at which the limit runs out (inf without one)."""
        return math.inf if self.limit is None else self.start + self.limit
