"""The one registry: every problem the package knows, found by its data class, and every algorithm by name.

A [`Problem`][optsched.registry.Problem] ties together what a newcomer looks for under one name: the data class(es), the
file format
(tag, reader, writer), the evaluator, the generator, the default algorithm and the algorithms that solve it
(name -> module, imported on first use, so resolving ``sjf-bco`` never imports OR-Tools or pandas). Problem
modules ([`optsched.problems`][]) register their [`Problem`][optsched.registry.Problem] when imported; algorithm modules
register
their functions with [`algorithm`][optsched.registry.algorithm]. ``optsched.load / save / solve / evaluate / generate``,
the CLI and the
benchmarks all go through here ([`optsched.api`][] holds the doors).

Problem identity is the class: ``problem_of(inst)`` walks the instance's class hierarchy, never its name.

```pycon
>>> from optsched.problems.rar import RarInstance
>>> p = problem_of(RarInstance)
>>> p.name, p.format, p.default_algorithm
('rar-ddls', 'optsched/rar-ddls@1', 'sjf-bco')
>>> get_algorithm("ff").problem is p
True

```
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, TypeVar

from .errors import InstanceError

# every module that registers a Problem; imported when a lookup by name or format tag needs all of them
PROBLEM_MODULES: tuple[str, ...] = (
    "optsched.problems.rar",
    "optsched.problems.placement",
    "optsched.problems.pipeline",
    "optsched.problems.total_jct",
    "optsched.problems.workload",
    "optsched.problems.deadline",
    "optsched.problems.contention",
)


@dataclass(frozen=True, eq=False)
class Problem:
    """Everything that belongs to one problem; ``evaluator``, ``generator`` and the algorithm modules are
    ``"module:function"`` / module strings, imported on first use (they live in higher layers).

    ``classes`` are the data classes this problem reads and writes (the first is the main one);
    ``algorithms`` maps each algorithm name to the module that registers it (a test keeps the table and the
    registrations in sync).
    """

    name: str
    title: str
    classes: tuple[type, ...]
    format: str
    reader: Callable[[Mapping[str, Any], str], Any]
    writer: Callable[[Any], dict]
    evaluator: str | None = None
    generator: str | None = None
    default_algorithm: str | None = None
    algorithms: Mapping[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    # the command line's parts ("module:function", in the CLI layer): the function adding the problem's
    # ``optsched generate KIND`` sub-parser, and the one-line summary printed of a generated instance
    generate_cli: str | None = None
    summary: str | None = None
    # older or newer format tags the same reader takes (a format's versions)
    other_formats: tuple[str, ...] = ()

    @property
    def cls(self) -> type:
        return self.classes[0]

    def __repr__(self) -> str:
        return f"Problem({self.name!r}, format={self.format!r}, default_algorithm={self.default_algorithm!r})"

    def resolve_evaluator(self) -> Callable[..., Any]:
        if self.evaluator is None:
            raise InstanceError(f"problem {self.name!r} has no independent evaluator (simulate it, or solve it: "
                                "its exact methods score their own schedules)", field="problem")
        return _resolve(self.evaluator)

    def describe_instance(self, obj: Any) -> str:
        """The problem's one-line summary of an instance (its class name when it has none)."""
        return str(_resolve(self.summary)(obj)) if self.summary else type(obj).__name__

    def resolve_generator(self) -> Callable[..., Any]:
        if self.generator is None:
            raise InstanceError(f"problem {self.name!r} has no generator", field="problem")
        return _resolve(self.generator)


@dataclass(frozen=True, eq=False)
class Algorithm:
    """A registered algorithm: ``func(instance, *, seed=None, time_limit=None, **options)`` returns a
    [`Schedule`][optsched.result.Schedule] (optionally ``(schedule, info)``), scored by the problem's evaluator, or
    a complete [`Result`][optsched.result.Result] (exact models, which report their own status and bound)."""

    name: str
    problem: Problem
    func: Callable[..., Any]
    exact: bool
    description: str

    @property
    def kind(self) -> str:
        return "exact" if self.exact else "heuristic"


F = TypeVar("F", bound=Callable[..., Any])

_PROBLEMS: dict[str, Problem] = {}
_BY_CLASS: dict[type, Problem] = {}
_BY_FORMAT: dict[str, Problem] = {}
_ALGORITHMS: dict[str, Algorithm] = {}
_loaded = False


