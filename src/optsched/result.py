"""What every algorithm returns: a [`Schedule`][optsched.result.Schedule] inside a [`Result`][optsched.result.Result].

A schedule says, per job, when it starts and how many GPUs it takes on which servers; it is the contract
between algorithms and the evaluators ([`optsched.evaluators`][]), which score it independently of who made
it. Schedules and results are immutable, pickle and deep-copy with the standard library (so
``ProcessPoolExecutor.map(optsched.solve, ...)`` works), and turn into dicts and pandas frames.

```pycon
>>> import pickle
>>> r = Result(12, SolveStatus.OPTIMAL, 0.5, Schedule([ScheduledJob("j0", 0, {"s0": 2}, completion=12)]),
...            "exact", lower_bound=12, info={"nodes": 3})
>>> r
Result(algorithm='exact', status=optimal, objective=12, bound=12, gap=0.00%, runtime=0.500s, jobs=1)
>>> pickle.loads(pickle.dumps(r)) == r
True

```
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Protocol

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


class FrozenDict(dict[Any, Any]):
    """A read-only dict that pickles and deep-copies (``types.MappingProxyType`` does neither).

    ```pycon
    >>> d = FrozenDict({"s0": 2})
    >>> d["s0"], isinstance(d, dict)
    (2, True)
    >>> d["s1"] = 1
    Traceback (most recent call last):
    ...
    TypeError: read-only mapping

    ```
    """

    __slots__ = ()

    def _readonly(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("read-only mapping")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _readonly

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (dict(self),))


def freeze(value: Any) -> Any:
    """``value`` with every mapping inside it (recursively) made a [`FrozenDict`][optsched.result.FrozenDict]."""
    if isinstance(value, Mapping):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    return value


class SolveStatus(str, enum.Enum):
    """Outcome of a solve. Heuristics return ``FEASIBLE``; exact models say what they proved."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    TIME_LIMIT = "time limit"  # stopped by the time limit; a best schedule is attached when one was found
    UNKNOWN = "unknown"
    INTERRUPTED = "interrupted"  # stopped by Ctrl-C or SIGTERM; the best schedule found so far, when one was

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
                           FrozenDict({s: int(n) for s, n in sorted(self.placement.items()) if n}))
        if self.stage_placement is not None:
            object.__setattr__(self, "stage_placement",
                               FrozenDict({s: tuple(int(x) for x in c) for s, c in self.stage_placement.items()}))

    def _with_completion(self, completion: float | None) -> ScheduledJob:
        """This job with ``completion`` (equal to ``ScheduledJob(id, start, placement, completion, stage_placement)``,
        without normalising the normalised placements again)."""
        new = object.__new__(ScheduledJob)
        new.__dict__.update(self.__dict__)
        new.__dict__["completion"] = completion
        return new

    @property
    def gpus(self) -> int:
        return sum(self.placement.values())

    @property
    def servers(self) -> tuple[str, ...]:
        return tuple(self.placement)


