"""What every algorithm returns: a :class:`Schedule` inside a :class:`Result`.

A schedule says, per job, when it starts and how many GPUs it takes on which servers; it is the contract
between algorithms and :mod:`optsched.evaluate`, which scores it independently of who made it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping


class SolveStatus(str, enum.Enum):
    """Outcome of a solve. Heuristics return ``FEASIBLE``; exact models say what they proved."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    TIME_LIMIT = "time limit"  # stopped by the time limit; a best schedule is attached when one was found
    UNKNOWN = "unknown"

    def __str__(self) -> str:  # so f-strings print "optimal", not "SolveStatus.OPTIMAL"
        return self.value


@dataclass(frozen=True)
class ScheduledJob:
    """One job's decision: start slot/time, GPUs per server, and (when known) its completion.

    ``stage_placement`` is optional detail for multi-stage jobs: server id -> GPUs per stage.
    """

    id: str
    start: float
    placement: Mapping[str, int]
    completion: float | None = None
    stage_placement: Mapping[str, tuple[int, ...]] | None = None

    def __post_init__(self) -> None:
        # drop zero entries so that {"s0": 2, "s1": 0} and {"s0": 2} are the same placement
        object.__setattr__(self, "placement",
                           MappingProxyType({s: int(n) for s, n in sorted(self.placement.items()) if n}))

    @property
    def gpus(self) -> int:
        return sum(self.placement.values())

    @property
    def servers(self) -> tuple[str, ...]:
        return tuple(self.placement)


@dataclass(frozen=True)
class Schedule:
    """A complete schedule: one :class:`ScheduledJob` per job, in any order.

    >>> s = Schedule([ScheduledJob("j0", 0, {"s0": 2}, completion=5)])
    >>> s["j0"].gpus, s.makespan
    (2, 5)
    """

    jobs: tuple[ScheduledJob, ...]
    algorithm: str = ""
    instance: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))

    def __getitem__(self, job_id: str) -> ScheduledJob:
        for j in self.jobs:
            if j.id == job_id:
                return j
        raise KeyError(job_id)

    def __iter__(self):
        return iter(self.jobs)

    def __len__(self) -> int:
        return len(self.jobs)

    @property
    def makespan(self) -> float | None:
        """Latest completion, or ``None`` while any completion is unknown."""
        c = [j.completion for j in self.jobs]
        return max(c) if c and None not in c else None

    def with_completions(self, completions: Mapping[str, float]) -> "Schedule":
        """A copy whose jobs carry the given completion times."""
        return Schedule(tuple(ScheduledJob(j.id, j.start, j.placement, completions[j.id], j.stage_placement)
                              for j in self.jobs), self.algorithm, self.instance)


@dataclass(frozen=True)
class Result:
    """A solve's outcome, in the style of PyJobShop's ``Result``.

    ``objective`` is the schedule's value as scored by the evaluator (makespan for RAR-DDLS, total completion
    time for total-JCT problems); ``lower_bound`` a proven bound on the optimum where one is known.
    ``info`` holds algorithm-specific figures (e.g. SJF-BCO's final theta and kappa).
    """

    objective: float | None
    status: SolveStatus
    runtime_s: float
    schedule: Schedule | None
    algorithm: str
    lower_bound: float | None = None
    seed: int | None = None
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def gap(self) -> float | None:
        """Relative gap (objective - bound) / objective, ``None`` without both."""
        if self.objective is None or self.lower_bound is None:
            return None
        if self.objective == 0:
            return 0.0
        return max(0.0, (self.objective - self.lower_bound) / abs(self.objective))

    def summary(self) -> str:
        parts = [f"algorithm={self.algorithm}", f"status={self.status}",
                 f"objective={_fmt(self.objective)}"]
        if self.lower_bound is not None:
            parts.append(f"bound={_fmt(self.lower_bound)}")
            parts.append(f"gap={self.gap:.2%}")
        parts.append(f"runtime={self.runtime_s:.3f}s")
        return " ".join(parts)


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return str(int(x)) if float(x).is_integer() else f"{x:.4g}"


def schedule_from_rows(rows: Iterable[tuple[str, float, Mapping[str, int]]], algorithm: str = "") -> Schedule:
    """Convenience: build a schedule from ``(job id, start, placement)`` rows."""
    return Schedule(tuple(ScheduledJob(j, s, p) for j, s, p in rows), algorithm)
