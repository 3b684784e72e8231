"""Paper 000's RAR contention model (eqs. 6-8) in continuous time, reusing [`optsched.perf.rar`][].

A job's ``spec`` is a [`RarJob`][optsched.problems.rar.RarJob]; the model holds the instance-wide parameters
(bandwidths, reduce speed, xi_1, xi_2, alpha) of a [`RarInstance`][optsched.problems.rar.RarInstance]. The iteration
time is tau_j of eq. (8) in slots, times ``slot_s`` seconds per slot. Continuous time means the rate is 1/tau
iterations per slot (not floor(1/tau) of eq. 9: nothing is slotted here), and p_j (eq. 6) is recomputed by
the engine whenever a job starts, stops or moves.

```pycon
>>> from types import SimpleNamespace as NS
>>> from optsched.generators.rar import tiny_rar_example
>>> inst = tiny_rar_example(); rj = inst.jobs[0]
>>> m = RarContinuousPerf(inst, slot_s=1.0)
>>> job = NS(id=rj.id, gpus=rj.gpus, iteration_time_s=1.0, spec=rj, model="")
>>> m.alone_time_s(job, NS(servers=(0,), counts=(rj.gpus,), stages=None)) == iteration_time(inst, rj, 1, 0)
True

```
"""

from __future__ import annotations

from typing import Sequence

from ..errors import InstanceError
from ..problems.rar import RarInstance, RarJob
from .base import ColocationLike, JobLike, PerfModel, PlacementLike, RunningJobLike
from .rar import contention, iteration_time


class RarContinuousPerf(PerfModel):
    """Eq. (8) in seconds with the contention p_j of eq. (6) over the running jobs (module docstring)."""

    name = "rar"
    colocation_aware = True

    def __init__(self, instance: RarInstance, slot_s: float = 1.0):
        if not isinstance(slot_s, (int, float)) or not slot_s > 0:
            raise InstanceError(f"must be a positive number, got {slot_s!r}", field="slot_s")
        self.instance, self.slot_s = instance, float(slot_s)

    def _spec(self, job: JobLike) -> RarJob:
        if not isinstance(job.spec, RarJob):
            raise InstanceError("the RAR model needs a RarJob as the job's spec", field="spec", job=job.id)
        return job.spec

    def alone_time_s(self, job: JobLike, placement: PlacementLike) -> float:
        n = len(placement.servers)
        # alone, a split job contends only with itself: p = 1 (k = max(1, xi_1) = 1, no degradation)
        return iteration_time(self.instance, self._spec(job), n, 1 if n > 1 else 0) * self.slot_s

    def iteration_times_s(self, running: Sequence[RunningJobLike], cluster: ColocationLike) -> dict[str, float]:
        placements = {j.id: {str(s): n for s, n in zip(j.placement.servers, j.placement.counts)} for j in running}
        p = contention(placements)
        return {j.id: iteration_time(self.instance, self._spec(j), len(j.placement.servers), p[j.id]) * self.slot_s
                for j in running}

    def describe(self) -> dict:
        return {"name": self.name, "slot_s": self.slot_s, "instance": self.instance.name}
