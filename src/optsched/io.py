"""Files: reading text and JSON with clear errors, typed access to JSON fields, atomic writes, schedule files.

This module is the bottom of the package (it knows no problem): every problem module reads its own format
with [`Fields`][optsched.io.Fields] (errors name the field path and the job), and [`optsched.api`][] dispatches
``load``/``save`` on the ``"format"`` tag through [`optsched.registry`][].

Writes go through [`atomic_open`][optsched.io.atomic_open]: a regular file is written beside its target and renamed into
place
(a failed run never leaves a half-written output); a symlink keeps being a link (its target gets the new
content), a hard link stays shared, and a FIFO or a device is written straight into, never replaced.
"""

from __future__ import annotations

import contextlib
import csv
import io as _io
import json
import math
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, Iterable, Iterator, Mapping

from .errors import InstanceError
from .limits import paused_gc
from .result import Schedule, ScheduledJob

SCHEDULE_FORMAT = "optsched/schedule@1"

class LineProgress:
    """Progress for a log file: a plain line at every quarter (no ``\\r`` frames), the last at 100 %."""

    def __init__(self, total: int, desc: str, unit: str, stream: IO[str]):
        self.total, self.desc, self.unit, self.stream = max(1, int(total)), desc, unit, stream
        self.n, self._next = 0, 0.25

    def update(self, k: int = 1) -> None:
        self.n += k
        frac = self.n / self.total
        if self._next <= frac < 1.0:  # one line with the fraction done, however many quarters passed
            print(f"{self.desc}: {frac:.0%} ({self.n:,}/{self.total:,} {self.unit})", file=self.stream, flush=True)
            while self._next <= frac:
                self._next += 0.25

    def close(self) -> None:
        print(f"{self.desc}: 100% ({self.n:,}/{self.total:,} {self.unit})", file=self.stream, flush=True)


def progress(total: int, desc: str, unit: str = "it", stream: IO[str] | None = None) -> Any:
    """A progress bar on a terminal (tqdm), plain quarter lines otherwise; ``update(k)`` and ``close()``.

    ```pycon
    >>> import io as _io
    >>> out = _io.StringIO(); bar = progress(4, "demo", "jobs", out)
    >>> for _ in range(4):
    ...     bar.update()
    >>> bar.close(); out.getvalue().splitlines()[-1]
    'demo: 100% (4/4 jobs)'

    ```
    """
    stream = sys.stderr if stream is None else stream
    if getattr(stream, "isatty", lambda: False)():
        from tqdm import tqdm  # only for terminals

        return tqdm(total=total, unit=unit, desc=desc, leave=False, file=stream)
    return LineProgress(total, desc, unit, stream)


BUNDLED_PREFIX = "bundled:"


def bundled_path(name: str) -> Path:
    """The path of an instance file shipped with the package (``src/optsched/instances``), e.g.
    ``bundled_path("rar/mobihoc22-seed0.json")``; [`optsched.load`][] also takes ``"bundled:rar/..."``.

    ```pycon
    >>> bundled_path("index.json").name
    'index.json'

    ```
    """
    from importlib.resources import files

    rel = name[len(BUNDLED_PREFIX):] if name.startswith(BUNDLED_PREFIX) else name
    rel = rel[len("instances/"):] if rel.startswith("instances/") else rel
    path = Path(str(files("optsched") / "instances" / rel))
    if not path.is_file():
        raise InstanceError(f"no bundled instance {rel!r} (see {path.parent.parent / 'index.json'})")
    return path


# -- generic helpers ---------------------------------------------------------------------------------------
def read_text(path: str | os.PathLike, encoding: str = "utf-8") -> str:
    """A text file's contents; a missing or unreadable file raises [`InstanceError`][optsched.errors.InstanceError]."""
    p = Path(path)
    try:
        return p.read_text(encoding=encoding)
    except FileNotFoundError:
        raise InstanceError(f"no such file: {p}") from None
    except UnicodeDecodeError as exc:
        raise InstanceError(f"{p} is not {encoding} text (undecodable byte at offset {exc.start})") from None
    except OSError as exc:
        raise InstanceError(f"cannot read {p}: {exc.strerror or exc}") from None


