"""The one door to simulate: ``simulate(workload, ...)`` for every online workload kind, and ``simulator(...)``, the
same door's steppable engine.

[`simulate`][optsched.sim.runner.simulate] takes a workload of any kind (a
[`Workload`][optsched.problems.workload.Workload], a
[`DeadlineWorkload`][optsched.problems.deadline.DeadlineWorkload], a
[`ContentionInstance`][optsched.problems.contention.ContentionInstance],
a file of any of them, or ``philly`` / ``pollux:N`` / ``synthetic``), fills in its kind's defaults
([`optsched.sim.kinds`][]: cluster, performance model, mode, scheduler, the family's metrics), builds the
policies from the registry ([`optsched.sim.registry`][]), records the configuration in the result, and runs
the [`Simulator`][optsched.sim.engine.Simulator]. [`simulator`][optsched.sim.runner.simulator] returns that simulator
unstarted, for a driver
that steps it (a gymnasium environment, what-if switching, a notebook); its ``run()`` is what
[`simulate`][optsched.sim.runner.simulate]
returns.

```pycon
>>> from optsched.problems.workload import Workload, WorkloadJob
>>> r = simulate(Workload((WorkloadJob("a", 0, 1, 10, 1.0),)), servers=1, gpus_per_server=1, mode="event")
>>> r.summary["avg_jct_s"], r.config["cluster"]
(10.0, {'servers': 1, 'total_gpus': 1})
>>> from optsched.generators.deadline import tiny_deadline_workload
>>> d = simulate(tiny_deadline_workload(3, seed=2))              # DRS, the ring model, event mode
>>> d.config["scheduler"].get("name"), d.summary["r_trace"] == d.custom["deadline"].get("r_trace")
('drs', True)

```
"""

from __future__ import annotations

from typing import Any, Sequence

from ..cluster import Cluster, as_cluster
from ..errors import InstanceError
from .base import LaunchMechanism, MetricCollector
from .engine import Simulator
from .kinds import online_setup
from .metrics import SimResult
from .registry import build_admission, build_perf, build_policy, lookup, lookup_perf, takes

__all__ = ["simulate", "simulator"]


def _cluster(cluster: Any, servers: int | None, gpus_per_server: int | None, own: Cluster | None,
             kind: str) -> Cluster:
    given = cluster is not None or servers is not None or gpus_per_server is not None
    if own is not None:
        if given:
            raise InstanceError(f"a {kind} workload brings its own cluster (part of its file): give no cluster, "
                                "servers or gpus_per_server", field="cluster")
        return own
    if cluster is not None:
        if servers is not None or gpus_per_server is not None:
            raise InstanceError("give either a cluster or servers/gpus_per_server, not both", field="cluster")
        return as_cluster(cluster)
    return as_cluster((32 if servers is None else servers, 4 if gpus_per_server is None else gpus_per_server))


def _perf_for_cluster(perf: Any, cluster: Cluster) -> Any:
    """A perf model named without options that takes ``gpus_per_server`` (paper 001's ``mixed``) gets the
    cluster's, when every server has the same number of GPUs; one that can be bound to a cluster
    (``for_cluster``: ``hetero``) is, on a cluster of several GPU types."""
    if not isinstance(perf, (str, dict)):
        return perf
    spec = {"name": perf} if isinstance(perf, str) else dict(perf)
    if not isinstance(spec.get("name"), str):
        return perf  # build_perf reports it
    factory = lookup_perf(spec["name"])  # imports the model's module, or a clear error
    bind = getattr(factory, "for_cluster", None)
    if bind is not None and len(spec) == 1 and len(cluster.gpu_types) > 1:
        return bind(cluster)  # a model named alone on a cluster of several GPU types learns their types (hetero)
    sizes = {s.gpus for s in cluster.servers}
    if takes(factory, "gpus_per_server") and "gpus_per_server" not in spec and len(sizes) == 1:
        spec["gpus_per_server"] = sizes.pop()
        return spec
    return perf


def _scheduler_class(spec: Any) -> Any:
    if isinstance(spec, str):
        return lookup("scheduler", spec)
    if isinstance(spec, dict) and isinstance(spec.get("name"), str):
        return lookup("scheduler", spec["name"])
    return None


