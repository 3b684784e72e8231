"""The online scheduling problem's data: [`WorkloadJob`][optsched.problems.workload.WorkloadJob],
[`Workload`][optsched.problems.workload.Workload], and their file format.

A workload is what the online cluster simulator ([`optsched.sim`][]) runs: jobs arriving over time, each with a
GPU demand, an amount of work and a profiled speed. It lives here, with the other problems' data, so that reading
or writing a workload never imports the simulator; ``optsched.sim`` re-exports every public name.

A workload is immutable and validated once, at construction: every bad value raises
[`InstanceError`][optsched.errors.InstanceError] naming the field and the job. Files come in two flavours with the same
column names (documented in ``docs/formats.md``, section ``optsched/workload@1``):

* JSON: ``{"format": "optsched/workload@1", "name": ..., "seed": ..., "meta": {...}, "jobs": [{...}, ...]}``
* CSV: a header line with the job field names (``id, arrival_s, gpus, iterations, iteration_time_s`` required;
  ``model, predicted_iterations, deadline_s, user, group, tracked, gpu_type`` optional), one job per line; an
  empty cell means the default.

``gpu_type`` names the GPU type a job must run on (``V100``, ``K80``, ...: a server's ``Server.gpu_type``); empty
means any type (the simulator still keeps each job on one type at a time).

Units: seconds (``arrival_s``, ``iteration_time_s``, ``deadline_s`` is an *absolute* time, like
``arrival_s``); ``iterations`` is the amount of work (any positive number: fractional iterations are allowed,
traces given as durations use ``iteration_time_s = 1``).

```pycon
>>> wl = Workload((WorkloadJob("a", 0, 2, 100, 0.5), WorkloadJob("b", 60, 1, 10, 2.0, model="ResNet-18")))
>>> len(wl), wl.total_work_gpu_s, wl.jobs[1].duration_alone_s
(2, 120.0, 20.0)
>>> workload_from_dict(workload_to_dict(wl)) == wl
True
>>> WorkloadJob("c", 0, 0, 10, 1.0)
Traceback (most recent call last):
...
optsched.errors.InstanceError: gpus (job 'c'): must be an integer >= 1, got 0

```
"""

from __future__ import annotations

import csv
import io as _io
import json
import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ..errors import InstanceError
from ..io import atomic_open, csv_jobs, is_finite_number, read_json, read_text, write_json
from ..limits import paused_gc
from ..registry import Problem, register_problem

FORMAT = "optsched/workload@1"

# column order of the CSV flavour (and of to_records / to_frame)
COLUMNS = ("id", "arrival_s", "gpus", "iterations", "iteration_time_s", "model", "predicted_iterations",
           "deadline_s", "user", "group", "tracked", "gpu_type")
REQUIRED = ("id", "arrival_s", "gpus", "iterations", "iteration_time_s")


