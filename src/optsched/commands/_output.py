"""What the commands print for scripts (``--json``): an evaluation's figures, table cells as plain JSON values."""

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
