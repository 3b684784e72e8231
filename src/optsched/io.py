"""JSON read/write of instances and schedules, with validation that names the field and the job.

Every file carries a ``"format"`` tag (``optsched/rar-ddls@1``, ``optsched/schedule@1``, ...). Readers for
the formats of other problems register themselves in :data:`READERS` / :data:`WRITERS` (``"module:function"``
strings, imported on first use, so reading a RAR file never imports the simulator).

All writes are atomic: the file is written next to its target and renamed into place, so a failed run never
leaves a half-written output.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from .cluster import Cluster, Server
from .errors import InstanceError
from .problems.rar import FORMAT as RAR_FORMAT
from .problems.rar import RarInstance, RarJob
from .result import Schedule, ScheduledJob

SCHEDULE_FORMAT = "optsched/schedule@1"

# format tag -> "module:function" taking (dict, name) and returning a problem object
READERS: dict[str, str] = {
    RAR_FORMAT: "optsched.io:rar_from_dict",
    "optsched/pipeline-job@1": "optsched.problems.pipeline:from_dict",
    "optsched/workload@1": "optsched.sim.workloads:workload_from_dict",
    "optsched/total-jct@1": "optsched.exact.total_jct:from_dict",
}
# problem class name -> "module:function" returning a JSON-ready dict
WRITERS: dict[str, str] = {
    "RarInstance": "optsched.io:rar_to_dict",
    "PipelineJob": "optsched.problems.pipeline:to_dict", "PipelineJobSet": "optsched.problems.pipeline:to_dict",
    "Workload": "optsched.sim.workloads:workload_to_dict",
    "TotalJctInstance": "optsched.exact.total_jct:to_dict",
}


# -- generic helpers ---------------------------------------------------------------------------------------
def read_text(path: str | os.PathLike, encoding: str = "utf-8") -> str:
    """A text file's contents; a missing or unreadable file raises :class:`InstanceError`."""
    p = Path(path)
    try:
        return p.read_text(encoding=encoding)
    except FileNotFoundError:
        raise InstanceError(f"no such file: {p}") from None
    except OSError as exc:
        raise InstanceError(f"cannot read {p}: {exc.strerror}") from None


