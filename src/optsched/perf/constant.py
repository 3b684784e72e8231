"""Profiled constant iteration time with a cross-server penalty (Blox's simulator job model).

A job's ``iteration_time_s`` is its profiled time on a consolidated placement. Spread over more than one
server it runs ``cross_server_factor`` times slower: Blox's Synergy-style job divides throughput by
``job_placement_penalty`` (0.8 in its examples), i.e. a factor 1/0.8 = 1.25 on time (digest 002, section 1,
[R]); that is the default. No co-location effect, and no dependence on the number of GPUs held: a job
launched elastically on fewer GPUs than it requested keeps its profiled time (Blox's job model has no
elasticity; a policy that launches elastically needs a model that says how speed scales).

```pycon
>>> from types import SimpleNamespace as NS
>>> m = ConstantPerf()
>>> j = NS(id="a", gpus=4, iteration_time_s=2.0, spec=None, model="")
>>> m.alone_time_s(j, NS(servers=(0,), counts=(4,))), m.alone_time_s(j, NS(servers=(0, 1), counts=(2, 2)))
(2.0, 2.5)

```
"""

from __future__ import annotations

from ..errors import InstanceError
from .base import JobLike, PerfModel, PlacementLike


class ConstantPerf(PerfModel):
    """Profiled time on one server, ``cross_server_factor`` times more on several (module docstring)."""

    name = "constant"

    def __init__(self, cross_server_factor: float = 1.25):
        if not isinstance(cross_server_factor, (int, float)) or not cross_server_factor >= 1.0:
            raise InstanceError(f"must be a number >= 1, got {cross_server_factor!r}", field="cross_server_factor")
        self.cross_server_factor = float(cross_server_factor)

    def alone_time_s(self, job: JobLike, placement: PlacementLike) -> float:
        t = job.iteration_time_s
        return t * self.cross_server_factor if len(placement.servers) > 1 else t

    def describe(self) -> dict:
        return {"name": self.name, "cross_server_factor": self.cross_server_factor}
