"""The doors: ``load``, ``save``, ``solve``, ``evaluate``, ``generate``, the same for every problem.

Each goes through [`optsched.registry`][]: the problem is found from the instance's class (or the file's
``"format"`` tag), and the problem's reader, writer, evaluator, generator and algorithms do the work.

```pycon
>>> import optsched
>>> inst = optsched.generate("rar", jobs=6, servers=2, seed=1)
>>> res = optsched.solve(inst)                       # the problem's default algorithm: SJF-BCO
>>> res.algorithm, optsched.evaluate(inst, res.schedule).objective == res.objective
('sjf-bco', True)

```
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, TypeAlias, TypeVar, cast, overload

from .errors import InstanceError, SolverError
from .io import BUNDLED_PREFIX, atomic_open, bundled_path, check_format, check_output, read_json, write_json
from .limits import check_seed, paused_gc, require_memory
from .registry import get_algorithm, get_problem, problem_for_format, problem_of
from .result import Evaluation, Result, Schedule, SolveStatus

if TYPE_CHECKING:  # the data classes, for the signatures only (the doors import no problem module)
    from .problems.deadline import DeadlineWorkload
    from .problems.pipeline import PipelineJob, PipelineJobSet
    from .problems.placement import PlacementInstance
    from .problems.rar import RarInstance
    from .problems.total_jct import TotalJctInstance
    from .problems.workload import Workload

    #: an instance of an offline problem: what :func:`solve` and :func:`evaluate` take
    Instance: TypeAlias = RarInstance | TotalJctInstance | PlacementInstance | DeadlineWorkload
    #: anything :func:`load` returns and :func:`save` writes
    ProblemData: TypeAlias = (RarInstance | TotalJctInstance | PlacementInstance | DeadlineWorkload | PipelineJob
                              | PipelineJobSet | Workload)

__all__ = ["evaluate", "from_dict", "generate", "load", "load_instance", "save", "solve", "to_dict"]

T = TypeVar("T")


def from_dict(data: Mapping[str, Any], name: str = "") -> ProblemData:
    """Validate an already-parsed file of any registered format (dispatch on its ``"format"`` tag)."""
    return problem_for_format(check_format(data)).reader(data, name)


def to_dict(obj: ProblemData) -> dict[str, Any]:
    """The JSON-ready form of any registered problem's data."""
    return problem_of(obj).writer(obj)


@overload
def load(path: str | os.PathLike[str]) -> ProblemData: ...


@overload
def load(path: str | os.PathLike[str], expect: type[T]) -> T: ...


def load(path: str | os.PathLike[str], expect: type[Any] | None = None) -> Any:
    """Read and validate a file of any registered format (RAR-DDLS, total JCT, placement, pipeline jobs,
    workloads); a bad file raises [`InstanceError`][optsched.errors.InstanceError] naming the field and the job.
    ``"bundled:rar/mobihoc22-seed0.json"`` names an instance shipped with the package. With ``expect`` (a data
    class), a file of another problem is refused and the result is typed as that class.

    ```pycon
    >>> import tempfile, os, optsched
    >>> p = os.path.join(tempfile.mkdtemp(), "x.json")
    >>> optsched.save(optsched.generate("rar", jobs=2, servers=2, seed=0), p)
    >>> optsched.load(p, optsched.RarInstance).n_jobs
    2
    >>> optsched.load(p, optsched.TotalJctInstance)
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: format: expected a total-jct file, got optsched/rar-ddls@1

    ```
    """
    path = _path(path, "path")
    if path.startswith(BUNDLED_PREFIX):
        path = os.fspath(bundled_path(path))
    if expect is not None and not isinstance(expect, type):
        raise InstanceError(f"must be a data class such as optsched.RarInstance, got {expect!r}", field="expect")
    data = read_json(path)
    if expect is not None:
        want = problem_of(expect)
        tag = check_format(data)
        if tag != want.format:
            raise InstanceError(f"expected a {want.name} file, got {tag}", field="format")
    with paused_gc():   # a large file's objects: acyclic, freed by reference counting
        obj = from_dict(data, Path(path).stem)
    if expect is not None and not isinstance(obj, expect):
        raise InstanceError(f"expected {expect.__name__}, the file holds {type(obj).__name__}", field="format")
    return obj