def simulator(workload: Any, cluster: Any = None, scheduler: Any = None, placement: Any = "consolidated",
              admission: Any = None, perf: Any = None, mode: str | None = None, round_s: float | None = None,
              seed: int | None = 0, progress: bool = False, *, servers: int | None = None,
              gpus_per_server: int | None = None, launch: LaunchMechanism | None = None, restore_s: float = 0.0,
              migration_s: float = 0.0, request: str | None = None, collectors: Sequence[MetricCollector] = (),
              stop_when_tracked_done: bool = False, max_time_s: float | None = None, label: str | None = None,
              **scheduler_options: Any) -> Simulator:
    """The [`Simulator`][optsched.sim.engine.Simulator] [`simulate`][optsched.sim.runner.simulate] would run, not
    started (the same arguments;
    ``sim.run()`` or ``sim.reset()`` / ``advance()`` / ``apply()``)."""
    setup = online_setup(workload, request=request)
    d = setup.defaults
    wl = setup.workload
    cl = _cluster(cluster, servers, gpus_per_server, setup.cluster, setup.kind)
    if scheduler is None:
        scheduler = d.get("scheduler", "fifo")
    cls = _scheduler_class(scheduler)
    for k, v in setup.scheduler_options.items():  # the kind's options for the schedulers that take them
        if cls is not None and k not in scheduler_options and takes(cls, k) and not (
                isinstance(scheduler, dict) and k in scheduler):
            scheduler_options[k] = v
    policy = build_policy(scheduler, placement, seed=seed, **scheduler_options)
    if admission is None:  # a policy that comes with its own admission (ElasticFlow) gets it
        admission = getattr(policy, "default_admission", None) or "accept-all"
    adm = build_admission(admission)
    if perf is None and setup.perf_factory is not None:
        pm = setup.perf_factory()
    else:
        pm = build_perf(_perf_for_cluster(perf, cl))
    g_model = pm.describe().get("gpus_per_server")
    if g_model is not None and any(s.gpus != g_model for s in cl.servers):
        raise InstanceError(f"perf model {pm.describe().get('name')!r} assumes {g_model} GPUs per server, the "
                            f"cluster has {sorted({s.gpus for s in cl.servers})}", field="perf.gpus_per_server")
    if mode is None:
        mode = "round" if round_s is not None else d.get("mode", "round")
    if round_s is None:
        round_s = d.get("round_s", 300.0)
    if launch is None:
        launch = LaunchMechanism(restore_s=restore_s, migration_s=migration_s)
    elif restore_s or migration_s:
        raise InstanceError("give either launch= or restore_s= / migration_s=, not both", field="restore_s")
    sched_desc = policy.describe()
    config = {
        "scheduler": sched_desc.get("scheduling", sched_desc),
        "placement": sched_desc.get("placement", {"name": "(combined)"}),
        "admission": adm.describe(), "perf": pm.describe(), "launch": launch.describe(),
        "mode": mode, "round_s": float(round_s) if mode == "round" else None, "seed": seed,
        "workload": {"name": wl.name, "kind": setup.kind, "jobs": len(wl), "seed": wl.seed, **dict(wl.meta)},
        "cluster": {"servers": len(cl.servers), "total_gpus": cl.total_gpus},
    }
    if label is not None:
        config["label"] = label
    return Simulator(wl, cl, policy=policy, admission=adm, perf=pm, launch=launch, mode=mode, round_s=round_s,
                     stop_when_tracked_done=stop_when_tracked_done,
                     collectors=[*setup.collectors, *collectors], progress=progress, max_time_s=max_time_s,
                     config=config, seed=seed)


def simulate(workload: Any, cluster: Any = None, scheduler: Any = None, placement: Any = "consolidated",
             admission: Any = None, perf: Any = None, mode: str | None = None, round_s: float | None = None,
             seed: int | None = 0, progress: bool = False, *, servers: int | None = None,
             gpus_per_server: int | None = None, launch: LaunchMechanism | None = None, restore_s: float = 0.0,
             migration_s: float = 0.0, request: str | None = None, collectors: Sequence[MetricCollector] = (),
             stop_when_tracked_done: bool = False, max_time_s: float | None = None, label: str | None = None,
             **scheduler_options: Any) -> SimResult:
    """Simulate ``workload`` (any online kind) under a policy composition; returns one
    [`SimResult`][optsched.sim.metrics.SimResult].

    * ``workload``: a [`Workload`][optsched.problems.workload.Workload], a
      [`DeadlineWorkload`][optsched.problems.deadline.DeadlineWorkload], a
      [`ContentionInstance`][optsched.problems.contention.ContentionInstance], a list of
      [`WorkloadJob`][optsched.problems.workload.WorkloadJob], a path to a file
      of any of them (or Pollux's / Philly's CSV), or ``philly`` / ``pollux:N`` / ``synthetic``. Its kind sets
      the defaults below that are None and adds its family's metrics ([`optsched.sim.kinds`][]).
    * ``cluster``: a [`Cluster`][optsched.cluster.Cluster] or ``(servers, gpus_per_server)``; or pass
      ``servers=`` / ``gpus_per_server=`` (default: Blox's 32 servers x 4 GPUs). Deadline workloads and
      contention instances bring their own.
    * ``scheduler``: a registered name (``optsched list schedulers``), ``"module:Class"``, a dict
      ``{"name": ..., **options}``, a [`SchedulingPolicy`][optsched.sim.base.SchedulingPolicy] (composed with
      ``placement``) or a combined
      [`SchedulerPlacer`][optsched.sim.base.SchedulerPlacer]; extra keyword arguments are the scheduler's options.
      Default: the kind's
      (``fifo``, ``drs``, ``contention-greedy``).
    * ``placement``: ``consolidated, first-free, scattered`` (or a dict / object); ``admission``:
      ``accept-all`` (default, or the policy's own: ElasticFlow's), ``accept-k`` (``"accept-1.2"``), ...
    * ``perf``: a performance model object, a name (``optsched list perf``) or a dict; default: the kind's (the
      constant model with Blox's cross-server penalty 1.25; the ring model of a deadline workload; the measured
      table of a contention instance).
    * ``mode``: ``"round"`` (decisions every ``round_s`` seconds, Blox) or ``"event"`` (at every arrival and
      completion); giving ``round_s`` alone means rounds. ``restore_s`` / ``migration_s``: stalls of a resumed /
      moved job (or pass ``launch=``). ``request``: deadline workloads only (``min-feasible`` or ``one``).
    * ``seed``: handed to the policies that take one and recorded in ``result.config``.
    """
    return simulator(workload, cluster, scheduler, placement, admission, perf, mode, round_s, seed, progress,
                     servers=servers, gpus_per_server=gpus_per_server, launch=launch, restore_s=restore_s,
                     migration_s=migration_s, request=request, collectors=collectors,
                     stop_when_tracked_done=stop_when_tracked_done, max_time_s=max_time_s, label=label,
                     **scheduler_options).run()
