"""What the commands print for scripts (``--json``): an evaluation's figures, table cells as plain JSON values; and
the exit code of a run a signal stopped."""

from __future__ import annotations

import math
from typing import Any


def evaluation_dict(ev: Any) -> dict[str, Any]:
    """The evaluator's figures (objective and its name, makespan, average JCT, ... where the problem has them)."""
    out: dict[str, Any] = {"objective": ev.objective, "objective_name": getattr(ev, "objective_name", "objective")}
    for key in ("makespan", "average_jct", "alpha_ms", "exceeds_horizon"):
        v = getattr(ev, key, None)
        if v is not None:
            out[key] = v
    servers = getattr(ev, "servers", None)
    if servers is not None:
        out["servers"] = list(servers) if not isinstance(servers, int) else servers
    out["summary"] = ev.summary()
    return out


def clean(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return None
    if hasattr(v, "item"):
        return clean(v.item())
    return v


INTERRUPTED_EXIT = {"SIGINT": 130, "SIGTERM": 143}  # 128 + the signal's number, as a shell reports it


def signal_exit(status: Any, info: Any) -> int:
    """130 (Ctrl-C) or 143 (SIGTERM) when a signal stopped an exact model (``status`` is ``interrupted``; ``info``
    names the signal), else 0. A command still prints (and writes) the best result found so far, labelled
    ``interrupted``, so an interrupted run never passes for a finished one: ``solve`` and ``place`` both use this.

    ```pycon
    >>> from optsched.result import SolveStatus
    >>> signal_exit(SolveStatus.INTERRUPTED, {"interrupted": "SIGTERM"}), signal_exit(SolveStatus.OPTIMAL, {})
    (143, 0)

    ```
    """
    from ..result import SolveStatus

    if status != SolveStatus.INTERRUPTED:
        return 0
    return INTERRUPTED_EXIT.get(str((info or {}).get("interrupted")), 130)