def load_instance(path: str | os.PathLike[str]) -> Instance:
    """[`load`][optsched.api.load] for [`solve`][optsched.api.solve] and [`evaluate`][optsched.api.evaluate]: a file of
    a problem that is simulated rather than
    solved (a workload, a pipeline job) is refused with a hint instead of failing later; a problem that has
    solvers but no evaluator (the contention round model, whose exact methods score their own plans) is solved."""
    obj = load(path)
    prob = problem_of(obj)
    if prob.evaluator is None and not prob.algorithms:
        hint = {"pipeline-job": " (place it with 'optsched place', or wrap it in an optsched/placement@1 file)",
                "workload": " (run it with 'optsched simulate')"}.get(prob.name, "")
        raise InstanceError(f"a {prob.name} file is not an offline instance to solve or evaluate{hint}",
                            field="format")
    return cast("Instance", obj)


def save(obj: ProblemData, path: str | os.PathLike[str]) -> None:
    """Write any registered problem's data to ``path`` (atomically; ``"-"`` is standard output); an error names
    ``path`` (never a temporary file beside it). A name ending in ``.csv`` gets the CSV flavour of simulator and
    deadline workloads, which ``optsched simulate`` and their readers (``read_workload``, ``read_deadline_workload``;
    not [`load`][optsched.api.load], which reads JSON) take back; the other kinds are JSON only, and a ``.csv`` name
    for them is refused before anything is written.

    ```pycon
    >>> import tempfile, pathlib
    >>> wl = generate("workload", jobs=3, seed=0)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save(wl, pathlib.Path(d) / "w.csv")
    ...     (pathlib.Path(d) / "w.csv").read_text().splitlines()[0].split(",")[:3]
    ['id', 'arrival_s', 'gpus']

    ```
    """
    path = _path(path, "path")
    if path != "-" and Path(path).suffix.lower() == ".csv":
        csv_text = _csv_writer(obj)
        check_output(path, "path")
        text = csv_text()  # before the file opens: a format-2 job is refused with nothing written
        with atomic_open(path, encoding="utf-8", newline="") as fh:
            fh.write(text)
        return
    data = to_dict(obj)
    check_output(path, "path")
    write_json(path, data)


def _csv_writer(obj: ProblemData) -> Callable[[], str]:
    """A simulator or deadline workload's ``csv_text``, else a refusal naming ``path``."""
    csv_text = getattr(obj, "csv_text", None)
    if csv_text is None:
        raise InstanceError(f"a {problem_of(obj).name} file is written as JSON only: name it .json (CSV is the "
                            "flavour of simulator and deadline workloads)", field="path")
    return cast("Callable[[], str]", csv_text)


def _path(path: Any, name: str) -> str:
    """A file path given to a door: a ``str`` or ``os.PathLike`` naming something, else
    [`InstanceError`][optsched.errors.InstanceError]."""
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise InstanceError(f"must be a file path (str or os.PathLike), got {type(path).__name__} {path!r:.60}",
                            field=name)
    text = os.fspath(path)
    if not isinstance(text, str) or not text or "\0" in text:
        raise InstanceError(f"must be a non-empty file path, got {text!r:.60}", field=name)
    return text


def _unexpected(exc: TypeError) -> str | None:
    """The keyword a call refused (Python's "got an unexpected keyword argument 'x'"), else ``None``."""
    m = re.search(r"unexpected keyword argument '([^']+)'", str(exc))
    return m.group(1) if m else None


def _accepted(func: Any) -> list[str]:
    """The keyword options ``func`` names in its signature (beside the instance, ``seed`` and ``time_limit``)."""
    import inspect

    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - a builtin
        return []
    named = [p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)][1:]
    if any(p.kind == p.VAR_KEYWORD for p in params):
        named.append("and those of its model (see its docstring)")
    return named


def generate(problem: str, **params: Any) -> ProblemData:
    """A random instance of ``problem`` (a name such as ``"rar"``, ``"total-jct"``, ``"placement"``) from its
    registered generator; ``params`` are the generator's (``optsched list problems`` shows each generator).

    ```pycon
    >>> generate("total-jct", jobs=3, seed=0).n_jobs
    3

    ```
    """
    if not isinstance(problem, str):
        raise InstanceError(f"must be a problem name such as 'rar', got {problem!r:.60}", field="problem")
    gen = get_problem(problem).resolve_generator()
    check_seed(params.get("seed", None))
    try:
        return gen(**params)
    except TypeError as exc:
        bad = _unexpected(exc)
        if bad is not None:
            raise InstanceError(f"the {problem!r} generator takes no parameter {bad!r} (it takes: "
                                f"{', '.join(_accepted(gen)) or 'none'})", field=bad) from None
        missing = re.search(r"missing \d+ required (?:keyword-only |positional )?arguments?: '([^']+)'", str(exc))
        if missing:
            raise InstanceError(f"the {problem!r} generator needs this parameter", field=missing.group(1)) from None
        raise InstanceError(f"bad parameters for the {problem!r} generator: {exc}", field="generate") from None