@dataclass(frozen=True, slots=True)
class WorkloadJob:
    """One job of a workload: arrival, GPU demand, work and profiled speed.

    ``iteration_time_s`` is the profiled seconds per iteration alone on a consolidated placement (the
    performance model may change it with the placement and co-location); ``iterations`` the total work;
    ``predicted_iterations`` what a predictor believes the work is (A-SRPT, SRTF with predictions);
    ``deadline_s`` an absolute completion deadline (optional); ``user``/``group`` tenant labels (admission
    quotas); ``spec`` an arbitrary object a performance model may need (a ``RarJob``, a ``PipelineJob``);
    ``tracked`` whether the job counts in the metrics (Blox measures only a window of job ids); ``gpu_type`` the
    GPU type it must run on ("" = any).

    ```pycon
    >>> WorkloadJob("j", 0.0, 4, 1000, 0.25).duration_alone_s
    250.0
    >>> WorkloadJob("k", 0.0, 1, 10, 1.0, gpu_type="K80").gpu_type
    'K80'

    ```
    """

    id: str
    arrival_s: float
    gpus: int
    iterations: float
    iteration_time_s: float
    model: str = ""
    predicted_iterations: float | None = None
    deadline_s: float | None = None
    user: str = ""
    group: str = ""
    spec: Any = field(default=None, compare=False)
    tracked: bool = True
    gpu_type: str = ""

    def __post_init__(self) -> None:
        jid = self.id
        if not isinstance(jid, str) or not jid:
            raise InstanceError(f"must be a non-empty string, got {jid!r}", field="id",
                                job=jid if isinstance(jid, str) else None)

        def bad(name: str, msg: str):
            raise InstanceError(f"{msg}, got {getattr(self, name)!r}", field=name, job=jid)

        if not is_finite_number(self.arrival_s) or self.arrival_s < 0:
            bad("arrival_s", "must be a finite number >= 0")
        g: Any = self.gpus  # an integral float from a file is accepted as an int
        if isinstance(g, float) and g.is_integer():
            object.__setattr__(self, "gpus", int(g))
        elif isinstance(g, bool) or not isinstance(g, int):
            bad("gpus", "must be an integer >= 1")
        if self.gpus < 1:
            bad("gpus", "must be an integer >= 1")
        if not is_finite_number(self.iterations) or self.iterations <= 0:
            bad("iterations", "must be a finite number > 0")
        if not is_finite_number(self.iteration_time_s) or self.iteration_time_s <= 0:
            bad("iteration_time_s", "must be a finite number > 0")
        if self.predicted_iterations is not None and (not is_finite_number(self.predicted_iterations)
                                                      or self.predicted_iterations <= 0):
            bad("predicted_iterations", "must be a finite number > 0 or absent")
        if self.deadline_s is not None:
            if not is_finite_number(self.deadline_s):
                bad("deadline_s", "must be a finite number (an absolute time in seconds) or absent")
            if self.deadline_s < self.arrival_s:
                bad("deadline_s", f"must not precede the arrival ({self.arrival_s!r})")
        for name in ("model", "user", "group"):
            if not isinstance(getattr(self, name), str):
                bad(name, "must be a string")
        if not isinstance(self.tracked, bool):
            bad("tracked", "must be true or false")
        if not isinstance(self.gpu_type, str) or self.gpu_type != self.gpu_type.strip() or "," in self.gpu_type:
            bad("gpu_type", "must be a GPU type name (no surrounding spaces, no commas) or empty")
        # store plain floats (numpy scalars from generators would leak into JSON otherwise)
        for name in ("arrival_s", "iterations", "iteration_time_s"):
            object.__setattr__(self, name, float(getattr(self, name)))
        for name in ("predicted_iterations", "deadline_s"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, float(getattr(self, name)))

    @property
    def duration_alone_s(self) -> float:
        """Profiled time alone: iterations x iteration time."""
        return self.iterations * self.iteration_time_s

    @classmethod
    def from_columns(cls, ids: Sequence[str], arrival_s: Any, gpus: Any, iterations: Any, iteration_time_s: Any,
                     model: Sequence[str], tracked: Any) -> tuple[WorkloadJob, ...]:
        """Many jobs at once from columns (sequences or numpy arrays of equal length), the same jobs as
        ``WorkloadJob(ids[i], arrival_s[i], ...)`` one by one: the columns are checked as wholes (numpy) and the
        jobs built without the per-job checks; if any column fails a check, the jobs are built one by one, so
        the error names the job and field exactly as the constructor does. A million-job generator spends most
        of its time in the per-job checks otherwise.

        ```pycon
        >>> import numpy as np
        >>> js = WorkloadJob.from_columns(["a", "b"], np.array([0.0, 5.0]), np.array([1, 4]), [10.0, 20.0],
        ...                               [1.0, 0.5], ["resnet18", "bert"], [True, False])
        >>> js[1] == WorkloadJob("b", 5.0, 4, 20.0, 0.5, model="bert", tracked=False)
        True
        >>> WorkloadJob.from_columns(["a"], [0.0], [0], [1.0], [1.0], [""], [True])
        Traceback (most recent call last):
        ...
        optsched.errors.InstanceError: gpus (job 'a'): must be an integer >= 1, got 0

        ```
        """
        import numpy as np

        ids, model = list(ids), list(model)
        a, g = np.asarray(arrival_s), np.asarray(gpus)
        k, t, tr = np.asarray(iterations), np.asarray(iteration_time_s), np.asarray(tracked)
        n = len(ids)
        ok = (all(len(c) == n for c in (a, g, k, t, model, tr))
              and a.dtype.kind == "f" and k.dtype.kind == "f" and t.dtype.kind == "f"
              and g.dtype.kind in "iu" and tr.dtype.kind == "b"
              and bool(np.isfinite(a).all() and (a >= 0).all() and (g >= 1).all()
                       and np.isfinite(k).all() and (k > 0).all() and np.isfinite(t).all() and (t > 0).all())
              and all(type(x) is str and x for x in ids) and all(type(m) is str for m in model))
        if not ok:
            return tuple(cls(i, aa, gg, kk, tt, model=m, tracked=bool(b) if isinstance(b, np.bool_) else b)
                         for i, aa, gg, kk, tt, m, b in zip(ids, arrival_s, gpus, iterations, iteration_time_s,
                                                            model, tracked))
        new, put = object.__new__, _put_job_fields
        out: list[WorkloadJob] = []
        append = out.append
        # iteration times repeat (one per model), and so does the work of a replicated trace (a million Philly
        # jobs hold about 50,000 distinct values): one float object per value, not one per job (all are finite
        # and positive, so equal values are the same number)
        same: dict[float, float] = {}
        times = [same.setdefault(x, x) for x in t.tolist()]
        work = [same.setdefault(x, x) for x in k.tolist()]
        del same
        # (the collector paused: its passes over every job built so far find no garbage, and cost a quarter of a
        # million-job build once the jobs share their floats, which such passes then read out of order)
        with paused_gc():
            for row in zip(ids, a.tolist(), g.tolist(), work, times, model, tr.tolist()):
                j = new(cls)
                put(j, *row)
                append(j)
        return tuple(out)

    def to_record(self) -> dict[str, Any]:
        """The job as a dict of the [`COLUMNS`][optsched.problems.workload.COLUMNS] (``spec`` excluded)."""
        return {c: getattr(self, c) for c in COLUMNS}


