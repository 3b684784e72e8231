"""Paper 001's per-iteration time of a mixed-parallelism job as a simulator performance model.

[`MixedPerf`][optsched.perf.mixed.MixedPerf] answers the engine's question "seconds per iteration of ``job`` on
``placement``" with
``alpha(job.spec, network, placement.stages) / 1000``: eq. (7) of [`optsched.perf.pipeline`][] (which works in
ms) on the per-stage GPU counts of every server the job uses (``Placement.stages``, server index -> counts per
stage). Paper 001 reserves NIC bandwidth in proportion to GPUs (digest 001, section 1, point 9), so jobs never
contend: the model is not co-location-aware and the engine computes a job's rate once per launch.

Jobs without a [`PipelineJob`][optsched.problems.pipeline.PipelineJob] ``spec`` (or a placement without ``stages``
for a multi-stage job) fall back to the profiled ``iteration_time_s`` (a single-stage spec needs no stages:
all its GPUs hold stage 0).

Column costs are cached per (spec structure, column): a trace maps its jobs onto a handful of catalogue
configurations, so the cache stays small and eq. (7) is evaluated a few thousand times for 75,000 jobs.

The simulator registers this model as ``perf="mixed"``; the A-SRPT policies ([`optsched.sim.asrpt`][]) add
alpha~_i^min (Heavy-Edge on the fewest-servers layout), which this layer does not compute.

```pycon
>>> from types import SimpleNamespace as NS
>>> from optsched.models import catalogue_job
>>> spec = catalogue_job("VGG19:dp4")
>>> job = NS(id="a", gpus=4, iteration_time_s=0.1, spec=spec, model="")
>>> m = MixedPerf(nic_gbps=10.0)
>>> one = m.alone_time_s(job, NS(servers=(0,), counts=(4,), stages={0: (4,)}))
>>> two = m.alone_time_s(job, NS(servers=(0, 1), counts=(2, 2), stages={0: (2,), 1: (2,)}))
>>> one < two, round(one, 4)
(True, 0.0702)

```
"""

from __future__ import annotations

import math
from typing import Iterable

from ..errors import InstanceError
from ..problems.pipeline import PipelineJob
from .base import JobLike, PerfModel, PlacementLike
from .pipeline import Network, alpha_max, column_cost

__all__ = ["MixedPerf", "SpecCache"]


class SpecCache:
    """Per-spec cached quantities of paper 001 on one network: column costs and alpha_max (ms).

    Keyed by the spec's structure (stages, all-reduce kind), so equal configurations share one entry.

    ```pycon
    >>> from optsched.models import catalogue_job
    >>> c = SpecCache(Network.paper_simulation())
    >>> s = catalogue_job("GPT-175B:pp3x4")
    >>> c.alpha_max_ms(s) >= c.alpha_ms(s, [(1, 1, 1)] * 4) > 0
    True

    ```
    """

    def __init__(self, network: Network):
        self.network = network
        self._col: dict = {}
        self._amax: dict = {}

    @staticmethod
    def key(spec: PipelineJob):
        return (spec.stages, spec.allreduce)

    def column_ms(self, spec: PipelineJob, col: tuple[int, ...]) -> float:
        k = (self.key(spec), col)
        v = self._col.get(k)
        if v is None:
            v = self._col[k] = column_cost(spec, self.network, col)
        return v

    def alpha_ms(self, spec: PipelineJob, columns) -> float:
        """Eq. (7) over the given columns (no validation: the callers build valid count matrices)."""
        return max((self.column_ms(spec, tuple(c)) for c in columns), default=0.0)

    def alpha_max_ms(self, spec: PipelineJob) -> float:
        """alpha_i^max (closed form, [`optsched.perf.pipeline.alpha_max`][]), cached."""
        k = self.key(spec)
        v = self._amax.get(k)
        if v is None:
            v = self._amax[k] = alpha_max(spec, self.network)
        return v


class MixedPerf(PerfModel):
    """Eq. (7) of paper 001 in seconds per iteration; NIC in Gbit/s, intra-server bandwidth in GB/s.

    The server size ``gpus_per_server`` (g in eqs. 5-6) must be the cluster's; defaults are the paper's
    simulation (8 GPUs, 10 Gbps NIC, 300 GB/s NVLink, section V-B).
    """

    name = "mixed"
    colocation_aware = False

    def __init__(self, gpus_per_server: int = 8, nic_gbps: float = 10.0, intra_gbs: float = 300.0,
                 network: Network | None = None):
        for n, v in (("nic_gbps", nic_gbps), ("intra_gbs", intra_gbs)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or not math.isfinite(v):
                raise InstanceError(f"must be a positive number, got {v!r}", field=n)
        self.network = network or Network.from_gbps(int(gpus_per_server), float(nic_gbps), float(intra_gbs))
        self.cache = SpecCache(self.network)

    def alone_time_s(self, job: JobLike, placement: PlacementLike) -> float:
        spec = job.spec
        if not isinstance(spec, PipelineJob):
            return job.iteration_time_s
        cols: Iterable[tuple[int, ...]]
        if spec.n_stages == 1:
            cols = [(n,) for n in placement.counts]
        elif placement.stages is None:
            return job.iteration_time_s
        else:
            cols = placement.stages.values()
        return self.cache.alpha_ms(spec, cols) / 1000.0

    def describe(self) -> dict:
        n = self.network
        return {"name": self.name, "gpus_per_server": n.gpus_per_server, "nic_gbps": n.inter_bandwidth_gbs * 8.0,
                "intra_gbs": n.intra_bandwidth_gbs}