# what the algorithms keep per GPU of the cluster (per-GPU availability, loads and placements: an estimate); a
# file naming a server of 10^9 GPUs is refused here rather than after minutes of allocation (issue 28)
GPU_BYTES = 1_000


def _fits_in_memory(instance: Any) -> None:
    cluster = getattr(instance, "cluster", None)
    total = getattr(cluster, "total_gpus", None)
    if isinstance(total, int):
        require_memory(total, GPU_BYTES, "GPUs", field="cluster.servers")


def _instance_problem(instance: Any) -> Any:
    """The problem of an instance given to [`solve`][optsched.api.solve] or [`evaluate`][optsched.api.evaluate], or
    [`InstanceError`][optsched.errors.InstanceError] naming
    ``instance`` (a path or ``None`` is not an instance)."""
    if isinstance(instance, (str, os.PathLike)):
        raise InstanceError(f"must be an instance object; load the file first: optsched.load({instance!r:.60})",
                            field="instance")
    return problem_of(instance)


def evaluate(instance: Instance, schedule: Schedule) -> Evaluation:
    """Score ``schedule`` on ``instance`` with the problem's independent evaluator; an infeasible schedule
    raises [`ScheduleError`][optsched.errors.ScheduleError] naming the field and the job."""
    if not isinstance(schedule, Schedule):
        raise InstanceError(f"must be a Schedule, got {type(schedule).__name__}", field="schedule")
    evaluator = _instance_problem(instance).resolve_evaluator()
    _fits_in_memory(instance)
    result: Evaluation = evaluator(instance, schedule)
    return result


def solve(instance: Instance, algorithm: str | None = None, *, seed: int | None = None,
          time_limit: float | None = None, **options: Any) -> Result:
    """Run ``algorithm`` (default: the problem's own, e.g. ``sjf-bco`` for RAR-DDLS, ``total-jct-bnb`` for
    total JCT) on ``instance`` and return a [`Result`][optsched.result.Result], scored by the problem's evaluator.

    ```pycon
    >>> from optsched.generators.rar import tiny_rar_example
    >>> r = solve(tiny_rar_example(), "ff")
    >>> r.status.value, r.objective == r.schedule.makespan
    ('feasible', True)

    ```
    """
    prob = _instance_problem(instance)
    if algorithm is not None and not isinstance(algorithm, str):
        raise InstanceError(f"must be an algorithm name such as 'ff', got {algorithm!r:.60}", field="algorithm")
    check_seed(seed)
    name = algorithm or prob.default_algorithm
    if name is None:
        raise InstanceError(f"a {prob.name} has no algorithms: it is simulated, not solved (optsched.sim.simulate)",
                            field="instance")
    spec = get_algorithm(name)
    if spec.problem is not prob:
        raise InstanceError(f"algorithm {name!r} solves {spec.problem.name}, not {prob.name} "
                            f"(its algorithms: {', '.join(sorted(prob.algorithms))})", field="algorithm")
    if time_limit is not None:
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or \
                not (math.isfinite(time_limit) and time_limit > 0):
            raise InstanceError(f"must be a positive number of seconds, got {time_limit!r:.60}", field="time_limit")
        if not spec.exact:
            raise InstanceError(f"applies to exact models only; {name} is a heuristic", field="time_limit")
    _fits_in_memory(instance)
    t0 = time.perf_counter()
    try:
        out = spec.func(instance, seed=seed, time_limit=time_limit, **options)
    except TypeError as exc:
        bad = _unexpected(exc)
        if bad is None or bad not in options:
            raise
        known = [o for o in _accepted(spec.func) if o not in ("seed", "time_limit")]
        raise InstanceError(f"{name} takes no option {bad!r} (its options: {', '.join(known) or 'none'})",
                            field=bad) from None
    runtime = time.perf_counter() - t0
    if isinstance(out, Result):
        signal = out.info.get("interrupted")
        if signal and out.status in (SolveStatus.TIME_LIMIT, SolveStatus.UNKNOWN, SolveStatus.FEASIBLE):
            out = dataclasses.replace(out, status=SolveStatus.INTERRUPTED)
        return out
    info: dict[str, Any] = {}
    if isinstance(out, tuple):
        out, info = out
    if not isinstance(out, Schedule):
        raise SolverError(f"algorithm {name!r} returned {type(out).__name__}, not a Schedule (a bug)")
    scored = evaluate(instance, out)
    sched = Schedule(scored.schedule.jobs, algorithm=name, instance=getattr(instance, "name", ""))
    return Result(objective=scored.objective, status=SolveStatus.FEASIBLE, runtime_s=runtime, schedule=sched,
                  algorithm=name, seed=seed, info=info, evaluation=scored)