def _job_fields_setter():
    """``put(job, id, arrival_s, gpus, iterations, iteration_time_s, model, tracked)``: every field of a
    [`WorkloadJob`][optsched.problems.workload.WorkloadJob] set at once (the others to their defaults), as one
    straight-line function: [`from_columns`][optsched.problems.workload.WorkloadJob.from_columns] builds a
    million jobs with it."""
    given = ("id", "arrival_s", "gpus", "iterations", "iteration_time_s", "model", "tracked")
    lines = [f"    _set(job, {n!r}, {n})" for n in given]
    lines += [f"    _set(job, {f.name!r}, _defaults[{f.name!r}])" for f in fields(WorkloadJob) if f.name not in given]
    ns: dict[str, Any] = {"_set": object.__setattr__,
                          "_defaults": {f.name: f.default for f in fields(WorkloadJob) if f.name not in given}}
    exec(f"def put(job, {', '.join(given)}):\n" + "\n".join(lines), ns)  # noqa: S102 - our own field names
    return ns["put"]


_put_job_fields = _job_fields_setter()


@dataclass(frozen=True)
class Workload:
    """An immutable, validated sequence of jobs (ids unique), with a name, the seed that generated it (if
    any) and free-form ``meta`` (trace, load, window, model rule, ...).

    ```pycon
    >>> Workload((WorkloadJob("a", 0, 1, 1, 1.0), WorkloadJob("a", 1, 1, 1, 1.0)))
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: jobs[1].id (job 'a'): duplicate job id (first at jobs[0])

    ```
    """

    jobs: tuple[WorkloadJob, ...]
    name: str = ""
    seed: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        jobs = tuple(self.jobs)
        object.__setattr__(self, "jobs", jobs)
        object.__setattr__(self, "meta", dict(self.meta or {}))
        # the common case checked in bulk (jobs of this very class, ids unique); the loop below names the culprit
        if all(type(j) is WorkloadJob for j in jobs) and len({j.id for j in jobs}) == len(jobs):
            jobs = ()
        seen: dict[str, int] = {}
        for i, j in enumerate(jobs):
            if not isinstance(j, WorkloadJob):
                raise InstanceError(f"must be a WorkloadJob, got {type(j).__name__}", field=f"jobs[{i}]")
            if j.id in seen:
                raise InstanceError(f"duplicate job id (first at jobs[{seen[j.id]}])", field=f"jobs[{i}].id",
                                    job=j.id)
            seen[j.id] = i
        if not isinstance(self.name, str):
            raise InstanceError(f"must be a string, got {self.name!r}", field="name")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise InstanceError(f"must be an integer or absent, got {self.seed!r}", field="seed")

    def csv_text(self) -> str:
        """This workload in CSV ([`workload_to_csv_text`][optsched.problems.workload.workload_to_csv_text])."""
        return workload_to_csv_text(self)

    def __len__(self) -> int:
        return len(self.jobs)

    def __iter__(self) -> Iterator[WorkloadJob]:
        return iter(self.jobs)

    @property
    def total_work_gpu_s(self) -> float:
        """Sum of gpus x duration alone (GPU-seconds at profiled speed)."""
        return float(sum(j.gpus * j.duration_alone_s for j in self.jobs))

    @property
    def max_gpus(self) -> int:
        return max((j.gpus for j in self.jobs), default=0)

    def with_jobs(self, jobs: Iterable[WorkloadJob], **changes: Any) -> Workload:
        """A copy with other jobs (and optionally another name/seed/meta)."""
        return replace(self, jobs=tuple(jobs), **changes)

    def track_window(self, start: int, end: int) -> Workload:
        """Mark only the jobs at positions ``start <= i < end`` (arrival order) as tracked, as Blox measures
        jobs 3000-4000 of the Philly trace.

        ```pycon
        >>> wl = Workload(tuple(WorkloadJob(str(i), i, 1, 1, 1.0) for i in range(5))).track_window(1, 3)
        >>> [j.tracked for j in wl]
        [False, True, True, False, False]

        ```
        """
        if not 0 <= start < end:
            raise InstanceError(f"must be START:END with 0 <= START < END, got {start}:{end}", field="window")
        if start >= len(self.jobs):
            raise InstanceError(f"{start}:{end} tracks no job: the workload has {len(self.jobs)} jobs (positions 0.."
                                f"{len(self.jobs) - 1} in arrival order)", field="window")
        order = sorted(range(len(self.jobs)), key=lambda i: (self.jobs[i].arrival_s, i))
        rank = {i: r for r, i in enumerate(order)}
        jobs = [replace(j, tracked=start <= rank[i] < end) for i, j in enumerate(self.jobs)]
        return replace(self, jobs=tuple(jobs), meta={**self.meta, "track_window": [int(start), int(end)]})

    def to_records(self) -> list[dict[str, Any]]:
        return [j.to_record() for j in self.jobs]

    def to_frame(self):
        """The jobs as a pandas DataFrame with the [`COLUMNS`][optsched.problems.workload.COLUMNS]."""
        import pandas as pd
        return pd.DataFrame(self.to_records(), columns=list(COLUMNS))

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], name: str = "", seed: int | None = None,
                     meta: Mapping[str, Any] | None = None) -> Workload:
        """Build from dicts with the job field names (validated like a file, with ``jobs[i].field`` paths)."""
        return cls(tuple(_job_from_mapping(r, i) for i, r in enumerate(records)), name, seed, dict(meta or {}))


