"""Independent scoring of a placement (paper 001, eq. 7): feasibility and the per-iteration time alpha (ms).

```pycon
>>> from optsched.algorithms.heavy_edge import fig2_job
>>> from optsched.problems.placement import PlacementInstance
>>> from optsched.result import Schedule, ScheduledJob
>>> inst = PlacementInstance(fig2_job(), {"a": 4, "b": 1, "c": 1})
>>> x = {"a": (2, 2, 0), "b": (0, 0, 1), "c": (0, 0, 1)}
>>> ev = evaluate(inst, Schedule([ScheduledJob("fig2", 0, {s: sum(c) for s, c in x.items()}, stage_placement=x)]))
>>> round(ev.alpha_ms, 2), ev.servers
(22.2, 3)

```
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InstanceError, ScheduleError
from ..perf.pipeline import alpha, check_placement
from ..problems.placement import PlacementInstance
from ..result import Schedule, ScheduledJob

__all__ = ["PlacementEvaluation", "evaluate"]


@dataclass(frozen=True)
class PlacementEvaluation:
    """``alpha_ms``: eq. (7) of the placement (the objective); ``servers``: servers used."""

    alpha_ms: float
    servers: int
    schedule: Schedule
    objective_name = "alpha (ms per iteration)"

    @property
    def objective(self) -> float:
        return self.alpha_ms

    def summary(self) -> str:
        return f"feasible: alpha={self.alpha_ms:.4f} ms per iteration on {self.servers} server(s)"


def evaluate(inst: PlacementInstance, schedule: Schedule) -> PlacementEvaluation:
    """Check that the schedule places the instance's job on free GPUs, stage by stage, and score it."""
    job = inst.job
    if len(schedule) != 1 or schedule.jobs[0].id != job.id:
        raise ScheduleError(f"a placement schedule lists exactly the job {job.id!r}, got "
                            f"{[j.id for j in schedule.jobs]}", field="jobs", job=job.id)
    sj = schedule.jobs[0]
    x = sj.stage_placement
    if x is None:
        if job.n_stages != 1:
            raise ScheduleError("a multi-stage job needs stage_placement (GPUs per stage on each server)",
                                field="jobs[0].stage_placement", job=job.id)
        x = {s: (n,) for s, n in sj.placement.items()}
    for sid, col in x.items():
        if sid not in inst.free:
            raise ScheduleError(f"unknown server {sid!r}", field="jobs[0].stage_placement", job=job.id)
        if sum(col) != sj.placement.get(sid, 0):
            raise ScheduleError(f"server {sid!r}: stage counts {list(col)} add up to {sum(col)} but placement "
                                f"says {sj.placement.get(sid, 0)}", field="jobs[0].placement", job=job.id)
    extra = set(sj.placement) - set(x)
    if extra:
        raise ScheduleError(f"placement uses {sorted(extra)} without stage counts", field="jobs[0].placement",
                            job=job.id)
    try:
        check_placement(job, inst.network, x, capacities=inst.free)
    except ScheduleError:
        raise
    except InstanceError as exc:
        raise ScheduleError(exc.reason, field="jobs[0].stage_placement", job=job.id) from None
    used = {s: c for s, c in x.items() if any(c)}
    a = alpha(job, inst.network, used, check=False)
    scored = ScheduledJob(job.id, 0, sj.placement, None, used)
    return PlacementEvaluation(a, len(used), Schedule((scored,), schedule.algorithm, inst.name))
