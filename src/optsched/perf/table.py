"""A measured throughput table as a performance model (ElasticFlow's profiles; deadline workload format 2).

[`TablePerf`][optsched.perf.table.TablePerf] gives a job that carries a throughput row (``spec.throughput``:
(GPU count, iterations per second), ...; [`DeadlineJob`][optsched.problems.deadline.DeadlineJob]) the measured
time per iteration on the GPUs it holds, the same on one node or several (the table is measured so); a count not
in the row runs as the largest listed count below it (the other GPUs idle). Rows need not grow with the count.
A job without a row is timed by the ring model of paper 003 ([`RingPerf`][optsched.perf.ring.RingPerf]) with the
model's bandwidths, so a workload may mix both kinds.

```pycon
>>> from types import SimpleNamespace as NS
>>> from optsched.problems.deadline import DeadlineJob
>>> spec = DeadlineJob("a", "bert", 0.0, deadline_at_s=10.0, iterations=100, batch=64,
...                    throughput=((1, 2.0), (2, 4.0), (4, 3.0)))
>>> job = NS(id="a", gpus=1, iteration_time_s=0.5, model="bert", spec=spec)
>>> m = TablePerf()
>>> [m.alone_time_s(job, NS(servers=s, counts=c, stages=None)) for s, c in (((0,), (1,)), ((0, 1), (1, 1)),
...                                                                         ((0,), (3,)), ((0,), (4,)))]
[0.5, 0.25, 0.25, 0.3333333333333333]

```
"""

from __future__ import annotations

from ..problems.deadline import BYTES_PER_PARAM, DeadlineWorkload
from .base import JobLike, PerfModel, PlacementLike
from .ring import RingPerf

__all__ = ["TablePerf"]


class TablePerf(PerfModel):
    """Seconds per iteration from the job's measured throughput row; the ring model for jobs without one."""

    name = "table"

    def __init__(self, intra_bandwidth: float = 10.0, inter_bandwidth: float = 6.0,
                 bytes_per_param: float = BYTES_PER_PARAM):
        self.ring = RingPerf(intra_bandwidth, inter_bandwidth, bytes_per_param)

    @classmethod
    def for_workload(cls, wl: DeadlineWorkload) -> TablePerf:
        """The model of a deadline workload (its cluster's bandwidths for the jobs without a row)."""
        return cls(wl.cluster.intra_bandwidth, wl.cluster.inter_bandwidth, wl.bytes_per_param)

    def alone_time_s(self, job: JobLike, placement: PlacementLike) -> float:
        spec = job.spec
        if getattr(spec, "throughput", None) is not None:
            return spec.iteration_time_s(sum(placement.counts))
        return self.ring.alone_time_s(job, placement)

    def describe(self) -> dict:
        r = self.ring
        return {"name": self.name, "intra_bandwidth": r.intra_bandwidth, "inter_bandwidth": r.inter_bandwidth,
                "bytes_per_param": r.bytes_per_param}