def read_json(path: str | os.PathLike) -> Any:
    """Parse a JSON file; a missing file or malformed JSON raises [`InstanceError`][optsched.errors.InstanceError]."""
    p = Path(path)
    text = read_text(p)
    try:
        with paused_gc():
            return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstanceError(f"malformed JSON in {p} at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise InstanceError(f"JSON in {p} is nested too deeply to be an optsched file") from None
    except ValueError as exc:  # Python's limit on integer digits (4,300 by default): no optsched field needs more
        raise InstanceError(f"JSON in {p} holds a number too long to read ({exc})") from None


_UMASK: int | None = None


def is_finite_number(v: Any) -> bool:
    """A finite int or float, not a bool (the test every job field of a file passes before its range is checked).

    ```pycon
    >>> [is_finite_number(v) for v in (3, 2.5, True, float("nan"), "4")]
    [True, True, False, False, False]

    ```
    """
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def csv_jobs(text: str, columns: tuple[str, ...],
             required: tuple[str, ...]) -> list[tuple[str, str | None, dict[str, str]]]:
    """The rows of a job table in CSV: the header checked against the known and required columns, each non-blank
    row returned as ``(where, job id, {column: stripped cell})``; an empty optional cell is left out (its
    default applies), an empty required cell is an error naming the field and the job.

    ```pycon
    >>> csv_jobs("id,gpus,model\\na,2,\\n\\nb,4,bert\\n", ("id", "gpus", "model"), ("id", "gpus"))
    [('jobs[0]', 'a', {'id': 'a', 'gpus': '2'}), ('jobs[1]', 'b', {'id': 'b', 'gpus': '4', 'model': 'bert'})]
    >>> csv_jobs("id,gpus\\na,\\n", ("id", "gpus"), ("id", "gpus"))
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: jobs[0].gpus (job 'a'): missing value

    ```
    """
    rows = [r for r in csv.reader(_io.StringIO(text)) if any(c.strip() for c in r)]
    if not rows:
        raise InstanceError("empty CSV: expected a header line with " + ", ".join(required), field="header")
    header = [h.strip() for h in rows[0]]
    unknown = [h for h in header if h not in columns]
    if unknown:
        raise InstanceError(f"unknown column(s) {unknown} (known: {', '.join(columns)})", field="header")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise InstanceError(f"duplicate column(s) {dup}", field="header")
    missing = [c for c in required if c not in header]
    if missing:
        raise InstanceError(f"missing required column(s) {missing}", field="header")
    out = []
    for i, row in enumerate(rows[1:]):
        where = f"jobs[{i}]"
        if len(row) != len(header):
            raise InstanceError(f"has {len(row)} cells, the header has {len(header)}", field=where)
        cells = {h: c.strip() for h, c in zip(header, row)}
        jid = cells.get("id") or None
        for col in required:
            if cells[col] == "":
                raise InstanceError("missing value", field=f"{where}.{col}", job=jid)
        out.append((where, jid, {c: v for c, v in cells.items() if v != ""}))
    return out


def _file_mode() -> int:
    """The permissions a plain ``open(path, "w")`` would give a new file: 0o666 minus the umask."""
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0)
        os.umask(_UMASK)
    return 0o666 & ~_UMASK


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open ``path`` for writing so that a failure leaves what was there untouched.

    * ``"-"``: standard output (text or binary by ``mode``), left open;
    * a symlink is resolved first: the link stays, the file it points to gets the content;
    * anything that is not a regular file (a FIFO, a device such as ``/dev/null``) is written straight into;
    * a regular file is written to a temporary file beside it and renamed over it only if the block
      succeeds; the new file gets the usual permissions (0o666 minus the umask, or the replaced file's mode);
      a file with several hard links is rewritten in place from the finished temporary file, so the links
      keep sharing it.

    ```pycon
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "out.txt")
    >>> with atomic_open(p) as fh:
    ...     _ = fh.write("hello")
    >>> open(p).read(), sorted(os.listdir(d))
    ('hello', ['out.txt'])

    ```
    """
    if os.fspath(path) == "-":
        yield sys.stdout.buffer if "b" in mode else sys.stdout
        return
    try:
        # stat what the path opens (following links): /dev/stdout on a pipe resolves to /proc/PID/fd/pipe:[N],
        # which realpath cannot name but open() can
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    try:
        if st is not None and not stat.S_ISREG(st.st_mode):
            with open(path, mode, **kwargs) as fh:
                yield fh
            return
        target = Path(os.path.realpath(path))
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise _naming(exc, path) from None
    try:
        os.fchmod(fd, stat.S_IMODE(st.st_mode) if st is not None else _file_mode())
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
        if st is not None and st.st_nlink > 1:
            with open(tmp, "rb") as src, open(target, "r+b") as dst:
                dst.truncate(0)
                shutil.copyfileobj(src, dst)
            os.unlink(tmp)
        else:
            os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
            raise _naming(exc, path) from None
        raise


def _naming(exc: OSError, path: str | os.PathLike) -> OSError:
    """``exc`` naming the user's ``path`` (not a temporary file beside it, nor no path at all: a write to
    /dev/full fails with ENOSPC and no file name)."""
    if exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror, os.fspath(path))


def check_output(path: str | os.PathLike, name: str = "-o", *,
                 inputs: Iterable[str | os.PathLike | None] = ()) -> None:
    """Refuse, before any work, an output path that cannot be written or that would replace an input.

    The one check of every command's output files (the CLI's ``-o``, ``--trace``, ``--table``; the simulator's
    too): ``"-"`` (standard output) always passes; a folder, a path whose nearest existing folder cannot take a
    new file (a read-only or virtual file system such as /proc: probed by creating and removing a file there),
    and a path that is the same file as one of ``inputs`` (through links, ``..`` or hard links) raise
    [`InstanceError`][optsched.errors.InstanceError] naming ``name``. An existing FIFO or device (``/dev/stdout``,
    ``/dev/null``) passes:
    it is written straight into.

    ```pycon
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); src = os.path.join(d, "in.json"); _ = open(src, "w").write("{}")
    >>> check_output(os.path.join(d, "out.json"), inputs=[src])
    >>> check_output(os.path.join(d, ".", "in.json"), "-o", inputs=[src])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: -o: is the input file ... it would be replaced

    ```
    """
    text = os.fspath(path)
    if text == "-":
        return
    if not text:
        raise InstanceError("must be a file path, got ''", field=name)
    for other in inputs:
        if other is None or os.fspath(other) in ("", "-"):
            continue
        if _same_file(text, os.fspath(other)):
            raise InstanceError(f"is the input file {os.fspath(other)}: it would be replaced", field=name)
    try:
        st = os.stat(text)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InstanceError(f"cannot write {text}: {exc.strerror or exc}", field=name) from None
    if st is not None and stat.S_ISDIR(st.st_mode) or text.endswith(os.sep):
        raise InstanceError(f"{text} is a folder, give a file path", field=name)
    if st is not None and not stat.S_ISREG(st.st_mode):
        return
    parent = Path(os.path.realpath(text)).parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise InstanceError(f"{parent} is not a folder, so {text} cannot be written", field=name)
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".optsched-probe.", suffix=".tmp")
    except OSError as exc:
        raise InstanceError(f"cannot write in {parent}: {exc.strerror or exc}", field=name) from None
    os.close(fd)
    os.unlink(probe)


def writes_to_stdout(path: str | os.PathLike | None) -> bool:
    """Whether writing ``path`` writes this process's standard output: ``"-"``, or a name of the same file
    (``/dev/stdout``, ``/proc/self/fd/1``, the terminal or pipe itself): a command then prints its messages on
    standard error, so that the output stays alone on the pipe.

    ```pycon
    >>> writes_to_stdout("-"), writes_to_stdout(None), writes_to_stdout("out.json")
    (True, False, False)

    ```
    """
    if path is None:
        return False
    text = os.fspath(path)
    if text == "-":
        return True
    try:
        st, out = os.stat(text), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, _io.UnsupportedOperation):
        return False
    return (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def save_figure(fig: Any, path: str | os.PathLike, dpi: int = 110, **kwargs: Any) -> None:
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


def json_text(doc: dict[str, Any], jobs: list[dict] | None = None, default: Any = None) -> str:
    """``doc`` as indented JSON and, when ``jobs`` is given, a last key ``"jobs"`` holding them, one job per line
    (``default`` as in ``json.dumps``).

    The figures are indented as ``json.dumps(doc, indent=1)`` writes them; each job is one compact line written by
    the json module's C encoder (an indented dump of 100,000 jobs goes through its pure-Python encoder, seconds).

    ```pycon
    >>> print(json_text({"feasible": True}, [{"id": "a", "placement": {"s0": 2}}]))
    {
     "feasible": true,
     "jobs": [
      {"id": "a", "placement": {"s0": 2}}
     ]
    }
    >>> json.loads(json_text({"feasible": True}, []))["jobs"]
    []

    ```
    """
    head = json.dumps(doc, indent=1, default=default)
    if jobs is None:
        return head
    line = json.JSONEncoder(default=default).encode   # no indent: the C encoder
    body = "[\n  " + ",\n  ".join(map(line, jobs)) + "\n ]" if jobs else "[]"
    return f'{head[:-2] + "," if doc else "{"}\n "jobs": {body}\n}}'


class Fields:
    """Typed access to one JSON object, raising [`InstanceError`][optsched.errors.InstanceError] with the field path and
    job id."""

    def __init__(self, data: Any, where: str, job: str | None = None):
        if type(data) is not dict and not isinstance(data, Mapping):   # a parsed file's objects are dicts
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
        t = type(v)
        if t is not float and t is not int and (isinstance(v, bool) or not isinstance(v, (int, float))):
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

    def obj(self, key: str) -> Fields:
        return Fields(self.raw(key), self.path(key), self.job)

    def only(self, *known: str) -> Fields:
        """Refuse keys outside ``known`` (one rule for every format: a misspelt optional field such as
        ``"lamda"`` is an error, never silently replaced by its default); returns ``self``.

        ```pycon
        >>> Fields({"id": "a", "lamda": 2}, "jobs[0]", "a").only("id", "lambda")
        Traceback (most recent call last):
        ...
        optsched.errors.InstanceError: jobs[0] (job 'a'): unknown field(s) ['lamda'] (known: id, lambda)

        ```
        """
        unknown = sorted(str(k) for k in self.data if k not in known)
        if unknown:
            raise InstanceError(f"unknown field(s) {unknown} (known: {', '.join(known)})", field=self.where or None,
                                job=self.job)
        return self


def check_format(data: Any, expected: str | None = None) -> str:
    f = Fields(data, "")
    fmt = f.string("format")
    if expected is not None and fmt != expected:
        raise InstanceError(f"expected {expected!r}, got {fmt!r}", field="format")
    return fmt


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


# what ``optsched solve`` writes beside the jobs; read back and ignored
SCHEDULE_KEYS = ("format", "instance", "algorithm", "makespan", "objective", "status", "lower_bound", "runtime_s",
                 "seed", "jobs")


def schedule_from_dict(data: Mapping[str, Any]) -> Schedule:
    """Validate an ``optsched/schedule@1`` document; every error names the field path and the job."""
    top = Fields(data, "").only(*SCHEDULE_KEYS)
    check_format(data, SCHEDULE_FORMAT)
    rows = []
    for i, j in enumerate(top.array("jobs")):
        fast = _plain_scheduled_job(j)
        if fast is not None:
            rows.append(fast)
            continue
        jid = j.get("id") if type(j) is dict or isinstance(j, Mapping) else None
        jf = Fields(j, f"jobs[{i}]", jid if isinstance(jid, str) else None).only(
            "id", "start", "completion", "placement", "stage_placement")
        pf = jf.obj("placement")
        placement = {s: pf.integer(s) for s in pf.data}
        completion = jf.number("completion", None) if "completion" in j else None
        stage = None
        if "stage_placement" in j:
            sp = jf.obj("stage_placement")
            stage = {}
            for s in sp.data:
                counts = sp.raw(s)
                if not isinstance(counts, list) or any(isinstance(x, bool) or not isinstance(x, int) or x < 0
                                                       for x in counts):
                    raise InstanceError(f"must be an array of GPU counts per stage, got {counts!r}",
                                        field=sp.path(s), job=jf.job)
                stage[s] = tuple(counts)
        rows.append(ScheduledJob(jf.string("id"), jf.number("start"), placement, completion, stage))
    return Schedule(tuple(rows), algorithm=str(data.get("algorithm", "")), instance=str(data.get("instance", "")))


_SCHEDULED_KEYS = frozenset(("id", "start", "completion", "placement"))


def _plain_scheduled_job(j: Any) -> ScheduledJob | None:
    """A schedule row whose fields all have their plain types (no stage placement), as the checked reading of
    [`schedule_from_dict`][optsched.io.schedule_from_dict] builds it; None for anything else, which that reading
    then reports."""
    if type(j) is not dict or not _SCHEDULED_KEYS.issuperset(j):
        return None
    jid, start, placement = j.get("id"), j.get("start"), j.get("placement")
    if type(jid) is not str or not jid or (type(start) is not int and type(start) is not float):
        return None
    if type(placement) is not dict:
        return None
    for n in placement.values():
        if type(n) is not int:
            return None
    completion = None
    if "completion" in j:
        completion = j["completion"]
        if type(completion) is not int and type(completion) is not float:
            return None
    return ScheduledJob(jid, start, placement, completion)


def load_schedule(path: str | os.PathLike) -> Schedule:
    """Read a schedule file (format ``optsched/schedule@1``)."""
    data = read_json(path)
    with paused_gc():
        return schedule_from_dict(data)


def save_schedule(schedule: Schedule, path: str | os.PathLike, makespan: float | None = None, **extra: Any) -> None:
    """Write a schedule file atomically: the figures indented, one job per line
    ([`json_text`][optsched.io.json_text])."""
    doc = schedule_to_dict(schedule, makespan, **extra)
    jobs = doc.pop("jobs")
    with atomic_open(path, encoding="utf-8") as fh:
        fh.write(json_text(doc, jobs))
        fh.write("\n")


# -- JSON Schemas of the formats (package data: src/optsched/schemas/*.json, published in docs/formats.md) -------
def schema(format_tag: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a file format, by its tag (``"optsched/rar-ddls@1"``) or name
    (``"rar-ddls"``). A schema checks a file's shape (fields, types, ranges, unknown keys); the readers check the
    rest (unique ids, capacities, consistency) with messages naming the field and the job.

    ```pycon
    >>> schema("optsched/schedule@1")["title"]
    'Schedule'

    ```
    """
    from importlib.resources import files

    name = format_tag.removeprefix("optsched/").split("@")[0]
    res = files("optsched") / "schemas" / f"{name}.json"
    if not res.is_file():
        known = sorted(p.name.removesuffix(".json") for p in (files("optsched") / "schemas").iterdir()
                       if p.name.endswith(".json"))
        raise InstanceError(f"no schema for {format_tag!r} (known: {', '.join(known)})", field="format")
    data: dict[str, Any] = json.loads(res.read_text(encoding="utf-8"))
    return data
