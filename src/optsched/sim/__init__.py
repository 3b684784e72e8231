"""The online cluster simulator (paper 002, Blox): workloads, the engine, the policy abstractions, metrics.

A run is ``simulate(workload, cluster, scheduler=..., placement=..., admission=..., perf=..., mode=...)``; the
policy composition is data (names, or dicts with a ``"name"`` and options, or policy objects). Other modules
add policies by name with :func:`register_scheduler` (and ``register_placement`` / ``register_admission`` /
``register_perf``); the plugin modules ``optsched.sim.asrpt``, ``optsched.sim.drs`` and ``optsched.sim.rl`` are
imported on first use of a name that is not yet known.

>>> from optsched.sim import simulate, Workload, WorkloadJob
>>> wl = Workload((WorkloadJob("a", 0, 4, 3600, 1.0), WorkloadJob("b", 100, 4, 600, 1.0)))
>>> r = simulate(wl, servers=1, gpus_per_server=4, scheduler="fifo", mode="round", round_s=300)
>>> r.jobs[["id", "first_start_s", "completion_s"]].values.tolist()
[['a', 0.0, 3600.0], ['b', 3600.0, 4200.0]]
>>> r.summary["avg_jct_s"], r.config["scheduler"]["name"]
(3850.0, 'fifo')
"""

from __future__ import annotations

from typing import Any, Sequence

from ..cluster import Cluster
from ..errors import InstanceError
from .base import (AdmissionPolicy, Composed, Decision, LaunchMechanism, MetricCollector, PlacementPolicy,
                   SchedulerPlacer, SchedulingPolicy)
from .engine import SimulationStalled, Simulator
from .metrics import SimResult, plot_jct_cdf, plot_timeline, plot_vs_load
from .policies import (ADMISSIONS, PERF_MODELS, PLACEMENTS, SCHEDULERS, build_admission, build_perf, build_placement,
                       build_policy, build_scheduling, register_admission, register_perf, register_placement,
                       register_scheduler)
from .state import ClusterState, Job, JobState, Placement, SimView
from ..problems.workload import Workload, WorkloadJob, as_workload, read_workload, write_workload


def _cluster(cluster: Any, servers: int | None, gpus_per_server: int | None) -> Cluster:
    if isinstance(cluster, Cluster):
        if servers is not None or gpus_per_server is not None:
            raise InstanceError("give either a Cluster or servers/gpus_per_server, not both", field="cluster")
        return cluster
    if cluster is not None:
        try:
            servers, gpus_per_server = cluster
        except (TypeError, ValueError):
            raise InstanceError(f"must be a Cluster or (servers, gpus_per_server), got {cluster!r}",
                                field="cluster") from None
    servers = 32 if servers is None else servers
    gpus_per_server = 4 if gpus_per_server is None else gpus_per_server
    for name, v in (("servers", servers), ("gpus_per_server", gpus_per_server)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InstanceError(f"must be a positive integer, got {v!r}", field=name)
    return Cluster.homogeneous(servers, gpus_per_server)


def _perf_for_cluster(perf: Any, cluster: Cluster) -> Any:
    """A perf model named without options that takes ``gpus_per_server`` (paper 001's ``mixed``) gets the
    cluster's, when every server has the same number of GPUs."""
    import inspect

    if not isinstance(perf, (str, dict)):
        return perf
    spec = {"name": perf} if isinstance(perf, str) else dict(perf)
    factory = PERF_MODELS.get(spec.get("name"))
    if factory is None:
        build_perf(spec.get("name"))  # loads the plugin that registers the name, or raises a clear error
        factory = PERF_MODELS.get(spec.get("name"))
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


__all__ = [
    "ADMISSIONS", "AdmissionPolicy", "ClusterState", "Composed", "Decision", "Job", "JobState", "LaunchMechanism",
    "MetricCollector", "PERF_MODELS", "PLACEMENTS", "Placement", "PlacementPolicy", "SCHEDULERS", "SchedulerPlacer",
    "SchedulingPolicy", "SimResult", "SimView", "SimulationStalled", "Simulator", "Workload", "WorkloadJob",
    "as_workload", "build_admission", "build_perf", "build_placement", "build_policy", "build_scheduling",
    "plot_jct_cdf", "plot_timeline", "plot_vs_load", "read_workload", "register_admission", "register_perf",
    "register_placement", "register_scheduler", "simulate", "write_workload",
]
