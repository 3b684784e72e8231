"""Metrics of a simulation run: per-job records (pandas), summary statistics, time series and plots.

* JCT = completion - arrival; responsiveness = first start - arrival (Blox section 4, digest 002 section 4),
  exact (not round-quantised) in our engine;
* average and percentile JCT (25, 50, 75, 90, 95, 99) and the empirical CDF, over the *tracked* jobs;
* makespan = last completion - first arrival (tracked jobs);
* GPU utilisation and queue length over time: step functions sampled after every decision and completion
  batch; the mean utilisation is time-weighted over [first arrival, end];
* preemption and migration counts; events and events per second of the engine.

```pycon
>>> from optsched.problems.workload import Workload, WorkloadJob
>>> from optsched.sim import simulate
>>> r = simulate(Workload((WorkloadJob("a", 0, 1, 10, 1.0), WorkloadJob("b", 0, 1, 30, 1.0))),
...              servers=1, gpus_per_server=1, mode="event")
>>> r.summary["avg_jct_s"], r.summary["makespan_s"]
(25.0, 40.0)

```
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..io import write_json
from .state import Job

PERCENTILES = (25, 50, 75, 90, 95, 99)
RESULT_FORMAT = "optsched/sim-result@1"


def _f(x) -> float | None:
    x = float(x)
    return None if math.isnan(x) else x


@dataclass
class SimResult:
    """Everything a run produced, for every workload kind. ``jobs``: one row per job (a family's collector adds
    its columns: deadline met, round-accounted JCT, ...); ``timeseries``: t_s, busy_gpus, queued, running;
    ``summary``: the headline numbers (with the family's); ``custom``: what collectors recorded (the deadline
    metrics under ``"deadline"``, the round accounting under ``"contention"``, ...); ``job_objects``: the
    engine's [`Job`][optsched.sim.state.Job] objects (segments, placements); ``policy`` and ``admission``: the
    policy objects after the run (their own records, e.g. DRS's plan choices), not saved to JSON.

    A finished run's ``jobs`` table is built from ``job_objects`` at its first read (then kept): a caller that
    reads only the summary never holds the table beside the jobs (issue 29: about 137 bytes per job)."""

    jobs: pd.DataFrame
    timeseries: pd.DataFrame
    summary: dict[str, Any]
    config: dict[str, Any] = field(default_factory=dict)
    custom: dict[str, Any] = field(default_factory=dict)
    job_objects: list = field(default_factory=list, repr=False)
    policy: Any = field(default=None, repr=False, compare=False)
    admission: Any = field(default=None, repr=False, compare=False)

    @classmethod
    def build(cls, jobs: Sequence, ts: Sequence[Sequence[float]] | np.ndarray | pd.DataFrame, *, end_s: float,
              events: int, decisions: int, preemptions: int, wall_s: float, total_gpus: int, config: Mapping,
              custom: Mapping, migrations: int = 0, final: bool = False) -> SimResult:
        """The result of a run: ``jobs`` the engine's jobs (a list is kept as it is, as ``job_objects``: the
        caller passes one nobody changes), ``ts`` the time-series records (rows, an ``(n, 4)`` array or the
        table of [`timeseries_frame`][optsched.sim.metrics.timeseries_frame]).

        ``final``: the jobs are a finished run's and nothing changes them any more. The per-job table is then
        built at the first read of [`jobs`][optsched.sim.metrics.SimResult.jobs] (the same table), and the summary
        is taken from a few columns read one at a time: a caller that reads only the summary never holds the
        table beside the job objects (about 137 bytes per job; 131 MiB at a million jobs)."""
        tsd = ts if isinstance(ts, pd.DataFrame) else timeseries_frame(ts, total_gpus)
        df = None if final else jobs_table(jobs)
        summary = summarise(df if df is not None else _JobColumns(jobs), tsd, end_s=end_s, total_gpus=total_gpus)
        summary.update(events=int(events), decisions=int(decisions), preemptions_total=int(preemptions),
                       migrations_total=int(migrations), wall_s=float(wall_s),
                       events_per_s=float(events / wall_s) if wall_s > 0 else None,
                       end_s=float(end_s), total_gpus=int(total_gpus))
        return cls(df, tsd, summary, dict(config), dict(custom),  # (None: built on read)
                   jobs if type(jobs) is list else list(jobs))

    def add_records(self, records: Mapping[str, Mapping[str, Any]]) -> None:
        """Add what a policy noted per job (job id -> {field: value}) as columns of
        [`jobs`][optsched.sim.metrics.SimResult.jobs] (missing: NaN).

        ```pycon
        >>> from optsched.problems.workload import Workload, WorkloadJob
        >>> from optsched.sim import simulate
        >>> r = simulate(Workload((WorkloadJob("a", 0, 1, 10, 1.0),)), servers=1, gpus_per_server=1)
        >>> r.add_records({"a": {"note": 7}}); r.jobs["note"].tolist()
        [7]

        ```
        """
        fields = list(dict.fromkeys(k for rec in records.values() for k in rec))
        ids = self.jobs["id"].tolist()
        for f in fields:
            self.jobs[f] = [records.get(i, {}).get(f, np.nan) for i in ids]

    def by_id(self, column: str) -> dict[str, Any]:
        """One per-job column as ``{job id: value}`` (``res.by_id("completion_s")["a"]``)."""
        return dict(zip(self.jobs["id"], self.jobs[column]))

    def start_order(self) -> tuple[str, ...]:
        """The ids of the jobs that started, in order of first start (ties: workload order)."""
        started = self.jobs[self.jobs["first_start_s"].notna()]
        return tuple(started.sort_values("first_start_s", kind="stable")["id"])

    def first_placements(self) -> dict[str, dict[int, tuple[int, ...]]]:
        """Each started job's first placement: server index -> GPUs per pipeline stage there (one count for a
        job without stages)."""
        out: dict[str, dict[int, tuple[int, ...]]] = {}
        for j in self.job_objects:
            if j.segments:
                pl = j.segments[0][2]
                out[j.id] = dict(pl.stages or {s: (n,) for s, n in pl.as_dict().items()})
        return out

    def jct_cdf(self) -> tuple[np.ndarray, np.ndarray]:
        """(sorted JCTs of finished tracked jobs, cumulative fractions)."""
        return jct_cdf(self.jobs)

    def to_dict(self, timeseries: bool = True) -> dict:
        recs = self.jobs.replace({np.nan: None}).to_dict(orient="records")
        out = {"format": RESULT_FORMAT, "config": _jsonable(self.config), "summary": _jsonable(self.summary),
               "jobs": recs}
        if timeseries:
            out["timeseries"] = {c: self.timeseries[c].tolist() for c in self.timeseries.columns}
        return out

    def save(self, path, timeseries: bool = True) -> None:
        """Write the per-job records, summary and time series as JSON, atomically."""
        write_json(path, self.to_dict(timeseries))


class _LazyTable:
    """``SimResult.jobs``: the table given to the constructor, or (None given: a finished run's result) the table
    built from ``job_objects`` at the first read, then kept. Setting it replaces it, as for a plain field."""

    key = "_jobs_table"

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        d = obj.__dict__
        table = d.get(self.key)
        if table is None:
            table = d[self.key] = jobs_table(obj.job_objects)
        return table

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.key] = value


# (installed after the dataclass is made: its __init__, equality, repr and fields still know ``jobs`` as a field)
SimResult.jobs = _LazyTable()


def _own(jobs: Sequence) -> bool:
    """The engine's own jobs: their workload fields are read from their workload job (``Job.w``) straight, not
    through the properties that give them (the same values)."""
    return len(jobs) > 0 and set(map(type, jobs)) == {Job}


def jobs_table(jobs: Sequence) -> pd.DataFrame:
    """The per-job table of a run's jobs ([`SimResult.jobs`][optsched.sim.metrics.SimResult.jobs]'s columns, in
    its order, one row per job).

    ```pycon
    >>> from optsched.sim.state import Job
    >>> jobs_table([Job("a", 5.0, 2, 10, 1.0)])[["id", "gpus", "duration_alone_s", "jct_s"]].values.tolist()
    [['a', 2, 10.0, nan]]

    ```
    """
    n = len(jobs)
    own = _own(jobs)
    # (the workload jobs, read once: each workload column is then one attribute read per job, not two)
    wjobs = list(map(attrgetter("w"), jobs)) if own else jobs

    num = functools.partial(_column, jobs=jobs, wjobs=wjobs)  # a column straight into numpy

    tracked: Any = list(map(attrgetter("tracked"), wjobs))
    if set(map(type, tracked)) <= {bool}:  # (what pandas would infer from the list, without its copies)
        tracked = np.fromiter(tracked, dtype=bool, count=n)
    iterations = num("iterations")
    deadline = _deadlines(wjobs)
    df = pd.DataFrame({
        "id": num("id"),  # (pandas infers the same dtype from an object array as from a list)
        "arrival_s": num("arrival_s"),
        "gpus": num("gpus"),
        "iterations": iterations,
        "model": num("model"),
        "tracked": tracked,
        "admitted_s": num("admitted_s"),
        "first_start_s": num("first_start_s"),
        "completion_s": num("completion_s"),
        "preemptions": num("preemptions"),
        "launches": num("launches"),
        "migrations": num("migrations"),
        "attained_gpu_s": num("attained_gpu_s"),
        # (Job.duration_alone_s is iterations x iteration time: the same products, taken at once)
        "duration_alone_s": iterations * num("iteration_time_s") if own else num("duration_alone_s"),
        "deadline_s": deadline,
    }, copy=False)  # fresh columns: not copied into consolidated blocks (a million-job table held twice)
    del wjobs, num
    df["jct_s"] = df["completion_s"] - df["arrival_s"]
    df["responsiveness_s"] = df["first_start_s"] - df["arrival_s"]
    df["deadline_met"] = np.where(df["deadline_s"].isna(), np.nan,
                                  (df["completion_s"] <= df["deadline_s"]).astype(float))
    return df


# Where each plain column of the per-job table is read (True: from the workload job, ``Job.w`` of the engine's own
# jobs; False: from the run's job) and its dtype: ``jobs_table`` builds every column from it, ``_JobColumns`` the few
# that ``summarise`` reads, so that both give the same arrays.
_SOURCES: dict[str, tuple[bool, type]] = {
    "id": (False, object), "arrival_s": (True, float), "gpus": (False, np.int64), "iterations": (True, float),
    "model": (True, object), "iteration_time_s": (True, float), "admitted_s": (False, float),
    "first_start_s": (False, float), "completion_s": (False, float), "preemptions": (False, np.int64),
    "launches": (False, np.int64), "migrations": (False, np.int64), "attained_gpu_s": (False, float),
    "duration_alone_s": (False, float)}


def _column(name: str, jobs: Sequence, wjobs: Sequence) -> np.ndarray:
    """The table's column ``name`` (one of ``_SOURCES``) of ``jobs``, whose workload jobs are ``wjobs``."""
    from_workload, dtype = _SOURCES[name]
    return np.fromiter(map(attrgetter(name), wjobs if from_workload else jobs), dtype=dtype, count=len(jobs))