# -- reading ---------------------------------------------------------------------------------------------------
_JOB_FIELDS = {f.name for f in fields(WorkloadJob)}


def _job_from_mapping(rec: Any, i: int, where: str = "jobs") -> WorkloadJob:
    path = f"{where}[{i}]"
    if not isinstance(rec, Mapping):
        raise InstanceError(f"must be an object, got {type(rec).__name__}", field=path)
    jid = rec.get("id")
    jid_s = jid if isinstance(jid, str) else None
    unknown = sorted(set(rec) - _JOB_FIELDS)
    if unknown:
        raise InstanceError(f"unknown field(s) {unknown} (known: {', '.join(COLUMNS)}, spec)", field=path, job=jid_s)
    for name in REQUIRED:
        if name not in rec:
            raise InstanceError("missing field", field=f"{path}.{name}", job=jid_s)
    try:
        return WorkloadJob(**dict(rec))
    except InstanceError as exc:
        raise InstanceError(exc.reason, field=f"{path}.{exc.field}" if exc.field else path, job=exc.job) from None


def workload_from_dict(data: Mapping[str, Any], name: str = "") -> Workload:
    """Validate a parsed ``optsched/workload@1`` JSON document."""
    if not isinstance(data, Mapping):
        raise InstanceError(f"must be a JSON object, got {type(data).__name__}")
    fmt = data.get("format")
    if fmt != FORMAT:
        raise InstanceError(f"expected {FORMAT!r}, got {fmt!r}", field="format")
    jobs = data.get("jobs")
    if not isinstance(jobs, list):
        raise InstanceError(f"must be a JSON array, got {type(jobs).__name__}", field="jobs")
    meta = data.get("meta", {})
    if not isinstance(meta, Mapping):
        raise InstanceError(f"must be an object, got {type(meta).__name__}", field="meta")
    wname = data.get("name", name) or name
    return Workload.from_records(jobs, name=wname, seed=data.get("seed"), meta=meta)


