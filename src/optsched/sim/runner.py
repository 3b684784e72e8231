"""``simulate(...)``: one simulation run from data (a workload, a cluster, policy names or objects).

It builds the :class:`~optsched.sim.engine.Simulator` (policies from the registry of
:mod:`optsched.sim.registry`, the performance model, the launch mechanism), records the configuration in the
result, and runs it. For stepping through a run, build the :class:`~optsched.sim.engine.Simulator` yourself.

>>> from optsched.problems.workload import Workload, WorkloadJob
>>> r = simulate(Workload((WorkloadJob("a", 0, 1, 10, 1.0),)), servers=1, gpus_per_server=1, mode="event")
>>> r.summary["avg_jct_s"], r.config["cluster"]
(10.0, {'servers': 1, 'total_gpus': 1})
"""

from __future__ import annotations

import inspect
from typing import Any, Sequence

from ..cluster import Cluster, as_cluster
from ..errors import InstanceError
from ..problems.workload import as_workload
from .base import LaunchMechanism, MetricCollector
from .engine import Simulator
from .metrics import SimResult
from .registry import build_admission, build_perf, build_policy, lookup_perf

__all__ = ["simulate"]


def _cluster(cluster: Any, servers: int | None, gpus_per_server: int | None) -> Cluster:
    if cluster is not None:
        if servers is not None or gpus_per_server is not None:
            raise InstanceError("give either a cluster or servers/gpus_per_server, not both", field="cluster")
        return as_cluster(cluster)
    return as_cluster((32 if servers is None else servers, 4 if gpus_per_server is None else gpus_per_server))


def _perf_for_cluster(perf: Any, cluster: Cluster) -> Any:
    """A perf model named without options that takes ``gpus_per_server`` (paper 001's ``mixed``) gets the
    cluster's, when every server has the same number of GPUs."""
    if not isinstance(perf, (str, dict)):
        return perf
    spec = {"name": perf} if isinstance(perf, str) else dict(perf)
    if not isinstance(spec.get("name"), str):
        return perf  # build_perf reports it
    factory = lookup_perf(spec["name"])  # imports the model's module, or a clear error
    sizes = {s.gpus for s in cluster.servers}
    try:
        takes_g = "gpus_per_server" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        takes_g = False
    if takes_g and "gpus_per_server" not in spec and len(sizes) == 1:
        spec["gpus_per_server"] = sizes.pop()
        return spec
    return perf


def simulate(workload, cluster: Any = None, scheduler: Any = "fifo", placement: Any = "consolidated",
             admission: Any = "accept-all", perf: Any = None, mode: str = "round", round_s: float = 300.0,
             seed: int | None = 0, progress: bool = False, *, servers: int | None = None,
             gpus_per_server: int | None = None, launch: LaunchMechanism | None = None, restore_s: float = 0.0,
             collectors: Sequence[MetricCollector] = (), stop_when_tracked_done: bool = False,
             max_time_s: float | None = None, label: str | None = None, **scheduler_options: Any) -> SimResult:
    """Simulate ``workload`` on ``cluster`` under a policy composition; returns a :class:`SimResult`.

    * ``workload``: a :class:`Workload`, a path to a workload file, or a list of :class:`WorkloadJob`.
    * ``cluster``: a :class:`~optsched.cluster.Cluster` or ``(servers, gpus_per_server)``; or pass
      ``servers=`` / ``gpus_per_server=`` (default: Blox's 32 servers x 4 GPUs).
    * ``scheduler``: a name in :data:`SCHEDULERS` (``fifo, las, srtf, tiresias`` and plugins), a dict
      ``{"name": ..., **options}``, a :class:`SchedulingPolicy` or a combined :class:`SchedulerPlacer` (which
      then ignores ``placement``); extra keyword arguments are options of the scheduler.
    * ``placement``: ``consolidated, first-free, scattered`` (or a dict / object); ``admission``:
      ``accept-all``, ``accept-k`` (``{"name": "accept-k", "k": 1.2}`` or ``"accept-1.2"``).
    * ``perf``: a :class:`~optsched.perf.base.PerfModel`, a name (``constant``, ``measured``, plugins) or a dict;
      default: profiled constant time with Blox's cross-server penalty 1.25.
    * ``mode``: ``"round"`` (decisions every ``round_s`` seconds, Blox) or ``"event"`` (at every arrival and
      completion). ``restore_s``: checkpoint-restore stall of a resumed job (or pass ``launch=``).
    * ``seed``: handed to the policies that take one and recorded in ``result.config``.
    """
    wl = as_workload(workload)
    cl = _cluster(cluster, servers, gpus_per_server)
    policy = build_policy(scheduler, placement, seed=seed, **scheduler_options)
    adm = build_admission(admission)
    pm = build_perf(_perf_for_cluster(perf, cl))
    g_model = pm.describe().get("gpus_per_server")
    if g_model is not None and any(s.gpus != g_model for s in cl.servers):
        raise InstanceError(f"perf model {pm.describe().get('name')!r} assumes {g_model} GPUs per server, the "
                            f"cluster has {sorted({s.gpus for s in cl.servers})}", field="perf.gpus_per_server")
    if launch is None:
        launch = LaunchMechanism(restore_s=restore_s)
    elif restore_s:
        raise InstanceError("give either launch= or restore_s=, not both", field="restore_s")
    sched_desc = policy.describe()
    config = {
        "scheduler": sched_desc.get("scheduling", sched_desc),
        "placement": sched_desc.get("placement", {"name": "(combined)"}),
        "admission": adm.describe(), "perf": pm.describe(), "launch": launch.describe(),
        "mode": mode, "round_s": float(round_s) if mode == "round" else None, "seed": seed,
        "workload": {"name": wl.name, "jobs": len(wl), "seed": wl.seed, **dict(wl.meta)},
        "cluster": {"servers": len(cl.servers), "total_gpus": cl.total_gpus},
    }
    if label is not None:
        config["label"] = label
    sim = Simulator(wl, cl, policy=policy, admission=adm, perf=pm, launch=launch, mode=mode, round_s=round_s,
                    stop_when_tracked_done=stop_when_tracked_done, collectors=collectors, progress=progress,
                    max_time_s=max_time_s, config=config, seed=seed)
    return sim.run()
