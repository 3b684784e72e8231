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

import os

from .errors import InstanceError


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
