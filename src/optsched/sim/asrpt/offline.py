"""Offline runs of the online policies on small instances (paper 001's exact-optimum comparison):
:func:`run_policy` / :func:`run_asrpt` return a :class:`PolicyRun` (per-job start and completion times,
placements, per-iteration times and the totals) from the event-driven engine with paper 001's performance model.

>>> from optsched.models import catalogue_job
>>> jobs = [("a", 0.0, catalogue_job("VGG19:dp4"), 1000, 1000),      # (id, release, spec, n, n~)
...         ("b", 0.0, catalogue_job("VGG19:1gpu"), 100, 100)]
>>> run = run_asrpt(jobs, (1, 4))
>>> run.order, run.start_s["a"] > run.completion_s["b"]   # b is smaller on the virtual machine; a waits
(('b', 'a'), True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ...cluster import as_cluster
from ...errors import InstanceError
from ...perf.mixed import MixedPerf
from ...perf.pipeline import Network
from ...problems.pipeline import PipelineJob
from ...problems.workload import Workload, WorkloadJob
from ..base import SchedulerPlacer
from ..runner import simulate
from .algorithm import DEFAULT_TAU
from .predicting import AlphaMinCache

__all__ = ["PolicyRun", "run_asrpt", "run_policy"]


@dataclass(frozen=True)
class PolicyRun:
    """One policy on one instance: per-job start and completion times (s), placements, per-iteration times (s).

    ``total_completion_s`` = sum_i C_i (paper 001's objective (8)); ``total_jct_s`` = sum_i (C_i - r_i);
    ``order``: job ids in start order; ``placement``: id -> {server index: per-stage GPU counts};
    ``result``: the simulator's :class:`~optsched.sim.metrics.SimResult`.
    """

    completion_s: Mapping[str, float]
    start_s: Mapping[str, float]
    placement: Mapping[str, Mapping[int, tuple[int, ...]]]
    alpha_s: Mapping[str, float]
    order: tuple[str, ...]
    total_completion_s: float
    total_jct_s: float
    result: Any


def _as_workload_jobs(jobs, net: Network) -> list[WorkloadJob]:
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
    return out


def run_policy(policy: str | SchedulerPlacer, jobs: Sequence, cluster: Any = (1, 8), *, nic_gbps: float = 10.0,
               intra_gbs: float = 300.0, seed: int = 0, mode: str = "event", **options) -> PolicyRun:
    """Run one policy of this module (by name or object) on a small offline instance, in the event-driven
    engine with paper 001's performance model (:class:`~optsched.perf.mixed.MixedPerf`).

    * ``jobs``: :class:`~optsched.problems.workload.WorkloadJob` objects with a ``spec``, or tuples
      ``(id, release_s, PipelineJob, iterations[, predicted_iterations])``; ``iteration_time_s`` is set to
      alpha~_i^min / 1000 (s), a predicted count of 0 / None means unseen (n~ = 0).
    * ``cluster``: ``(servers, gpus_per_server)`` or a homogeneous :class:`~optsched.cluster.Cluster`;
      ``nic_gbps`` (Gbit/s) and ``intra_gbs`` (GB/s) give B_inter and B_intra.
    * other keyword arguments are the policy's options (``tau``, ``comm_heavy``, ``predictor``).

    Times are in seconds: a job on placement x runs n_i * alpha_i(x) / 1000 s (eq. 7 is in ms).
    """
    cl = as_cluster(cluster, homogeneous="paper 001's model")
    perf = MixedPerf(cl.max_server_gpus, nic_gbps, intra_gbs)
    wl = Workload(tuple(_as_workload_jobs(jobs, perf.network)), name="offline")
    res = simulate(wl, cl, scheduler=policy, perf=perf, mode=mode, seed=seed, **options)
    done = res.job_objects
    comp = {j.id: j.completion_s for j in done}
    start = {j.id: j.first_start_s for j in done}
    plc = {j.id: dict(j.segments[0][2].stages or {s: (n,) for s, n in j.segments[0][2].as_dict().items()})
           for j in done}
    alpha = {j.id: j.iteration_now_s for j in done}
    order = tuple(sorted(comp, key=lambda k: (start[k], [j.id for j in done].index(k))))
    return PolicyRun(comp, start, plc, alpha, order, float(sum(comp.values())),
                     float(sum(comp[j.id] - j.arrival_s for j in done)), res)


def run_asrpt(jobs: Sequence, cluster: Any = (1, 8), *, tau: float = DEFAULT_TAU, predictor: Any = "workload",
              nic_gbps: float = 10.0, intra_gbs: float = 300.0, seed: int = 0) -> PolicyRun:
    """A-SRPT on a small offline instance: per-job completion times (``.completion_s``), start times,
    placements and the totals. ``predictor="perfect"`` gives A-SRPT-Perfect; the default uses each job's
    predicted iterations (5th tuple entry; absent = unseen, n~ = 0). See :func:`run_policy`.

    >>> import math
    >>> from optsched.models import catalogue_job
    >>> r = run_asrpt([("x", 0.0, catalogue_job("ResNet152:1gpu"), 10, 10)], (1, 8))
    >>> p = 1 / 8 * 10 * r.alpha_s["x"]          # virtual size (g/G) n~ alpha~min: x starts when it completes
    >>> math.isclose(r.start_s["x"], p), math.isclose(r.completion_s["x"], p + 10 * r.alpha_s["x"])
    (True, True)
    """
    return run_policy("a-srpt", jobs, cluster, tau=tau, predictor=predictor, nic_gbps=nic_gbps,
                      intra_gbs=intra_gbs, seed=seed)
