"""The online cluster simulator (paper 002, Blox): workloads, the engine, the policy abstractions, metrics.

A run is ``simulate(workload, cluster, scheduler=..., placement=..., admission=..., perf=..., mode=...)``; the
policy composition is data (names, or dicts with a ``"name"`` and options, or policy objects). Other modules
find policies and performance models by name in one registry ([`optsched.sim.registry`][]: a new policy is one
file and one line there, or [`register_scheduler`][optsched.sim.registry.register_scheduler] at run time).

```pycon
>>> from optsched.sim import simulate, Workload, WorkloadJob
>>> wl = Workload((WorkloadJob("a", 0, 4, 3600, 1.0), WorkloadJob("b", 100, 4, 600, 1.0)))
>>> r = simulate(wl, servers=1, gpus_per_server=4, scheduler="fifo", mode="round", round_s=300)
>>> r.jobs[["id", "first_start_s", "completion_s"]].values.tolist()
[['a', 0.0, 3600.0], ['b', 3600.0, 4200.0]]
>>> r.summary["avg_jct_s"], r.config["scheduler"]["name"]
(3850.0, 'fifo')

```
"""

from __future__ import annotations

from ..problems.workload import Workload, WorkloadJob, as_workload, read_workload, write_workload
from .base import (
                   AdmissionPolicy,
                   Composed,
                   Decision,
                   LaunchMechanism,
                   MetricCollector,
                   PlacementPolicy,
                   SchedulerPlacer,
                   SchedulingPolicy,
)
from .engine import SimulationStalled, Simulator
from .metrics import SimResult
from .registry import (
                   ADMISSIONS,
                   PERF_MODELS,
                   PLACEMENTS,
                   SCHEDULERS,
                   build_admission,
                   build_perf,
                   build_placement,
                   build_policy,
                   build_scheduling,
                   register_admission,
                   register_perf,
                   register_placement,
                   register_scheduler,
)
from .runner import simulate
from .state import ClusterState, Job, JobState, Placement, SimView

__all__ = [
    "ADMISSIONS", "AdmissionPolicy", "ClusterState", "Composed", "Decision", "Job", "JobState", "LaunchMechanism",
    "MetricCollector", "PERF_MODELS", "PLACEMENTS", "Placement", "PlacementPolicy", "SCHEDULERS", "SchedulerPlacer",
    "SchedulingPolicy", "SimResult", "SimView", "SimulationStalled", "Simulator", "Workload", "WorkloadJob",
    "as_workload", "build_admission", "build_perf", "build_placement", "build_policy", "build_scheduling",
    "read_workload", "register_admission", "register_perf",
    "register_placement", "register_scheduler", "simulate", "write_workload",
]
