"""The simulator's one registry: schedulers, placements, admission policies and performance models by name.

Each table maps a name to ``"module:Class"``, imported on first use (resolving ``fifo`` never imports Gavel's LP
solver or the RL agent), so the engine imports no concrete policy and a new policy is one file plus one line
here. The command line (``optsched simulate --scheduler NAME``, ``optsched list``), the experiments layer and
the docs all read these tables; ``tests/sim/test_sim_registry.py`` imports every entry and checks its kind and
name.

Names resolve in this order: the table, then a registration made at run time
([`register_scheduler`][optsched.sim.registry.register_scheduler] and
its siblings, for a policy defined outside the package), then ``"module:Class"`` itself (any importable class,
e.g. ``simulate(..., scheduler="mypkg.policies:Smallest")``: it works in worker processes too, which see no
registration made at run time).

Every scheduler belongs to one *family*: the workload kind and metrics it was written for (``blox``, ``a-srpt``,
``deadline``, ``contention``), its class attribute ``family``;
[`scheduler_names`][optsched.sim.registry.scheduler_names] lists a family.

```pycon
>>> build_scheduling("tiresias", thresholds_gpu_s=[100, 1000]).thresholds_gpu_s
(100.0, 1000.0)
>>> build_admission({"name": "accept-k", "k": 1.2}).k
1.2
>>> scheduler_names("contention")[:2], sorted(PLACEMENTS)[:3]
(['contention-greedy', 'contention-las'], ['consolidated', 'first-free', 'scattered'])
>>> build_policy("las", "first-free").name
'las+first-free'

```
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable, Mapping

from ..errors import InstanceError
from ..perf.base import PerfModel
from .base import AdmissionPolicy, Composed, PlacementPolicy, SchedulerPlacer, SchedulingPolicy

__all__ = ["ADMISSIONS", "FAMILIES", "PERF_MODELS", "PLACEMENTS", "SCHEDULERS", "build_admission", "build_perf",
           "build_placement", "build_policy", "build_scheduling", "lookup", "lookup_perf", "register_admission",
           "register_perf", "register_placement", "register_scheduler", "scheduler_names"]

#: scheduling policies (a key composed with a placement) and combined policies (``decide`` with a builder)
SCHEDULERS: dict[str, str] = {
    # Blox's scheduling keys (digest 002) and the combined policies Blox composes
    "fifo": "optsched.sim.policies:Fifo",
    "las": "optsched.sim.policies:Las",
    "srtf": "optsched.sim.policies:Srtf",
    "tiresias": "optsched.sim.policies:Tiresias",
    "optimus": "optsched.sim.optimus:Optimus",
    "gavel": "optsched.sim.hetero.gavel:Gavel",
    "gavel-makespan": "optsched.sim.hetero.gavel:GavelMakespan",
    # paper 001: A-SRPT and its baselines
    "a-srpt": "optsched.sim.asrpt.algorithm:ASRPT",
    "a-srpt-perfect": "optsched.sim.asrpt.algorithm:ASRPTPerfect",
    "spjf": "optsched.sim.asrpt.baselines:SPJF",
    "spwf": "optsched.sim.asrpt.baselines:SPWF",
    "wcs-duration": "optsched.sim.asrpt.baselines:WCSDuration",
    "wcs-workload": "optsched.sim.asrpt.baselines:WCSWorkload",
    "wcs-subtime": "optsched.sim.asrpt.baselines:WCSSubTime",
    # paper 003: DRS and its baselines, and an ElasticFlow-style policy
    "drs": "optsched.sim.deadline.drs:DRS",
    "norm": "optsched.sim.deadline.drs:NoRM",
    "edf": "optsched.sim.deadline.baselines:EDF",
    "deadline-fifo": "optsched.sim.deadline.baselines:DeadlineFIFO",
    "themis": "optsched.sim.deadline.themis:ThemisFTF",
    "elasticflow": "optsched.sim.deadline.elasticflow:ElasticFlow",
    "elasticflow-fixed": "optsched.sim.deadline.elasticflow_fixed:ElasticFlowFixed",
    "elasticflow-noadmit": "optsched.sim.deadline.elasticflow:ElasticFlowNoAdmission",
    "edf-elastic": "optsched.sim.deadline.elasticflow:EDFElastic",
    "edf-admission": "optsched.sim.deadline.elasticflow:EDFWithAdmission",
    "gandiva-ts": "optsched.sim.deadline.elasticflow:GandivaTimeSlicing",
    # paper 004: the repository's round policies and the agent
    "contention-las": "optsched.sim.contention.policies:ContentionLas",
    "contention-srtf": "optsched.sim.contention.policies:ContentionSrtf",
    "widest-first-fit": "optsched.sim.contention.policies:WidestFirstFit",
    "contention-random": "optsched.sim.contention.policies:RandomActions",
    "contention-greedy": "optsched.sim.contention.policies:ContentionGreedy",
    "rl-base": "optsched.sim.contention.policies:RlBase",
    "rl-hybrid": "optsched.sim.contention.policies:RlHybrid",
    "contention-lookahead": "optsched.sim.contention.lookahead:Lookahead",
    "contention-lookahead-small": "optsched.sim.contention.lookahead:LookaheadSmall",
    "rl-agent": "optsched.sim.contention.lookahead:RlAgent",
}
#: placement policies of the composition (Blox's generic ``place()`` walk with a GPU-fitting rule)
PLACEMENTS: dict[str, str] = {
    "consolidated": "optsched.sim.policies:Consolidated",
    "first-free": "optsched.sim.policies:FirstFree",
    "scattered": "optsched.sim.policies:Scattered",
}
#: admission policies
ADMISSIONS: dict[str, str] = {
    "accept-all": "optsched.sim.policies:AcceptAll",
    "accept-k": "optsched.sim.policies:AcceptK",
    "elasticflow": "optsched.sim.deadline.elasticflow:ElasticFlowAdmission",
    "elasticflow-fixed": "optsched.sim.deadline.elasticflow_fixed:ElasticFlowFixedAdmission",
    "edf-admission": "optsched.sim.deadline.elasticflow:EDFAdmission",
}
#: performance models (the perf layer knows nothing of the simulator, so their table lives here)
PERF_MODELS: dict[str, str] = {
    "constant": "optsched.perf.constant:ConstantPerf",
    "measured": "optsched.perf.measured:MeasuredPerf",
    "mixed": "optsched.perf.mixed:MixedPerf",
    "ring": "optsched.perf.ring:RingPerf",
    "table": "optsched.perf.table:TablePerf",
    "hetero": "optsched.perf.hetero:HeteroPerf",
}
#: the scheduler families (the workload kind and metrics a policy was written for)
FAMILIES = ("blox", "a-srpt", "deadline", "contention")

_TABLES = {"scheduler": SCHEDULERS, "placement": PLACEMENTS, "admission": ADMISSIONS, "perf": PERF_MODELS}
# registrations made at run time (a policy defined outside the package): kind -> name -> class or "module:Class"
_EXTRA: dict[str, dict[str, Any]] = {k: {} for k in _TABLES}


def _register(kind: str, name: str, target: Any = None):
    if not isinstance(name, str) or not name:
        raise InstanceError(f"must be a non-empty string, got {name!r}", field=kind)
    if target is not None:
        _EXTRA[kind][name] = target
        return target

    def deco(obj):
        _EXTRA[kind][name] = obj
        return obj
    return deco


def register_scheduler(name: str, target: Any = None):
    """Make a scheduling policy or a combined policy available by ``name``: ``register_scheduler(name,
    "module:Class")``, or as a class decorator. For the package's own policies add a line to
    [`SCHEDULERS`][optsched.sim.registry.SCHEDULERS] instead; a run-time registration is seen by this process only
    (worker processes of a
    sweep can name the class as ``"module:Class"``). A later registration of a name replaces an earlier one.

    ```pycon
    >>> from optsched.sim.policies import Fifo
    >>> @register_scheduler("test-lifo")
    ... class Lifo(Fifo):
    ...     name = "test-lifo"
    ...     def key(self, job, now):
    ...         return -job.arrival_s
    >>> type(build_scheduling("test-lifo")).__name__
    'Lifo'
    >>> unregister("scheduler", "test-lifo")

    ```
    """
    return _register("scheduler", name, target)


def register_placement(name: str, target: Any = None):
    """A placement policy by name (as [`register_scheduler`][optsched.sim.registry.register_scheduler])."""
    return _register("placement", name, target)


def register_admission(name: str, target: Any = None):
    """An admission policy by name (as [`register_scheduler`][optsched.sim.registry.register_scheduler])."""
    return _register("admission", name, target)


def register_perf(name: str, target: Any = None):
    """A performance model (class or factory function) by name (as
    [`register_scheduler`][optsched.sim.registry.register_scheduler])."""
    return _register("perf", name, target)


def unregister(kind: str, name: str) -> None:
    """Forget a run-time registration (tests)."""
    _EXTRA[kind].pop(name, None)


def names(kind: str) -> list[str]:
    """Every name of one kind (``scheduler``, ``placement``, ``admission``, ``perf``), sorted."""
    return sorted({*_TABLES[kind], *_EXTRA[kind]})


def _import(target: str, kind: str, name: str):
    mod, _, attr = target.partition(":")
    try:
        return getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as exc:
        if name == target:  # a "module:Class" given directly: the user's typo, not a broken table
            raise InstanceError(f"cannot import {target!r}: {exc}", field=kind) from None
        raise


def lookup(kind: str, name: Any):
    """The class (or factory) registered as ``name`` of ``kind``; ``"module:Class"`` imports that class; a clear
    error naming the known names otherwise."""
    if not isinstance(name, str) or not name:
        raise InstanceError(f"must be a name, got {name!r}", field=kind)
    table = _TABLES[kind]
    obj = table.get(name)
    if obj is None:
        obj = _EXTRA[kind].get(name)
    if obj is None:
        if ":" in name:  # "module:Class" given directly
            return _import(name, kind, name)
        raise InstanceError(f"unknown {kind} policy {name!r} (known: {', '.join(names(kind))})"
                            if kind != "perf" else f"unknown performance model {name!r} (known: "
                            f"{', '.join(names(kind))})", field=kind)
    return _import(obj, kind, name) if isinstance(obj, str) else obj


def scheduler_names(family: str | None = None) -> list[str]:
    """Scheduler names, sorted; with ``family``, only that family's (imports their classes)."""
    if family is not None and family not in FAMILIES:
        raise InstanceError(f"must be one of {', '.join(FAMILIES)}, got {family!r}", field="family")
    out = names("scheduler")
    if family is None:
        return out
    return [n for n in out if getattr(lookup("scheduler", n), "family", "blox") == family]


