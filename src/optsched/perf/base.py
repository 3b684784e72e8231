"""The performance-model interface of the simulator: per-iteration time of a job under a placement.

A model answers two questions:

* :meth:`PerfModel.alone_time_s`: seconds per iteration of ``job`` on ``placement`` with no co-located job
  (the simulator's lower bound "time alone on its placement");
* :meth:`PerfModel.iteration_times_s`: seconds per iteration of every running job, given all their placements
  (the co-location a contention model needs). The default calls ``alone_time_s`` per job.

``colocation_aware`` tells the engine whether a change of the running set can change the time of a job that
did not move; if False the engine computes a job's rate once per launch (the fast path), if True it recomputes
every running job's rate whenever a job starts, stops or moves.

Models: :mod:`optsched.perf.constant` (profiled constant time with a cross-server penalty, Blox),
:mod:`optsched.perf.rar_continuous` (paper 000's contention model in seconds), :mod:`optsched.perf.measured`
(DeepShare's measured contention table, paper 004). Paper 001's pipeline alpha plugs in the same way: a
subclass whose ``alone_time_s`` evaluates ``optsched.perf.pipeline.alpha(job.spec, network,
placement.stages)`` (``Placement.stages`` carries the per-stage GPU counts of each server).

>>> from optsched.sim.state import Job, Placement
>>> class Half(PerfModel):
...     def alone_time_s(self, job, placement):
...         return job.iteration_time_s / 2
>>> Half().alone_time_s(Job("a", 0, 1, 10, 1.0), Placement.of({0: 1}))
0.5
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from ..sim.state import ClusterState, Job, Placement


class PerfModel:
    """Base class: subclasses implement :meth:`alone_time_s` and, if co-location matters,
    :meth:`iteration_times_s` with ``colocation_aware = True``."""

    colocation_aware: bool = False
    name: str = "perf"

    def alone_time_s(self, job: "Job", placement: "Placement") -> float:
        raise NotImplementedError

    def iteration_times_s(self, running: Sequence["Job"], cluster: "ClusterState") -> Mapping[str, float]:
        """Seconds per iteration of each running job (``job.placement`` is set), keyed by job id."""
        return {j.id: self.alone_time_s(j, j.placement) for j in running}

    def describe(self) -> dict:
        return {"name": self.name}