def _deadlines(wjobs: Sequence) -> np.ndarray:
    """The ``deadline_s`` column: NaN for a job without one."""
    n = len(wjobs)
    deadlines = list(map(attrgetter("deadline_s"), wjobs))
    if deadlines.count(None) == n:
        return np.full(n, np.nan)
    return np.fromiter((np.nan if d is None else d for d in deadlines), dtype=float, count=n)


class _JobColumns:
    """The columns [`summarise`][optsched.sim.metrics.summarise] reads, straight from the job objects, one numpy
    array per call (the same values as the table's column): a finished run's summary without its table."""

    __slots__ = ("jobs", "wjobs")

    def __init__(self, jobs: Sequence) -> None:
        self.jobs = jobs
        self.wjobs = list(map(attrgetter("w"), jobs)) if _own(jobs) else jobs

    def __len__(self) -> int:
        return len(self.jobs)

    def column(self, name: str) -> np.ndarray:
        if name == "deadline_s":
            return _deadlines(self.wjobs)
        if name == "tracked":
            return np.fromiter(map(bool, map(attrgetter(name), self.wjobs)), dtype=bool, count=len(self.jobs))
        return _column(name, self.jobs, self.wjobs)


def _jsonable(x):
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        return None if math.isnan(float(x)) else float(x)
    if isinstance(x, (str, int, bool)) or x is None:
        return x
    return str(x)