def takes(cls: Any, name: str) -> bool:
    """Whether ``cls``'s constructor (or a factory's signature) has a parameter ``name``."""
    try:
        return name in inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return False


def _wants_seed(cls) -> str | None:
    return "seed" if takes(cls, "seed") else ("rng" if takes(cls, "rng") else None)


def _build(kind: str, spec: Any, base: type | tuple, seed: int | None = None, **kw):
    if isinstance(spec, base):
        if kw:
            raise InstanceError(f"options {sorted(kw)} given with a {kind} object", field=kind)
        return spec
    if isinstance(spec, Mapping):
        cfg = dict(spec)
        name = cfg.pop("name", None)
        if not isinstance(name, str):
            raise InstanceError(f"a {kind} given as a dict needs a 'name', got {name!r}", field=kind)
        kw = {**cfg, **kw}
    elif isinstance(spec, str):
        name = spec
        # "accept-1.2" is accept-k with k = 1.2 (Blox's names for the admission variants)
        if kind == "admission" and spec.startswith("accept-") and spec not in ADMISSIONS:
            try:
                kw = {"k": float(spec.split("-", 1)[1]), **kw}
                name = "accept-k"
            except ValueError:
                pass
    else:
        raise InstanceError(f"must be a name, a dict with 'name', or a policy object, got {type(spec).__name__}",
                            field=kind)
    cls = lookup(kind, name)
    wants = _wants_seed(cls)
    if seed is not None and wants and "seed" not in kw and "rng" not in kw:
        kw[wants] = seed
    try:
        return cls(**kw)
    except TypeError as exc:
        raise InstanceError(f"bad options for {name!r}: {exc}", field=kind) from None