def read_json(path: str | os.PathLike) -> Any:
    """Parse a JSON file; a missing file or malformed JSON raises :class:`InstanceError`."""
    p = Path(path)
    text = read_text(p)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstanceError(f"malformed JSON in {p} at line {exc.lineno} column {exc.colno}: {exc.msg}") from None


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", **kwargs) -> Iterator[Any]:
    """Open a temporary file beside ``path``; rename it over ``path`` only if the block succeeds."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def save_figure(fig, path: str | os.PathLike, dpi: int = 110, **kwargs: Any) -> None:
    """Write a matplotlib figure as PNG atomically and close it (every plot of the benchmarks and the simulator)."""
    import matplotlib.pyplot as plt

    with atomic_open(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=dpi, **kwargs)
    plt.close(fig)


def write_json(path: str | os.PathLike, data: Any) -> None:
    """Write ``data`` as indented JSON, atomically."""
    with atomic_open(path, encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")


def _resolve(spec: str) -> Callable:
    module, func = spec.split(":")
    return getattr(importlib.import_module(module), func)


class Fields:
    """Typed access to one JSON object, raising :class:`InstanceError` with the field path and job id."""

    def __init__(self, data: Any, where: str, job: str | None = None):
        if not isinstance(data, Mapping):
            raise InstanceError(f"must be a JSON object, got {type(data).__name__}", field=where or None, job=job)
        self.data, self.where, self.job = data, where, job

    def path(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def raw(self, key: str, default: Any = ...) -> Any:
        if key not in self.data:
            if default is ...:
                raise InstanceError("missing field", field=self.path(key), job=self.job)
            return default
        return self.data[key]

    def number(self, key: str, default: Any = ...) -> float:
        v = self.raw(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise InstanceError(f"must be a number, got {v!r}", field=self.path(key), job=self.job)
        return v

    def integer(self, key: str, default: Any = ...) -> int:
        v = self.number(key, default)
        if isinstance(v, float):
            if not v.is_integer():
                raise InstanceError(f"must be an integer, got {v!r}", field=self.path(key), job=self.job)
            v = int(v)
        return v

    def string(self, key: str, default: Any = ...) -> str:
        v = self.raw(key, default)
        if not isinstance(v, str) or not v:
            raise InstanceError(f"must be a non-empty string, got {v!r}", field=self.path(key), job=self.job)
        return v

    def array(self, key: str) -> list:
        v = self.raw(key)
        if not isinstance(v, list):
            raise InstanceError(f"must be a JSON array, got {type(v).__name__}", field=self.path(key), job=self.job)
        return v

    def obj(self, key: str) -> "Fields":
        return Fields(self.raw(key), self.path(key), self.job)


def check_format(data: Any, expected: str | None = None) -> str:
    f = Fields(data, "")
    fmt = f.string("format")
    if expected is not None and fmt != expected:
        raise InstanceError(f"expected {expected!r}, got {fmt!r}", field="format")
    return fmt


# -- instances ---------------------------------------------------------------------------------------------
def load(path: str | os.PathLike):
    """Read and validate an instance file of any known format.

    >>> import tempfile, os
    >>> from optsched.generate import tiny_rar_example
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "x.json")
    >>> save(tiny_rar_example(), p); load(p).n_jobs
    2
    """
    data = read_json(path)
    fmt = check_format(data)
    if fmt not in READERS:
        known = ", ".join(sorted(READERS))
        raise InstanceError(f"unknown format {fmt!r} (known: {known})", field="format")
    return _resolve(READERS[fmt])(data, Path(path).stem)


def from_dict(data: Mapping[str, Any], name: str = ""):
    """Validate an already-parsed instance of any known format."""
    fmt = check_format(data)
    if fmt not in READERS:
        raise InstanceError(f"unknown format {fmt!r}", field="format")
    return _resolve(READERS[fmt])(data, name)


def to_dict(problem) -> dict:
    kind = type(problem).__name__
    if kind not in WRITERS:
        raise TypeError(f"no writer for {kind}")
    return _resolve(WRITERS[kind])(problem)


def save(problem, path: str | os.PathLike) -> None:
    """Write an instance (any problem with a registered writer) atomically."""
    write_json(path, to_dict(problem))


def rar_from_dict(data: Mapping[str, Any], name: str = "") -> RarInstance:
    top = Fields(data, "")
    check_format(data, RAR_FORMAT)
    c = top.obj("cluster")
    servers = []
    for i, s in enumerate(c.array("servers")):
        sf = Fields(s, f"cluster.servers[{i}]")
        servers.append(Server(sf.string("id"), sf.integer("gpus")))
    cluster = Cluster(tuple(servers), intra_bandwidth=c.number("intra_bandwidth"),
                      inter_bandwidth=c.number("inter_bandwidth"))
    jobs = []
    for i, j in enumerate(top.array("jobs")):
        jid = j.get("id") if isinstance(j, Mapping) else None
        jf = Fields(j, f"jobs[{i}]", jid if isinstance(jid, str) else None)
        jobs.append(RarJob(
            id=jf.string("id"), gpus=jf.integer("gpus"), iterations=jf.integer("iterations"),
            gradient_size=jf.number("gradient_size"), batch_size=jf.number("batch_size"),
            forward_time_per_sample=jf.number("forward_time_per_sample"),
            backward_time=jf.number("backward_time"), lam=jf.number("lambda", 1.0)))
    return RarInstance(
        cluster=cluster, horizon=top.integer("horizon"), jobs=tuple(jobs),
        reduce_speed=c.number("reduce_speed"), contention_xi=c.number("contention_xi"),
        overhead_xi=c.number("overhead_xi"), degradation_alpha=c.number("degradation_alpha"),
        name=str(data.get("name", name) or name))


def rar_to_dict(inst: RarInstance) -> dict:
    c = inst.cluster
    out: dict[str, Any] = {"format": RAR_FORMAT}
    if inst.name:
        out["name"] = inst.name
    out["cluster"] = {
        "servers": [{"id": s.id, "gpus": s.gpus} for s in c.servers],
        "intra_bandwidth": c.intra_bandwidth, "inter_bandwidth": c.inter_bandwidth,
        "reduce_speed": inst.reduce_speed, "contention_xi": inst.contention_xi,
        "overhead_xi": inst.overhead_xi, "degradation_alpha": inst.degradation_alpha,
    }
    out["horizon"] = inst.horizon
    out["jobs"] = [{"id": j.id, "gpus": j.gpus, "iterations": j.iterations, "gradient_size": j.gradient_size,
                    "batch_size": j.batch_size, "forward_time_per_sample": j.forward_time_per_sample,
                    "backward_time": j.backward_time, "lambda": j.lam} for j in inst.jobs]
    return out


# -- schedules ---------------------------------------------------------------------------------------------
def schedule_to_dict(schedule: Schedule, makespan: float | None = None, **extra: Any) -> dict:
    """The JSON form of a schedule; ``makespan`` defaults to the latest completion, ``extra`` keys follow it."""
    out: dict[str, Any] = {"format": SCHEDULE_FORMAT, "instance": schedule.instance,
                           "algorithm": schedule.algorithm}
    if makespan is None:
        makespan = schedule.makespan
    if makespan is not None:
        out["makespan"] = makespan
    out.update(extra)
    rows = []
    for j in schedule.jobs:
        row: dict[str, Any] = {"id": j.id, "start": j.start}
        if j.completion is not None:
            row["completion"] = j.completion
        row["placement"] = dict(j.placement)
        if j.stage_placement is not None:
            row["stage_placement"] = {s: list(v) for s, v in j.stage_placement.items()}
        rows.append(row)
    out["jobs"] = rows
    return out


def schedule_from_dict(data: Mapping[str, Any]) -> Schedule:
    top = Fields(data, "")
    check_format(data, SCHEDULE_FORMAT)
    rows = []
    for i, j in enumerate(top.array("jobs")):
        jid = j.get("id") if isinstance(j, Mapping) else None
        jf = Fields(j, f"jobs[{i}]", jid if isinstance(jid, str) else None)
        pf = jf.obj("placement")
        placement = {s: pf.integer(s) for s in pf.data}
        completion = jf.number("completion", None) if "completion" in j else None
        stage = None
        if "stage_placement" in j:
            sp = jf.obj("stage_placement")
            stage = {s: tuple(int(x) for x in sp.raw(s)) for s in sp.data}
        rows.append(ScheduledJob(jf.string("id"), jf.number("start"), placement, completion, stage))
    return Schedule(tuple(rows), algorithm=str(data.get("algorithm", "")), instance=str(data.get("instance", "")))


def load_schedule(path: str | os.PathLike) -> Schedule:
    """Read a schedule file (format ``optsched/schedule@1``)."""
    return schedule_from_dict(read_json(path))


def save_schedule(schedule: Schedule, path: str | os.PathLike, makespan: float | None = None, **extra: Any) -> None:
    """Write a schedule file atomically."""
    write_json(path, schedule_to_dict(schedule, makespan, **extra))