def timeseries_frame(ts: Sequence[Sequence[float]] | np.ndarray, total_gpus: int) -> pd.DataFrame:
    """The time-series table (``t_s, busy_gpus, queued, running, utilisation``) of the records ``(t, busy GPUs,
    queued, running)``: rows, or the engine's flat records as an ``(n, 4)`` float array (every column copied:
    it may be a view of records a run goes on extending).

    ```pycon
    >>> timeseries_frame([(0.0, 2, 1, 1), (5.0, 0, 0, 0)], 4)["utilisation"].tolist()
    [0.5, 0.0]

    ```
    """
    if isinstance(ts, np.ndarray) and ts.ndim == 2 and len(ts):  # the engine's flat records (float64)
        tsd = pd.DataFrame({"t_s": ts[:, 0].copy(), "busy_gpus": ts[:, 1].astype(np.int64),
                            "queued": ts[:, 2].astype(np.int64), "running": ts[:, 3].astype(np.int64)},
                           copy=False)
    else:
        tsd = pd.DataFrame([tuple(r) for r in ts], columns=["t_s", "busy_gpus", "queued", "running"])
    tsd["utilisation"] = tsd["busy_gpus"] / total_gpus if total_gpus else 0.0
    return tsd


def jct_cdf(jobs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    t = jobs.loc[jobs["tracked"], "jct_s"].dropna().to_numpy()
    t = np.sort(t)
    return t, (np.arange(1, len(t) + 1) / len(t)) if len(t) else np.array([])


def time_average(ts: pd.DataFrame, column: str, start: float, end: float) -> float:
    """Time-weighted mean of a step function sampled at ``ts.t_s`` (value holds until the next sample)."""
    if end <= start or ts.empty:
        return math.nan
    t = ts["t_s"].to_numpy()
    # the last sample at each instant is the state from then on
    keep = np.empty(len(t), dtype=bool)
    np.not_equal(t[1:], t[:-1], out=keep[:-1])
    keep[-1] = True
    # (the arrays below are written in place: a million-job run has two million samples)
    m = int(keep.sum())
    edges = np.empty(m + 1)
    np.compress(keep, t, out=edges[:-1])
    edges[-1] = end
    np.clip(edges, start, end, out=edges)
    widths = edges[:-1]
    np.subtract(edges[1:], widths, out=widths)  # before the first sample nothing ran: it counts as 0
    # widths x values, in place, the values taken a slice at a time (the same products, hence the same sum)
    col, k0 = ts[column].to_numpy(), 0
    for a in range(0, len(t), _SLICE):
        v = np.compress(keep[a:a + _SLICE], col[a:a + _SLICE])
        np.multiply(widths[k0:k0 + len(v)], v, out=widths[k0:k0 + len(v)])
        k0 += len(v)
    return float(widths.sum()) / (end - start)


_SLICE = 1 << 16


def summarise(df: pd.DataFrame | _JobColumns, ts: pd.DataFrame, *, end_s: float, total_gpus: int) -> dict[str, Any]:
    """The summary of a run: ``df`` its per-job table (or the same columns read from its jobs), ``ts`` its time
    series. Each column is read once, as a numpy array, and dropped when done with (a million-job run's peak
    memory is reached here)."""
    get = df.column if isinstance(df, _JobColumns) else (lambda name: df[name].to_numpy())
    n = len(df)
    tracked = np.asarray(get("tracked"), dtype=bool)
    every = bool(tracked.all())

    def tr(name: str) -> np.ndarray:  # a column's tracked rows (the column itself when every job is tracked)
        a = get(name)
        return a if every else a[tracked]

    arrival, completion = tr("arrival_s"), tr("completion_s")
    done = ~np.isnan(completion)  # the finished ones
    jct = (completion - arrival)[done]  # (the table's jct_s: completion - arrival)
    n_fin = int(done.sum())
    out: dict[str, Any] = {
        "jobs": int(n), "tracked": int(len(arrival)), "finished_tracked": n_fin,
        "avg_jct_s": float(jct.mean()) if len(jct) else None,
    }
    # (one call for all of them: one partition of the JCTs instead of one per percentile, the same values)
    pct = np.percentile(jct, PERCENTILES).tolist() if len(jct) else [None] * len(PERCENTILES)
    del jct
    makespan = float(completion[done].max() - arrival.min()) if n_fin else None
    dl = tr("deadline_s")
    has = ~np.isnan(dl)
    met = (completion[has] <= dl[has]).astype(float) if has.any() else None  # (the table's deadline_met, not NaN)
    del completion, done, dl, has
    resp = tr("first_start_s") - arrival  # (the table's responsiveness_s)
    resp = resp[~np.isnan(resp)]
    out["avg_responsiveness_s"] = float(resp.mean()) if len(resp) else None
    del resp, arrival
    out["makespan_s"] = makespan
    out["preemptions"] = int(tr("preemptions").sum())
    out["migrations"] = int(tr("migrations").sum())
    for p, v in zip(PERCENTILES, pct):
        out[f"p{p}_jct_s"] = v
    start = float(get("arrival_s").min()) if n else 0.0
    out["mean_utilisation"] = _f(time_average(ts, "utilisation", start, end_s)) if len(ts) else None
    out["mean_queue"] = _f(time_average(ts, "queued", start, end_s)) if len(ts) else None
    out["max_queue"] = int(ts["queued"].max()) if len(ts) else 0
    if met is not None:
        out["deadline_met_fraction"] = float(met.mean())
    return out