def build_scheduling(spec: Any, seed: int | None = None, **kw) -> SchedulingPolicy | SchedulerPlacer:
    """A scheduling policy (or a combined policy) from a name, a dict ``{"name": ..., **options}`` or an
    object."""
    return _build("scheduler", spec, (SchedulingPolicy, SchedulerPlacer), seed=seed, **kw)


def build_placement(spec: Any, **kw) -> PlacementPolicy:
    """A placement policy from a name, a dict or an object."""
    return _build("placement", spec, PlacementPolicy, **kw)


def build_admission(spec: Any, **kw) -> AdmissionPolicy:
    """An admission policy from a name (``accept-1.2`` is ``accept-k`` with k = 1.2), a dict or an object."""
    return _build("admission", spec, AdmissionPolicy, **kw)


def lookup_perf(name: Any) -> Callable[..., PerfModel]:
    """The class (or factory) registered as performance model ``name``; a clear error if there is none.

    ```pycon
    >>> lookup_perf("mixed").__name__
    'MixedPerf'

    ```
    """
    return lookup("perf", name)


def build_perf(spec: Any = None, **kw) -> PerfModel:
    """A performance model from ``None`` (constant, Blox's penalty), a name, a dict or a model object."""
    return _build("perf", "constant" if spec is None else spec, PerfModel, **kw)


def build_policy(scheduler: Any = "fifo", placement: Any = "consolidated", seed: int | None = None,
                 **scheduler_options) -> SchedulerPlacer:
    """The engine's policy: a combined policy as is, or a scheduling key composed with a placement."""
    s = build_scheduling(scheduler, seed=seed, **scheduler_options)
    if isinstance(s, SchedulerPlacer):
        return s
    return Composed(s, build_placement(placement))
