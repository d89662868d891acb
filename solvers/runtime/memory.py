"""Refuse a problem whose dense matrices would not fit in memory, before building anything.

A formulation that forms n x n matrices (a kernel matrix, a semidefinite block, an LP with a
kernel expansion over every point) grows with n^2; past the memory of the machine it is killed
by the system or dies in an allocator, after minutes. :func:`check_dense_memory` compares an
estimate, ``bytes_per_entry * n^2``, with the memory this process can still use
(:func:`available_memory`) and raises :class:`~s3vm.solvers.errors.InputError` with the caller's
advice instead.

The memory available is the least of: the system's available memory (``MemAvailable``), what
the cgroup (a container's limit) leaves, what the address-space limit (``ulimit -v``) leaves,
and ``S3VM_MEMORY_LIMIT`` (bytes, or with a suffix K, M, G, T) when set.
"""

from __future__ import annotations

import os
import resource
from typing import Optional

from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.keys import ENVIRONMENT, environment_value


def parse_size(text: str) -> int:
    """Bytes of a size such as ``"512M"``, ``"2G"`` or ``"1500000"``, checked as
    ``S3VM_MEMORY_LIMIT`` is (:data:`s3vm.solvers.runtime.keys.ENVIRONMENT`)."""
    return int(ENVIRONMENT["S3VM_MEMORY_LIMIT"].parse(str(text)))


def _read_int(path: str) -> Optional[int]:
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _proc_kib(path: str, key: str) -> Optional[int]:
    """Bytes of the ``key: N kB`` line of a /proc file (meminfo, status), None when absent."""
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _meminfo(key: str) -> Optional[int]:
    return _proc_kib("/proc/meminfo", key)


def _own_status(key: str) -> Optional[int]:
    return _proc_kib("/proc/self/status", key)


def available_memory() -> Optional[int]:
    """Bytes this process can still allocate (see the module notes), None when unknown."""
    candidates = []
    limit = environment_value("S3VM_MEMORY_LIMIT")
    if limit is not None:
        candidates.append(int(limit))
    free = _meminfo("MemAvailable")
    if free is None:
        try:
            free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            free = None
    if free is not None:
        candidates.append(free)
    cap = _read_int("/sys/fs/cgroup/memory.max")  # cgroup v2 ("max": none)
    used = _read_int("/sys/fs/cgroup/memory.current")
    if cap is None:  # cgroup v1
        cap = _read_int("/sys/fs/cgroup/memory/memory.limit_in_bytes")
        used = _read_int("/sys/fs/cgroup/memory/memory.usage_in_bytes")
    if cap is not None and cap < 1 << 60:
        candidates.append(max(cap - (used or 0), 0))
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft not in (resource.RLIM_INFINITY, -1):
        size = _own_status("VmSize") or 0
        candidates.append(max(soft - size, 0))
    return min(candidates) if candidates else None


def _gb(value: float) -> str:
    return f"{value / 1e9:.1f} GB" if value >= 1e8 else f"{value / 1e6:.0f} MB"


def check_dense_memory(n: int, bytes_per_entry: float, what: str, advice: str,
                       unit: str = "points", base: float = 0.0) -> None:
    """Raise InputError when ``bytes_per_entry * n^2`` bytes exceed :func:`available_memory`.

    Parameters
    ----------
    n : int
        The side of the n x n matrices (the number of points).
    bytes_per_entry : float
        Peak bytes per entry of one n x n matrix, all the step's matrices and solver copies
        counted (8 for a single float64 matrix; measured per formulation).
    what : str
        Who needs them, for the message (``"sdp"``).
    advice : str
        What to do instead (``"use sdp-lowrank, which forms no n x n matrix"``).
    unit : str
        What n counts, for the message.
    base : float
        Bytes the step needs whatever n (the libraries it imports and their work space).
    """
    if bytes_per_entry <= 0:
        return
    need = float(base) + float(bytes_per_entry) * float(n) * float(n)
    free = available_memory()
    if free is not None and need > free:
        raise InputError(f"{what} needs about {_gb(need)} for n = {n} {unit} (n x n matrices), "
                         f"more than the {_gb(free)} of memory available: {advice}")


def check_array_memory(rows: int, columns: int, bytes_per_entry: float, what: str,
                       advice: str) -> None:
    """Raise InputError when a dense ``rows x columns`` array, at ``bytes_per_entry`` bytes per
    entry (its copies counted), exceeds :func:`available_memory`: data read dense (a LIBSVM
    file's features) or drawn by a generator, checked before it is formed."""
    need = float(bytes_per_entry) * float(rows) * float(columns)
    free = available_memory()
    if free is not None and need > free:
        raise InputError(f"{what} needs about {_gb(need)} for {rows:,} x {columns:,} dense "
                         f"values, more than the {_gb(free)} of memory available: {advice}")
