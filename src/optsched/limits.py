"""Sizes that cannot fit: refuse them up front, with the estimate, instead of hanging or running out of memory.

```pycon
>>> require_memory(10, 1_000, "jobs", field="--jobs")          # 10 kB: fine
>>> require_memory(10**12, 1_000, "jobs", field="--jobs")      # doctest: +ELLIPSIS
Traceback (most recent call last):
...
optsched.errors.InstanceError: --jobs: 1,000,000,000,000 jobs need about 1.0 PB of memory, more than this machine's ...

```
"""

from __future__ import annotations

import contextlib
import gc
import os
from typing import Iterator

from .errors import InstanceError

# CP-SAT's random_seed is an int32 (numpy's generators take more): one range for every door, API and CLI
MAX_SEED = 2**31 - 1


def check_seed(seed: object, name: str = "seed", *, job: str | None = None) -> None:
    """Refuse a seed that is not None or an integer in 0 .. [`MAX_SEED`][optsched.limits.MAX_SEED].

    ```pycon
    >>> check_seed(7)
    >>> check_seed(-1)
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: seed: must be None or an integer in 0..2147483647, got -1

    ```
    """
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED):
        raise InstanceError(f"must be None or an integer in 0..{MAX_SEED}, got {seed!r:.60}", field=name, job=job)


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector in the block, restoring its state after (also on an error).

    For code that allocates millions of acyclic objects (parsing a 100,000-job file, a packing's heap entries):
    reference counting frees them all, and the collector's passes over everything alive cost 10-15 % of such a run
    without finding any garbage. Nested and concurrent uses keep it paused until the outermost block ends.

    ```pycon
    >>> import gc
    >>> with paused_gc():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True

    ```
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def physical_memory_bytes() -> int:
    """This machine's physical memory (a large default where the OS does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 1 << 40


def human_bytes(n: float) -> str:
    """``1536`` -> ``'1.5 kB'`` (powers of 1000)."""
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000.0
    return f"{n:.1f} PB"  # pragma: no cover


def require_memory(count: int, bytes_each: float, what: str, *, field: str, job: str | None = None) -> None:
    """Raise [`InstanceError`][optsched.errors.InstanceError] when ``count`` items of about ``bytes_each`` bytes cannot
    fit in memory."""
    need = float(count) * float(bytes_each)
    have = physical_memory_bytes()
    if need > have:
        raise InstanceError(f"{count:,} {what} need about {human_bytes(need)} of memory, more than this machine's "
                            f"{human_bytes(have)}", field=field, job=job)