def _resolve(spec: str) -> Callable[..., Any]:
    module, func = spec.split(":")
    return getattr(importlib.import_module(module), func)


def register_problem(problem: Problem) -> Problem:
    """Register ``problem`` (called once by its module in [`optsched.problems`][])."""
    for key in (problem.name, *problem.aliases):
        _PROBLEMS[key] = problem
    for cls in problem.classes:
        _BY_CLASS[cls] = problem
    for tag in (problem.format, *problem.other_formats):
        _BY_FORMAT[tag] = problem
    return problem


def _load_all() -> None:
    global _loaded
    if not _loaded:
        for mod in PROBLEM_MODULES:
            importlib.import_module(mod)
        _loaded = True


def problems() -> dict[str, Problem]:
    """Every registered problem by its name (aliases left out).

    ```pycon
    >>> sorted(problems())
    ['contention', 'deadline', 'pipeline-job', 'placement', 'rar-ddls', 'total-jct', 'workload']

    ```
    """
    _load_all()
    return {p.name: p for p in sorted(set(_PROBLEMS.values()), key=lambda p: p.name)}


def get_problem(name: str) -> Problem:
    """A problem by name or alias (``"rar-ddls"`` or ``"rar"``)."""
    _load_all()
    if name not in _PROBLEMS:
        raise InstanceError(f"unknown problem {name!r} (known: {', '.join(problems())})", field="problem")
    return _PROBLEMS[name]


def problem_of(obj: Any) -> Problem:
    """The problem an instance (or a data class) belongs to, by class, walking the class hierarchy."""
    cls = obj if isinstance(obj, type) else type(obj)
    for c in cls.__mro__:
        if c in _BY_CLASS:
            return _BY_CLASS[c]
    raise InstanceError(f"{cls.__name__} is not the data of a registered problem", field="instance")


def problem_for_format(tag: str) -> Problem:
    """The problem whose files carry the format tag ``tag``."""
    _load_all()
    if tag not in _BY_FORMAT:
        raise InstanceError(f"unknown format {tag!r} (known: {', '.join(sorted(_BY_FORMAT))})", field="format")
    return _BY_FORMAT[tag]


def algorithm(name: str, problem: type, *, exact: bool = False, description: str = ""
              ) -> Callable[[F], F]:
    """Decorator registering ``func`` as algorithm ``name`` for the problem whose data class is ``problem``.

    The name must appear in that problem's ``algorithms`` table (so that it can be found without importing
    every solver); the first line of the docstring is the default description.
    """
    prob = problem_of(problem)

    def deco(func: F) -> F:
        if prob.algorithms.get(name) != func.__module__:
            raise RuntimeError(f"algorithm {name!r} of {func.__module__} is missing from the algorithms table of "
                               f"problem {prob.name!r}")  # a programming error, caught by the test suite
        doc = description or (func.__doc__ or "").strip().split("\n")[0]
        _ALGORITHMS[name] = Algorithm(name, prob, func, exact, doc)
        return func

    return deco


def get_algorithm(name: str) -> Algorithm:
    """The algorithm registered under ``name``; only its module is imported."""
    if name not in _ALGORITHMS:
        _load_all()
        for prob in set(_PROBLEMS.values()):
            if name in prob.algorithms:
                importlib.import_module(prob.algorithms[name])
                break
    if name not in _ALGORITHMS:
        raise InstanceError(f"unknown algorithm {name!r} (known: {', '.join(list_algorithms())})",
                            field="algorithm")
    return _ALGORITHMS[name]


def list_algorithms(problem: str | type | None = None) -> dict[str, Algorithm]:
    """Registered algorithms by name, optionally only those of one problem (name, alias or data class).

    Imports every algorithm module of the problems asked for.

    ```pycon
    >>> sorted(list_algorithms("rar-ddls"))[:3]
    ['brute-force', 'exact', 'exact-interval']

    ```
    """
    _load_all()
    if problem is None:
        wanted = set(_PROBLEMS.values())
    else:
        wanted = {problem_of(problem) if isinstance(problem, type) else get_problem(problem)}
    for prob in wanted:
        for mod in sorted(set(prob.algorithms.values())):
            importlib.import_module(mod)
    return {n: a for n, a in sorted(_ALGORITHMS.items()) if a.problem in wanted}