_CSV_PARSE = {"arrival_s": float, "gpus": None, "iterations": float, "iteration_time_s": float,
              "predicted_iterations": float, "deadline_s": float}


def _csv_value(col: str, text: str, path: str, job: str | None):
    text = text.strip()
    if col in ("id", "model", "user", "group", "gpu_type"):
        return text
    if col == "tracked":
        low = text.lower()
        if low in ("1", "true", "yes"):
            return True
        if low in ("0", "false", "no"):
            return False
        raise InstanceError(f"must be true/false (or 1/0), got {text!r}", field=f"{path}.{col}", job=job)
    try:
        v = float(text)
    except ValueError:
        raise InstanceError(f"must be a number, got {text!r}", field=f"{path}.{col}", job=job) from None
    if col == "gpus":
        if not v.is_integer():
            raise InstanceError(f"must be an integer >= 1, got {text!r}", field=f"{path}.{col}", job=job)
        return int(v)
    return v


def workload_from_csv_text(text: str, name: str = "") -> Workload:
    """Validate the CSV flavour (header with the column names; empty cell = default)."""
    first = next((r for r in csv.reader(_io.StringIO(text)) if any(c.strip() for c in r)), [])
    header = {h.strip() for h in first}
    if not header <= set(COLUMNS) and {"name", "time", "application", "num_replicas"} <= header:
        raise InstanceError("this is a Pollux workload CSV (name, time, application, num_replicas): run it by path "
                            "with 'optsched simulate FILE' or optsched.generators.workload.pollux_workload(path=FILE)",
                            field="header")
    if not header <= set(COLUMNS) and {"timestamp", "duration", "num_gpus"} <= header:
        raise InstanceError("this is a Philly trace CSV (timestamp, duration, num_gpus): run it by path with "
                            "'optsched simulate FILE --load L' or "
                            "optsched.generators.workload.philly_workload(path=FILE)",
                            field="header")
    records = [{col: _csv_value(col, cell, where, jid) for col, cell in cells.items()}
               for where, jid, cells in csv_jobs(text, COLUMNS, REQUIRED)]
    return Workload.from_records(records, name=name)


def read_workload(path: str | os.PathLike) -> Workload:
    """Read a workload file: CSV if the name ends in ``.csv``, JSON otherwise.

    ```pycon
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "w.csv")
    >>> _ = open(p, "w").write("id,arrival_s,gpus,iterations,iteration_time_s\\na,0,1,-5,1\\n")
    >>> read_workload(p)
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: jobs[0].iterations (job 'a'): must be a finite number > 0, got -5.0

    ```
    """
    p = Path(path)
    if p.suffix.lower() == ".csv":
        return workload_from_csv_text(read_text(p, encoding="utf-8-sig"), name=p.stem)
    return workload_from_dict(read_json(p), name=p.stem)


