"""Offline runs of the online policies on small instances (paper 001's exact-optimum comparison): a job list
given as tuples becomes a workload ([`offline_workload`][optsched.sim.asrpt.offline.offline_workload]), run through the
one door with paper 001's
performance model in event mode; [`run_policy`][optsched.sim.asrpt.offline.run_policy] /
[`run_asrpt`][optsched.sim.asrpt.offline.run_asrpt] return the door's
[`SimResult`][optsched.sim.metrics.SimResult] (per-job start and completion times, ``by_id``, ``start_order``,
``first_placements``; the policy's ``alpha_s`` per job).

```pycon
>>> from optsched.models import catalogue_job
>>> jobs = [("a", 0.0, catalogue_job("VGG19:dp4"), 1000, 1000),      # (id, release, spec, n, n~)
...         ("b", 0.0, catalogue_job("VGG19:1gpu"), 100, 100)]
>>> run = run_asrpt(jobs, (1, 4))
>>> start, done = run.by_id("first_start_s"), run.by_id("completion_s")
>>> run.start_order(), start["a"] > done["b"]   # b is smaller on the virtual machine; a waits
(('b', 'a'), True)

```
"""

from __future__ import annotations

from typing import Any, Sequence

from ...cluster import as_cluster
from ...errors import InstanceError
from ...perf.mixed import MixedPerf
from ...perf.pipeline import Network
from ...problems.pipeline import PipelineJob
from ...problems.workload import Workload, WorkloadJob
from ..base import SchedulerPlacer
from ..metrics import SimResult
from ..runner import simulate
from .algorithm import DEFAULT_TAU
from .predicting import AlphaMinCache

__all__ = ["offline_workload", "run_asrpt", "run_policy"]


def offline_workload(jobs: Sequence, net: Network) -> Workload:
    out = []
    cache = AlphaMinCache(net)
    for i, j in enumerate(jobs):
        if isinstance(j, WorkloadJob):
            out.append(j)
            continue
        try:
            jid, release, spec, iters, *rest = j
        except (TypeError, ValueError):
            raise InstanceError("each job must be a WorkloadJob or (id, release_s, PipelineJob, iterations"
                                "[, predicted_iterations])", field=f"jobs[{i}]") from None
        if not isinstance(spec, PipelineJob):
            raise InstanceError(f"must be a PipelineJob, got {type(spec).__name__}", field=f"jobs[{i}].spec",
                                job=str(jid))
        pred = rest[0] if rest else None
        out.append(WorkloadJob(str(jid), release, spec.gpus, iters, cache.alpha_tilde_min_ms(spec) / 1000.0,
                               model=spec.model, predicted_iterations=pred if pred else None, spec=spec))
    return Workload(tuple(out), name="offline")


def run_policy(policy: str | SchedulerPlacer, jobs: Sequence, cluster: Any = (1, 8), *, nic_gbps: float = 10.0,
               intra_gbs: float = 300.0, seed: int = 0, mode: str = "event", **options) -> SimResult:
    """Run one policy of this module (by name or object) on a small offline instance, in the event-driven
    engine with paper 001's performance model ([`MixedPerf`][optsched.perf.mixed.MixedPerf]).

    * ``jobs``: [`WorkloadJob`][optsched.problems.workload.WorkloadJob] objects with a ``spec``, or tuples
      ``(id, release_s, PipelineJob, iterations[, predicted_iterations])``; ``iteration_time_s`` is set to
      alpha~_i^min / 1000 (s), a predicted count of 0 / None means unseen (n~ = 0).
    * ``cluster``: ``(servers, gpus_per_server)`` or a homogeneous [`Cluster`][optsched.cluster.Cluster];
      ``nic_gbps`` (Gbit/s) and ``intra_gbs`` (GB/s) give B_inter and B_intra.
    * other keyword arguments are the policy's options (``tau``, ``comm_heavy``, ``predictor``).

    Times are in seconds: a job on placement x runs n_i * alpha_i(x) / 1000 s (eq. 7 is in ms).
    """
    cl = as_cluster(cluster, homogeneous="paper 001's model")
    perf = MixedPerf(cl.max_server_gpus, nic_gbps, intra_gbs)
    return simulate(offline_workload(jobs, perf.network), cl, scheduler=policy, perf=perf, mode=mode, seed=seed,
                    **options)


def run_asrpt(jobs: Sequence, cluster: Any = (1, 8), *, tau: float = DEFAULT_TAU, predictor: Any = "workload",
              nic_gbps: float = 10.0, intra_gbs: float = 300.0, seed: int = 0) -> SimResult:
    """A-SRPT on a small offline instance (the door's result: completion and start times per job,
    placements). ``predictor="perfect"`` gives A-SRPT-Perfect; the default uses each job's
    predicted iterations (5th tuple entry; absent = unseen, n~ = 0). See
    [`run_policy`][optsched.sim.asrpt.offline.run_policy].

    ```pycon
    >>> import math
    >>> from optsched.models import catalogue_job
    >>> r = run_asrpt([("x", 0.0, catalogue_job("ResNet152:1gpu"), 10, 10)], (1, 8))
    >>> a = r.by_id("alpha_s")["x"]
    >>> p = 1 / 8 * 10 * a          # virtual size (g/G) n~ alpha~min: x starts when it completes
    >>> math.isclose(r.by_id("first_start_s")["x"], p), math.isclose(r.by_id("completion_s")["x"], p + 10 * a)
    (True, True)

    ```
    """
    return run_policy("a-srpt", jobs, cluster, tau=tau, predictor=predictor, nic_gbps=nic_gbps,
                      intra_gbs=intra_gbs, seed=seed)
