"""Exact scorers of finished schedules, one module per problem, independent of every algorithm.

Each problem's registry entry names its evaluator (``optsched.evaluate(inst, schedule)`` dispatches to it); an
evaluator raises [`ScheduleError`][optsched.errors.ScheduleError] naming the field and the job for an infeasible
schedule
and returns an object with ``objective``, ``objective_name``, ``schedule`` (completions filled in) and
``summary()``.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..errors import ScheduleError


def check_capacity(events: Mapping[str, Sequence[tuple[float, int]]], cap: Mapping[str, int],
                   what: str = "server", time_format: str = "") -> None:
    """Raise [`ScheduleError`][optsched.errors.ScheduleError] if a server's GPUs in use exceed its capacity at some
    time. ``events``:
    per server, (time, +GPUs) when a job starts on it and (time, -GPUs) when it leaves; at equal times the
    releases count first. ``what`` names a server in the message ("node" for paper 003's clusters) and
    ``time_format`` is the format spec of the time printed.

    ```pycon
    >>> check_capacity({"s0": [(0, 2), (3, -2), (3, 2)]}, {"s0": 2})
    >>> check_capacity({"s0": [(0, 2), (1, 1)]}, {"s0": 2})
    Traceback (most recent call last):
    ...
    optsched.errors.ScheduleError: placement: server s0 uses 3 GPUs > 2 at time 1

    ```
    """
    for s, ev in events.items():
        used = 0
        for t, d in sorted(ev, key=lambda e: (e[0], e[1])):  # releases (-) before acquisitions (+) at equal t
            used += d
            if used > cap[s]:
                raise ScheduleError(f"{what} {s} uses {used} GPUs > {cap[s]} at time {t:{time_format}}",
                                    field="placement")