# -- writing ---------------------------------------------------------------------------------------------------
def _jsonable_spec(spec: Any, jid: str) -> Any:
    try:
        json.dumps(spec)
    except (TypeError, ValueError):
        raise InstanceError(f"spec of type {type(spec).__name__} cannot be written to a workload file",
                            field="spec", job=jid) from None
    return spec


def workload_to_dict(wl: Workload) -> dict[str, Any]:
    """The JSON document of a workload (defaults omitted per job)."""
    jobs = []
    for j in wl.jobs:
        rec: dict[str, Any] = {"id": j.id, "arrival_s": j.arrival_s, "gpus": j.gpus, "iterations": j.iterations,
                               "iteration_time_s": j.iteration_time_s}
        for c in ("model", "predicted_iterations", "deadline_s", "user", "group", "gpu_type"):
            v = getattr(j, c)
            if v not in ("", None):
                rec[c] = v
        if not j.tracked:
            rec["tracked"] = False
        if j.spec is not None:
            rec["spec"] = _jsonable_spec(j.spec, j.id)
        jobs.append(rec)
    out: dict[str, Any] = {"format": FORMAT}
    if wl.name:
        out["name"] = wl.name
    if wl.seed is not None:
        out["seed"] = wl.seed
    if wl.meta:
        out["meta"] = _jsonable_meta(wl.meta)
    out["jobs"] = jobs
    return out


def _jsonable_meta(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {str(k): _jsonable_meta(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable_meta(v) for v in x]
    if isinstance(x, (str, bool)) or x is None:
        return x
    if isinstance(x, (int, float)):
        return x
    try:  # numpy scalars
        return x.item()
    except AttributeError:
        return str(x)


def workload_to_csv_text(wl: Workload) -> str:
    """The CSV flavour (the ``gpu_type`` column only when some job names a type)."""
    cols = COLUMNS if any(j.gpu_type for j in wl.jobs) else tuple(c for c in COLUMNS if c != "gpu_type")
    buf = _io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for j in wl.jobs:
        if j.spec is not None:
            raise InstanceError("the CSV flavour cannot carry a spec; write JSON", field="spec", job=j.id)
        w.writerow([("" if v is None else ("true" if v is True else "false" if v is False else repr(v)
                                           if isinstance(v, float) else v))
                    for v in (getattr(j, c) for c in cols)])
    return buf.getvalue()


def write_workload(wl: Workload, path: str | os.PathLike) -> None:
    """Write a workload atomically: CSV if the name ends in ``.csv``, JSON otherwise."""
    p = Path(path)
    if p.suffix.lower() == ".csv":
        text = workload_to_csv_text(wl)
        with atomic_open(p, encoding="utf-8", newline="") as fh:
            fh.write(text)
    else:
        write_json(p, workload_to_dict(wl))


def as_workload(obj: Any) -> Workload:
    """A [`Workload`][optsched.problems.workload.Workload] from a workload, a path, or a sequence of
    [`WorkloadJob`][optsched.problems.workload.WorkloadJob] / dicts."""
    if isinstance(obj, Workload):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return read_workload(obj)
    if isinstance(obj, Sequence) and all(isinstance(j, WorkloadJob) for j in obj):
        return Workload(tuple(obj))
    if isinstance(obj, Sequence):
        return Workload.from_records(obj)
    raise InstanceError(f"must be a Workload, a path or a list of jobs, got {type(obj).__name__}", field="workload")


__all__ = ["COLUMNS", "FORMAT", "Workload", "WorkloadJob", "as_workload", "read_workload", "workload_from_csv_text",
           "workload_from_dict", "workload_to_csv_text", "workload_to_dict", "write_workload"]


PROBLEM = register_problem(Problem(
    name="workload",
    title="online workloads of the simulator (paper 002): jobs arriving over time, run by a policy",
    classes=(Workload,), format=FORMAT, reader=workload_from_dict, writer=workload_to_dict,
    generator="optsched.generators.workload:generate_workload",
    generate_cli="optsched.commands._generate_workload:register",
    summary="optsched.commands._generate_workload:summary",
))
