"""Finish-time fairness of a finished run, and the time every job spent on each GPU type.

Finish-time fairness (Themis, Mahajan et al., NSDI 2020; Gavel's finish-time-fairness policy uses the same
ratio): ``rho = T_shared / T_independent`` with ``T_shared`` the job's JCT and ``T_independent`` its time on an
equal ``1/n`` share of the cluster, ``n`` the number of jobs contending for it. Our reading, documented in
``docs/algorithms/gavel.md``:

* ``n`` is the time-average number of active jobs (waiting, held by admission, or running) over the job's life
  [arrival, completion], at least 1 (Themis: "the average number of contending jobs");
* the equal share is Gavel's [`equal_share_throughput`][optsched.sim.hetero.lp.equal_share_throughput] with ``n`` jobs:
  a fraction
  ``min(1, G / (n z))`` of the time on its ``z`` requested GPUs, spread over the GPU types in proportion to
  their GPU counts, at the throughputs of the run's performance model;
* ``T_independent = iterations / that throughput``. ``rho > 1``: the job did worse than on its equal share.

This is not [`optsched.sim.deadline.themis.rho`][], which is the estimate a scheduler uses mid-run for a job of
paper 003 (remaining time on a GPU count); here the run is over and every quantity is measured.

```pycon
>>> from optsched.sim import simulate, Workload, WorkloadJob
>>> wl = Workload((WorkloadJob("a", 0, 1, 100, 1.0), WorkloadJob("b", 0, 1, 100, 1.0)))
>>> r = simulate(wl, servers=1, gpus_per_server=1, scheduler="fifo", mode="event")
>>> finish_time_fairness(r)["rho"].round(3).tolist()   # b: 1.5 contending jobs on average over its 200 s
[0.5, 1.333]

```
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...cluster import Cluster
from ..state import ClusterState
from .placement import probe_placement

__all__ = ["finish_time_fairness", "time_on_types"]


def _contention(result, arrival: np.ndarray, end: np.ndarray) -> np.ndarray:
    ts = result.timeseries
    if ts.empty:
        return np.ones(len(arrival))
    t = ts["t_s"].to_numpy(dtype=float)
    n = (ts["queued"] + ts["running"]).to_numpy(dtype=float)
    order = np.argsort(t, kind="stable")
    t, n = t[order], n[order]
    # keep the last sample at each instant (the state after everything that happened then)
    last = np.append(t[1:] != t[:-1], True)
    t, n = t[last], n[last]
    seg = np.diff(t, append=t[-1])
    F = np.concatenate([[0.0], np.cumsum(n * seg)])  # F[i] = integral of n up to t[i]

    def integral(x: np.ndarray) -> np.ndarray:
        i = np.clip(np.searchsorted(t, x, side="right") - 1, 0, len(t) - 1)
        before = x < t[0]
        val = F[i] + n[i] * (x - t[i])
        return np.where(before, 0.0, val)

    span = end - arrival
    avg = np.where(span > 0, (integral(end) - integral(arrival)) / np.where(span > 0, span, 1.0), 1.0)
    return np.maximum(avg, 1.0)


def finish_time_fairness(result, cluster: Cluster | None = None, perf: Any = None,
                         tracked_only: bool = True) -> pd.DataFrame:
    """Per finished job: ``id``, ``jct_s``, ``contention`` (average active jobs), ``t_independent_s`` and
    ``rho`` (module docstring). ``cluster`` and ``perf`` default to an untyped cluster of the run's size and the
    profiled iteration times; pass the run's own for a heterogeneous cluster."""
    jobs = [j for j in result.job_objects if not np.isnan(j.completion_s) and (j.tracked or not tracked_only)]
    if not jobs:
        return pd.DataFrame(columns=["id", "jct_s", "contention", "t_independent_s", "rho"])
    if cluster is None:
        cluster = Cluster.homogeneous(1, int(result.summary.get("total_gpus") or max(j.gpus for j in jobs)))
    cs = ClusterState(cluster)
    G = float(cs.total_gpus)
    share_of_type = cs.type_capacity / G
    arrival = np.array([j.arrival_s for j in jobs])
    end = np.array([j.completion_s for j in jobs])
    n = _contention(result, arrival, end)
    t_ind = np.empty(len(jobs))
    time_on = getattr(perf, "time_on", None)
    for i, j in enumerate(jobs):
        thr = 0.0
        for k, t in enumerate(cs.types):
            if (j.gpu_type and j.gpu_type != t) or j.gpus > cs.type_capacity[k]:
                continue
            if time_on is not None:
                it = time_on(j, t, j.gpus, probe_placement(cs, k, j.gpus).n_servers)
            elif perf is not None:
                it = perf.alone_time_s(j, probe_placement(cs, k, j.gpus))
            else:
                it = j.iteration_time_s
            thr += share_of_type[k] / float(it)
        thr *= min(1.0, G / (n[i] * j.gpus))
        t_ind[i] = j.iterations / thr if thr > 0 else np.nan
    jct = end - arrival
    return pd.DataFrame({"id": [j.id for j in jobs], "jct_s": jct, "contention": n, "t_independent_s": t_ind,
                         "rho": jct / t_ind})


def time_on_types(result, cluster: Cluster) -> pd.DataFrame:
    """Seconds every job held GPUs of each type (rows: job ids; columns: the cluster's GPU types), from the
    jobs' segments.

    ```pycon
    >>> from optsched.sim import simulate, Workload, WorkloadJob
    >>> from optsched.cluster import parse_cluster
    >>> cl = parse_cluster("V100:1x1,K80:1x1")
    >>> r = simulate(Workload((WorkloadJob("a", 0, 1, 10, 1.0, gpu_type="K80"),)), cl, mode="event")
    >>> time_on_types(r, cl).loc["a"].tolist()
    [0.0, 10.0]

    ```
    """
    cs = ClusterState(cluster)
    out = np.zeros((len(result.job_objects), len(cs.types)))
    for i, j in enumerate(result.job_objects):
        for start, stop, pl, _ in j.segments:
            out[i, int(cs.type_of[pl.servers[0]])] += stop - start
    return pd.DataFrame(out, index=[j.id for j in result.job_objects], columns=list(cs.types))
