"""One registry maps algorithm names to functions: ``optsched.solve``, the CLI and the benchmarks all go
through it.

An algorithm is a function ``f(instance, *, seed=None, time_limit=None, **options)`` returning either a
:class:`~optsched.result.Schedule` (optionally as ``(schedule, info_dict)``), which :func:`solve` scores with
the problem's evaluator, or a complete :class:`~optsched.result.Result` (exact models, which report their
own status and bound). Modules in ``optsched.algorithms`` and ``optsched.exact`` register themselves with
:func:`register` and are imported on first use.
"""

from __future__ import annotations

import importlib
import pkgutil
import time
from dataclasses import dataclass
from typing import Any, Callable

from .errors import InstanceError
from .result import Result, Schedule, SolveStatus

_PACKAGES = ("optsched.algorithms", "optsched.exact")


@dataclass(frozen=True)
class AlgorithmSpec:
    name: str
    problem: str  # class name of the problem data it takes, e.g. "RarInstance"
    func: Callable[..., Any]
    exact: bool
    description: str


_REGISTRY: dict[str, AlgorithmSpec] = {}
_EVALUATORS: dict[str, str] = {"RarInstance": "optsched.evaluate:evaluate"}
_discovered = False


def register(name: str, problem: str, *, exact: bool = False, description: str = ""):
    """Decorator registering an algorithm under ``name`` for problems of class ``problem``."""

    def deco(func):
        _REGISTRY[name] = AlgorithmSpec(name, problem, func, exact, description or (func.__doc__ or "").strip()
                                        .split("\n")[0])
        return func

    return deco


def register_evaluator(problem: str, spec: str) -> None:
    """Register ``"module:function"`` as the evaluator of ``problem`` (it must return ``.objective`` and
    ``.schedule``)."""
    _EVALUATORS[problem] = spec


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    _discovered = True
    for pkg_name in _PACKAGES:
        pkg = importlib.import_module(pkg_name)
        for mod in pkgutil.iter_modules(pkg.__path__):
            if not mod.name.startswith("_"):
                importlib.import_module(f"{pkg_name}.{mod.name}")


def algorithms(problem: str | None = None) -> dict[str, AlgorithmSpec]:
    """Registered algorithms, optionally only those for one problem class name."""
    _discover()
    return {n: s for n, s in sorted(_REGISTRY.items()) if problem is None or s.problem == problem}


def get(name: str) -> AlgorithmSpec:
    specs = algorithms()
    if name not in specs:
        raise InstanceError(f"unknown algorithm {name!r} (known: {', '.join(specs)})", field="algorithm")
    return specs[name]


def evaluator(problem: str) -> Callable:
    module, func = _EVALUATORS[problem].split(":")
    return getattr(importlib.import_module(module), func)


def solve(instance, algorithm: str = "sjf-bco", *, seed: int | None = None, time_limit: float | None = None,
          **options: Any) -> Result:
    """Run ``algorithm`` on ``instance`` and return a scored :class:`Result`.

    >>> from optsched.generate import tiny_rar_example
    >>> r = solve(tiny_rar_example(), "ff")
    >>> r.status.value, r.objective == r.schedule.makespan
    ('feasible', True)
    """
    spec = get(algorithm)
    kind = type(instance).__name__
    if spec.problem != kind:
        raise InstanceError(f"algorithm {algorithm!r} solves {spec.problem}, not {kind}", field="algorithm")
    t0 = time.perf_counter()
    out = spec.func(instance, seed=seed, time_limit=time_limit, **options)
    runtime = time.perf_counter() - t0
    if isinstance(out, Result):
        return out
    info: dict[str, Any] = {}
    if isinstance(out, tuple):
        out, info = out
    if not isinstance(out, Schedule):
        raise TypeError(f"algorithm {algorithm!r} returned {type(out).__name__}")
    scored = evaluator(kind)(instance, out)
    sched = Schedule(scored.schedule.jobs, algorithm=algorithm, instance=getattr(instance, "name", ""))
    return Result(objective=scored.objective, status=SolveStatus.FEASIBLE, runtime_s=runtime, schedule=sched,
                  algorithm=algorithm, seed=seed, info=info)