@dataclass(frozen=True)
class Schedule:
    """A complete schedule: one [`ScheduledJob`][optsched.result.ScheduledJob] per job, in any order.

    ```pycon
    >>> s = Schedule([ScheduledJob("j0", 0, {"s0": 2}, completion=5)])
    >>> s["j0"].gpus, s.makespan
    (2, 5)

    ```
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

    def __iter__(self) -> Iterator[ScheduledJob]:
        return iter(self.jobs)

    def __repr__(self) -> str:
        return (f"Schedule(jobs={len(self.jobs)}, makespan={_fmt(self.makespan)}, algorithm={self.algorithm!r}, "
                f"instance={self.instance!r})")

    def __len__(self) -> int:
        return len(self.jobs)

    @property
    def makespan(self) -> float | None:
        """Latest completion, or ``None`` while any completion is unknown."""
        c = [j.completion for j in self.jobs]
        if not c or any(x is None for x in c):
            return None
        return max(x for x in c if x is not None)

    def with_completions(self, completions: Mapping[str, float]) -> Schedule:
        """A copy whose jobs carry the given completion times (the jobs' other fields are shared: they are
        normalised and frozen already, so the copies skip ``__post_init__``)."""
        return Schedule(tuple(j._with_completion(completions[j.id]) for j in self.jobs), self.algorithm,
                        self.instance)

    def rows(self) -> list[dict[str, Any]]:
        """One dict per job: ``id, start, completion, gpus, servers, placement`` (and ``stage_placement``)."""
        out = []
        for j in self.jobs:
            row: dict[str, Any] = {"id": j.id, "start": j.start, "completion": j.completion, "gpus": j.gpus,
                                   "servers": len(j.placement), "placement": dict(j.placement)}
            if j.stage_placement is not None:
                row["stage_placement"] = {s: list(c) for s, c in j.stage_placement.items()}
            out.append(row)
        return out

    def to_frame(self) -> pd.DataFrame:
        """The schedule as a pandas DataFrame, one row per job (see [`rows`][optsched.result.Schedule.rows]).

        ```pycon
        >>> Schedule([ScheduledJob("a", 0, {"s0": 2}, 5)]).to_frame()[["id", "start", "completion", "gpus"]]
          id  start  completion  gpus
        0  a      0           5     2

        ```
        """
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=["id", "start", "completion", "gpus", "servers", "placement",
                                                  *(["stage_placement"] if any(j.stage_placement is not None
                                                                               for j in self.jobs) else [])])


@dataclass(frozen=True)
class Result:
    """A solve's outcome, in the style of PyJobShop's ``Result``.

    ``objective`` is the schedule's value as scored by the evaluator (makespan for RAR-DDLS, total completion
    time for total-JCT problems); ``lower_bound`` a proven bound on the optimum where one is known.
    ``info`` holds algorithm-specific figures (e.g. SJF-BCO's final theta and kappa). A result whose objective
    meets its lower bound is ``optimal`` whatever status it was built with (a limit or a signal may stop a
    search after its last solution was already proved optimal).

    ```pycon
    >>> Result(279, SolveStatus.TIME_LIMIT, 6.0, None, "exact", lower_bound=279).status.value
    'optimal'

    ```
    """

    objective: float | None
    status: SolveStatus
    runtime_s: float
    schedule: Schedule | None
    algorithm: str
    lower_bound: float | None = None
    seed: int | None = None
    info: Mapping[str, Any] = field(default_factory=dict)
    #: the problem evaluator's verdict on ``schedule`` when the door already computed it (not compared)
    evaluation: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        status = SolveStatus(self.status)
        if status in (SolveStatus.TIME_LIMIT, SolveStatus.INTERRUPTED, SolveStatus.FEASIBLE) and \
                self.objective is not None and self.lower_bound is not None and \
                self.objective <= self.lower_bound + 1e-9 * max(1.0, abs(self.lower_bound)):
            status = SolveStatus.OPTIMAL  # the proven bound is met: optimal, whatever stopped the search
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "info", freeze(self.info))

    def __repr__(self) -> str:
        parts = [f"algorithm={self.algorithm!r}", f"status={self.status}", f"objective={_fmt(self.objective)}"]
        if self.lower_bound is not None:
            parts.append(f"bound={_fmt(self.lower_bound)}")
            if self.gap is not None:
                parts.append(f"gap={self.gap:.2%}")
        parts.append(f"runtime={self.runtime_s:.3f}s")
        parts.append(f"jobs={len(self.schedule) if self.schedule is not None else 0}")
        return f"Result({', '.join(parts)})"

    @property
    def found(self) -> bool:
        """True when a schedule was found (a time limit may stop an exact model before any)."""
        return self.schedule is not None

    @property
    def gap(self) -> float | None:
        """Relative gap (objective - bound) / objective, ``None`` without both."""
        if self.objective is None or self.lower_bound is None:
            return None
        if self.objective == 0:
            return 0.0
        return max(0.0, (self.objective - self.lower_bound) / abs(self.objective))

    def summary(self) -> str:
        """One line: algorithm, status, objective, bound and gap (where known), runtime."""
        parts = [f"algorithm={self.algorithm}", f"status={self.status}",
                 f"objective={_fmt(self.objective)}"]
        if self.lower_bound is not None:
            parts.append(f"bound={_fmt(self.lower_bound)}")
            if self.gap is not None:
                parts.append(f"gap={self.gap:.2%}")
        parts.append(f"runtime={self.runtime_s:.3f}s")
        if self.schedule is None:
            parts.append("(no schedule found)")
        return " ".join(parts)

    def to_dict(self, schedule: bool = True) -> dict[str, Any]:
        """A JSON-ready dict: the figures, ``info``, and (with ``schedule``) one row per job.

        ```pycon
        >>> Result(3, SolveStatus.FEASIBLE, 0.1, None, "ff").to_dict()["status"]
        'feasible'

        ```
        """
        out: dict[str, Any] = {"algorithm": self.algorithm, "status": self.status.value,
                               "objective": self.objective, "lower_bound": self.lower_bound, "gap": self.gap,
                               "runtime_s": self.runtime_s, "seed": self.seed, "info": _plain(self.info)}
        if schedule:
            out["schedule"] = self.schedule.rows() if self.schedule is not None else None
        return out

    def to_frame(self) -> pd.DataFrame:
        """The schedule as a DataFrame ([`Schedule.to_frame`][optsched.result.Schedule.to_frame]), the result's figures
        in ``.attrs``."""
        import pandas as pd

        frame = self.schedule.to_frame() if self.schedule is not None else pd.DataFrame()
        frame.attrs.update(self.to_dict(schedule=False))
        return frame


class Evaluation(Protocol):
    """What every problem's evaluator returns ([`optsched.evaluate`][])."""

    @property
    def objective(self) -> float: ...

    @property
    def schedule(self) -> Schedule: ...

    def summary(self) -> str: ...


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return str(int(x)) if float(x).is_integer() else f"{x:.4g}"


def schedule_from_rows(rows: Iterable[tuple[str, float, Mapping[str, int]]], algorithm: str = "") -> Schedule:
    """Convenience: build a schedule from ``(job id, start, placement)`` rows."""
    return Schedule(tuple(ScheduledJob(j, s, p) for j, s, p in rows), algorithm)
