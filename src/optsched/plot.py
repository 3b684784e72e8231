"""Pictures and tables of schedules and runs. Every plot function takes an optional matplotlib ``Axes`` (``ax=``),
draws on it (a new figure when none is given) and returns it, so plots compose in a notebook;
[`save_axes`][optsched.plot.save_axes]
writes one atomically.

* Offline schedules: [`schedule_segments`][optsched.plot.schedule_segments] (one row per job and server),
  [`gantt`][optsched.plot.gantt] (one row per GPU,
  grouped by server, jobs as bars, the makespan and the optimum or bound marked).
* Simulations: [`sim_segments`][optsched.plot.sim_segments] (the engine's recorded segments as a DataFrame, one row per
  job, segment and
  server), [`occupancy`][optsched.plot.occupancy] (busy GPUs per server over time, the tracked window marked),
  [`utilisation`][optsched.plot.utilisation],
  [`queue`][optsched.plot.queue], [`plot_cdfs`][optsched.plot.plot_cdfs] (JCT CDFs) and
  [`plot_vs_load`][optsched.plot.plot_vs_load] (a metric against load, with the 95 %
  interval over seeds as a band).
* [`chrome_trace`][optsched.plot.chrome_trace]: segments (of a simulation or a schedule) as Chrome-trace JSON, which
  Perfetto
  (ui.perfetto.dev) and ``chrome://tracing`` open: one process per server, one thread per GPU.
* Gaps to the optimum: [`gap_table`][optsched.plot.gap_table] (each run against the best proven optimum or bound of its
  instance),
  [`gap_summary`][optsched.plot.gap_summary] (per algorithm: mean with a 95 % interval, worst, runs at the optimum) and
  [`plot_gaps`][optsched.plot.plot_gaps].

Titles say what was run: workload, load and seed for simulations ([`sim_title`][optsched.plot.sim_title]).

```pycon
>>> import optsched
>>> inst = optsched.generate("rar", jobs=4, servers=2, seed=1)
>>> res = optsched.solve(inst, "sjf-bco")
>>> seg = schedule_segments(inst, res.schedule)
>>> list(seg.columns), int(seg["gpus"].sum()) == sum(j.gpus for j in inst.jobs)
(['job', 'server', 'gpus', 'start', 'end'], True)
>>> ax = gantt(inst, res.schedule, bound=3)
>>> ax.get_xlabel()
'time (slots)'

```
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .api import evaluate
from .errors import InstanceError
from .io import save_figure, write_json
from .result import Schedule

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

    from .sim.metrics import SimResult

__all__ = ["assign_lanes", "chrome_trace", "gantt", "gap_summary", "gap_table", "occupancy", "plot_cdfs",
           "plot_gaps", "plot_vs_load", "queue", "save_axes", "schedule_segments", "sim_segments", "sim_title",
           "utilisation", "write_chrome_trace"]

SEGMENT_COLUMNS = ["job", "server", "gpus", "start", "end"]


def _new_axes(ax: Axes | None, figsize: tuple[float, float] = (7, 4)) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, new = plt.subplots(figsize=figsize)
    return new


def save_axes(ax: Axes, path: str | os.PathLike, dpi: int = 110) -> None:
    """Write the figure holding ``ax`` as PNG, atomically, and close it.

    ```pycon
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.png")
    >>> save_axes(plot_cdfs({"a": [1.0, 2.0]}), p); os.path.getsize(p) > 0
    True

    ```
    """
    save_figure(ax.figure, path, dpi=dpi, bbox_inches="tight")


# -- offline schedules ---------------------------------------------------------------------------------------
MAX_GANTT_GPUS = 10_000  # rows of a Gantt chart (its height grows with them): beyond, a picture nobody can read


def _capacity(instance: Any) -> dict[str, int]:
    cluster = getattr(instance, "cluster", None)
    if cluster is not None:
        return {s.id: int(s.gpus) for s in cluster.servers}
    free = getattr(instance, "free", None)
    if isinstance(free, Mapping):
        return {str(s): int(n) for s, n in free.items()}
    raise InstanceError(f"{type(instance).__name__} has no servers to draw", field="instance")


def _check_schedule(instance: Any, schedule: Any) -> None:
    """What a drawing needs beyond the evaluator's verdict: a Schedule, finite starts, known servers."""
    from .result import Schedule as _Schedule

    if not isinstance(schedule, _Schedule):
        raise InstanceError(f"must be a Schedule, got {type(schedule).__name__}", field="schedule")
    cap = _capacity(instance)
    for j in schedule.jobs:
        if isinstance(j.start, bool) or not isinstance(j.start, (int, float)) or not math.isfinite(j.start):
            raise InstanceError(f"must be a finite number, got {j.start!r}", field="start", job=j.id)
        if j.completion is not None and not math.isfinite(j.completion):
            raise InstanceError(f"must be a finite number, got {j.completion!r}", field="completion", job=j.id)
        unknown = sorted(set(j.placement) - set(cap))
        if unknown:
            raise InstanceError(f"names server(s) {unknown} that the instance lacks (its servers: "
                                f"{', '.join(list(cap)[:8])}{', ...' if len(cap) > 8 else ''})", field="placement",
                                job=j.id)


def schedule_segments(instance: Any, schedule: Schedule) -> pd.DataFrame:
    """One row per (job, server) of a schedule: ``job, server, gpus, start, end``. The schedule is checked by the
    problem's evaluator first (an infeasible schedule, a server the instance lacks, a start that is not a finite
    number, a schedule of another problem raise [`InstanceError`][optsched.errors.InstanceError] naming the job), and
    completions missing from it are the evaluator's."""
    _check_schedule(instance, schedule)
    evaluated = evaluate(instance, schedule).schedule
    if any(j.completion is None for j in schedule.jobs):
        schedule = evaluated
    rows = [(j.id, s, int(n), float(j.start), float(j.completion if j.completion is not None else j.start))
            for j in schedule.jobs for s, n in j.placement.items()]
    return pd.DataFrame(rows, columns=SEGMENT_COLUMNS)


def assign_lanes(segments: pd.DataFrame, capacity: Mapping[Any, int] | None = None) -> pd.DataFrame:
    """Give every segment row GPU indices on its server (column ``lanes``, a tuple): the lowest GPUs free at its
    start, earliest start first. On a schedule that respects each server's capacity every row gets its GPUs
    (intervals are half-open: a GPU freed at t is free for a job starting at t).

    ```pycon
    >>> seg = pd.DataFrame({"job": ["a", "b", "c"], "server": ["s0"] * 3, "gpus": [2, 1, 2],
    ...                     "start": [0, 0, 5], "end": [5, 9, 7]})
    >>> assign_lanes(seg, {"s0": 3})["lanes"].tolist()
    [(0, 1), (2,), (0, 1)]

    ```
    """
    out = segments.copy()
    lanes: list[tuple[int, ...]] = [()] * len(out)
    for server, g in out.groupby("server", sort=False):
        cap = int(capacity[server]) if capacity is not None and server in capacity else int(g["gpus"].max())
        free_at = [-math.inf] * max(cap, 1)
        for pos in g.sort_values(["start", "end"], kind="stable").index:
            i = out.index.get_loc(pos)
            start, end, n = float(out.at[pos, "start"]), float(out.at[pos, "end"]), int(out.at[pos, "gpus"])
            free = [k for k in range(len(free_at)) if free_at[k] <= start][:n]
            while len(free) < n:  # over capacity (an infeasible schedule): extra lanes, drawn above the server
                free_at.append(-math.inf)
                free.append(len(free_at) - 1)
            for k in free:
                free_at[k] = end
            lanes[i] = tuple(free)
    out["lanes"] = lanes
    return out


def _job_colours(jobs: Sequence[str]) -> dict[str, Any]:
    import matplotlib

    cmap = matplotlib.colormaps["tab20"]
    return {j: cmap(i % 20) for i, j in enumerate(jobs)}


def gantt(instance: Any, schedule: Schedule, ax: Axes | None = None, *, optimum: float | None = None,
          bound: float | None = None, title: str | None = None, time_label: str | None = None,
          labels: bool = True) -> Axes:
    """A Gantt chart of an offline schedule: one row per GPU, grouped by server (server names on the left), each
    job a bar on the GPUs it holds; the makespan as a solid line, ``optimum`` (a proven optimal makespan) and
    ``bound`` (a lower bound on it) as dashed lines when given."""
    cap = _capacity(instance)
    if sum(cap.values()) > MAX_GANTT_GPUS:
        raise InstanceError(f"a Gantt chart draws one row per GPU: {sum(cap.values()):,} GPUs are more than "
                            f"{MAX_GANTT_GPUS:,} (use --trace, or chrome_trace, for large clusters)", field="instance")
    seg = assign_lanes(schedule_segments(instance, schedule), cap)
    for _, r in seg.iterrows():  # the evaluator's verdict, checked again on what is drawn
        if r["lanes"] and max(r["lanes"]) >= cap[r["server"]]:
            raise InstanceError(f"the schedule uses more than the {cap[r['server']]} GPUs of server "
                                f"{r['server']!r}", field="placement", job=str(r["job"]))
    ax = _new_axes(ax, (8, max(3.0, 0.25 * sum(cap.values()) + 1.5)))
    colours = _job_colours(list(dict.fromkeys(seg["job"])))
    base, y = {}, 0.0
    rows = {s: max([cap[s], *[max(ls) + 1 for ls in seg.loc[seg["server"] == s, "lanes"] if ls]]) for s in cap}
    for s in cap:
        base[s] = y
        y += rows[s] + 0.6
    for _, r in seg.iterrows():
        for lane in r["lanes"]:
            yy = base[r["server"]] + lane
            ax.broken_barh([(r["start"], r["end"] - r["start"])], (yy + 0.05, 0.9),
                           facecolors=colours[r["job"]], edgecolor="black", linewidth=0.3)
        if labels and r["lanes"] and r["end"] > r["start"]:
            mid = base[r["server"]] + (min(r["lanes"]) + max(r["lanes"]) + 1) / 2
            ax.text((r["start"] + r["end"]) / 2, mid, str(r["job"]), ha="center", va="center", fontsize=7,
                    clip_on=True)
    for s in cap:
        ax.axhline(base[s] + rows[s] + 0.3, color="grey", linewidth=0.5)
    ax.set_yticks([base[s] + rows[s] / 2 for s in cap])
    ax.set_yticklabels([f"{s} ({cap[s]} GPUs)" for s in cap])
    ax.set_ylim(-0.3, y)
    ax.invert_yaxis()
    makespan = float(seg["end"].max()) if len(seg) else 0.0
    ax.axvline(makespan, color="black", linewidth=1.2, label=f"makespan {makespan:g}")
    if optimum is not None:
        ax.axvline(optimum, color="green", linestyle="--", linewidth=1.2, label=f"optimum {optimum:g}")
    if bound is not None:
        ax.axvline(bound, color="red", linestyle=":", linewidth=1.4, label=f"lower bound {bound:g}")
    ax.legend(loc="lower right", fontsize=7)
    unit = time_label or ("time (slots)" if hasattr(instance, "horizon") else "time (instance units)")
    ax.set_xlabel(unit)
    name = getattr(instance, "name", "") or schedule.instance or "instance"
    ax.set_title(title or f"{name}: {schedule.algorithm or 'schedule'}, {len(schedule)} jobs on "
                          f"{sum(cap.values())} GPUs")
    return ax


# -- simulations -----------------------------------------------------------------------------------------------
def sim_segments(result: SimResult) -> pd.DataFrame:
    """The segments a simulation recorded, one row per (job, segment, server): ``job, server`` (index),
    ``gpus, start, end`` (seconds), ``iterations`` (done in the segment, split over servers by GPUs),
    ``segment`` (the job's launch number), ``tracked`` and ``model``. A job still running when the run stopped
    has an open last segment, closed here at the run's end.

    ```pycon
    >>> from optsched.sim import simulate, Workload, WorkloadJob
    >>> r = simulate(Workload((WorkloadJob("a", 0, 2, 10, 1.0),)), servers=2, gpus_per_server=1, mode="event",
    ...              placement="scattered")
    >>> sim_segments(r)[["job", "server", "gpus", "start", "end"]].values.tolist()   # across servers: x1.25
    [['a', 0, 1, 0.0, 12.5], ['a', 1, 1, 0.0, 12.5]]

    ```
    """
    end_s = float(result.summary.get("end_s") or 0.0)
    rows = []
    for job in result.job_objects:
        segs = list(job.segments)
        if getattr(job, "seg_start", None) is not None and job.placement is not None:
            t0, e0 = job.seg_start
            segs.append((t0, end_s, job.placement, float(job.executed) - e0))
        for k, (t0, t1, pl, iters) in enumerate(segs):
            total = max(1, pl.gpus)
            for s, n in zip(pl.servers, pl.counts):
                rows.append((job.id, int(s), int(n), float(t0), float(t1), float(iters) * n / total, k,
                             bool(job.tracked), job.model))
    cols = ["job", "server", "gpus", "start", "end", "iterations", "segment", "tracked", "model"]
    return pd.DataFrame(rows, columns=cols).sort_values(["start", "job", "server"], kind="stable") \
        .reset_index(drop=True)


def sim_title(result: SimResult, what: str) -> str:
    """``"<what>: <workload>, load <L> jobs/h, seed <S>, <policies> (our simulator)"`` from a run's config."""
    cfg = result.config or {}
    wl = cfg.get("workload", {})
    load = wl.get("load_jph")
    parts = [str(wl.get("name") or "workload")]
    parts.append(f"load {load:g} jobs/h" if isinstance(load, (int, float)) else "file arrivals")
    parts.append(f"seed {cfg.get('seed')}")
    pol = "+".join(str(cfg.get(k, {}).get("name", "?")) for k in ("scheduler", "placement", "admission")
                   if isinstance(cfg.get(k), Mapping))
    return f"{what}: {', '.join(parts)}" + (f", {pol}" if pol else "") + " (our simulator)"


def _tracked_window(result: SimResult) -> tuple[float, float] | None:
    tr = result.jobs[result.jobs["tracked"]]
    if tr.empty or len(tr) == len(result.jobs):
        return None
    end = tr["completion_s"].max()
    if pd.isna(end):
        end = float(result.summary.get("end_s") or tr["arrival_s"].max())
    return float(tr["arrival_s"].min()), float(end)


def _mark_window(ax: Axes, result: SimResult, scale: float) -> None:
    win = _tracked_window(result)
    if win is not None:
        ax.axvspan(win[0] / scale, win[1] / scale, color="gold", alpha=0.15, label="tracked jobs' window", zorder=0)


def occupancy(result: SimResult, ax: Axes | None = None, *, per_server: bool = True, hours: bool = True,
              title: str | None = None) -> Axes:
    """Busy GPUs over time from the run's segments: one stacked band per server (``per_server``, up to 20
    servers; beyond that, or with ``per_server=False``, the cluster's total), the cluster's GPUs as a dashed
    line and the tracked jobs' window (first tracked arrival to last tracked completion) shaded."""
    seg = sim_segments(result)
    ax = _new_axes(ax)
    scale = 3600.0 if hours else 1.0
    total = int(result.summary.get("total_gpus") or result.config.get("cluster", {}).get("total_gpus") or 0)
    end = float(result.summary.get("end_s") or (seg["end"].max() if len(seg) else 0.0))
    times = np.unique(np.r_[0.0, seg["start"].to_numpy(), seg["end"].to_numpy(), end])
    servers = sorted(seg["server"].unique().tolist())
    split = per_server and 0 < len(servers) <= 20
    groups = servers if split else ["all"]
    stacks = []
    for s in groups:
        g = seg if s == "all" else seg[seg["server"] == s]
        delta = np.zeros(len(times))
        np.add.at(delta, np.searchsorted(times, g["start"].to_numpy()), g["gpus"].to_numpy())
        np.add.at(delta, np.searchsorted(times, g["end"].to_numpy()), -g["gpus"].to_numpy())
        stacks.append(np.cumsum(delta))
    x = times / scale
    if split:
        ax.stackplot(x, *stacks, step="post", labels=[f"server {s}" for s in groups], alpha=0.85)
    else:
        ax.fill_between(x, stacks[0], step="post", alpha=0.7, label="busy GPUs")
    if total:
        ax.axhline(total, color="black", linestyle="--", linewidth=0.8, label=f"{total} GPUs")
    _mark_window(ax, result, scale)
    ax.set_xlabel("time (hours)" if hours else "time (s)")
    ax.set_ylabel("busy GPUs")
    ax.set_title(sim_title(result, "GPU occupancy") if title is None else title, fontsize=9)
    handles, labels_ = ax.get_legend_handles_labels()
    if len(labels_) <= 12:
        ax.legend(fontsize=6, loc="upper right")
    return ax


def utilisation(result: SimResult, ax: Axes | None = None, *, title: str | None = None) -> Axes:
    """GPU utilisation (busy GPUs / GPUs) over time, hours on x, the tracked window shaded."""
    ax = _new_axes(ax)
    ts = result.timeseries
    ax.step(ts["t_s"] / 3600, ts["utilisation"], where="post")
    _mark_window(ax, result, 3600.0)
    ax.set_ylabel("GPU utilisation")
    ax.set_xlabel("time (hours)")
    ax.set_title(sim_title(result, "utilisation") if title is None else title, fontsize=9)
    return ax


def queue(result: SimResult, ax: Axes | None = None, *, title: str | None = None) -> Axes:
    """Jobs waiting (admitted, not running) over time, hours on x, the tracked window shaded."""
    ax = _new_axes(ax)
    ts = result.timeseries
    ax.step(ts["t_s"] / 3600, ts["queued"], where="post", color="C1")
    _mark_window(ax, result, 3600.0)
    ax.set_ylabel("jobs waiting")
    ax.set_xlabel("time (hours)")
    ax.set_title(sim_title(result, "queue") if title is None else title, fontsize=9)
    return ax


def plot_cdfs(curves: Mapping[str, Sequence[float] | np.ndarray], ax: Axes | None = None, *,
              title: str = "JCT CDF (our simulator)", ylabel: str = "fraction of jobs", fontsize: int = 8,
              hours: bool = True, log: bool = True) -> Axes:
    """One empirical CDF per label from raw values in seconds (sorted here), hours on a log x axis."""
    ax = _new_axes(ax, (6, 4))
    scale = 3600.0 if hours else 1.0
    for label, values in curves.items():
        v = np.sort(np.asarray(values, dtype=float))
        y = np.arange(1, len(v) + 1) / len(v) if len(v) else v
        ax.step(v / scale, y, where="post", label=label)
    if log and any(len(v) for v in curves.values()):
        ax.set_xscale("log")
    ax.set_xlabel("JCT (hours)" if hours else "JCT (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if curves:
        ax.legend(fontsize=fontsize)
    return ax


def plot_vs_load(table: pd.DataFrame, ax: Axes | None = None, *, metric: str | None = None, by: str = "scheduler",
                 title: str | None = None, hours: bool = True) -> Axes:
    """A metric against load, one line per ``by`` value. ``table`` is either a tidy summary
    ([`optsched.experiments.summarise`][]: ``load, metric, mean, ci_low, ci_high``; the 95 % interval over
    seeds is drawn as a band) or one row per run with the ``metric`` column (seconds, shown in hours)."""
    ax = _new_axes(ax, (6, 4))
    scale = 3600.0 if hours else 1.0
    tidy = {"mean", "ci_low", "ci_high", "metric"} <= set(table.columns)
    if tidy:
        metrics = list(dict.fromkeys(table["metric"]))
        metric = metric or metrics[0]
        table = table[table["metric"] == metric]
    if metric is None:
        raise InstanceError("name the metric to plot", field="metric")
    unit_scale = scale if metric.endswith("_s") else 1.0
    for name, g in table.groupby(by, sort=False):
        g = g.sort_values("load")
        y = (g["mean"] if tidy else g[metric]).to_numpy(dtype=float) / unit_scale
        line, = ax.plot(g["load"], y, marker="o", label=str(name))
        if tidy and g["ci_low"].notna().any():
            ax.fill_between(g["load"], g["ci_low"].to_numpy(dtype=float) / unit_scale,
                            g["ci_high"].to_numpy(dtype=float) / unit_scale, color=line.get_color(), alpha=0.2)
    ax.set_xlabel("load (jobs/hour)")
    unit = " (hours)" if unit_scale != 1.0 else ""
    ax.set_ylabel(metric.removesuffix("_s") + unit)
    ax.set_title(title or f"{metric} vs load (our simulator)")
    ax.legend(fontsize=8)
    return ax


# -- Chrome trace / Perfetto -------------------------------------------------------------------------------------
def chrome_trace(segments: pd.DataFrame | SimResult, *, instance: Any = None, time_unit_s: float = 1.0,
                 name: str = "optsched") -> dict[str, Any]:
    """Segments as a Chrome-trace document (``{"traceEvents": [...]}``, JSON Object Format): a complete event
    (``"ph": "X"``) per job segment and GPU, one process per server and one thread per GPU, times in
    microseconds (``time_unit_s`` seconds per unit of ``start``/``end``: 1 for a simulation, the instance's
    slot or time unit for a schedule). Give a [`SimResult`][optsched.sim.metrics.SimResult],
    [`sim_segments`][optsched.plot.sim_segments]
    or [`schedule_segments`][optsched.plot.schedule_segments] output (with ``instance`` for the servers' GPU counts).

    ```pycon
    >>> seg = pd.DataFrame({"job": ["a"], "server": ["s0"], "gpus": [2], "start": [0.0], "end": [3.0]})
    >>> ev = chrome_trace(seg)["traceEvents"]
    >>> {e["tid"]: e["dur"] for e in ev if e["ph"] == "X"}      # one complete event per GPU, 3 s in microseconds
    {0: 3000000.0, 1: 3000000.0}

    ```
    """
    if not isinstance(segments, pd.DataFrame):
        segments = sim_segments(segments)
    cap = _capacity(instance) if instance is not None else None
    seg = assign_lanes(segments, cap)
    servers = list(dict.fromkeys(seg["server"])) if cap is None else list(cap)
    pid = {s: i for i, s in enumerate(servers)}
    events: list[dict[str, Any]] = [{"ph": "M", "name": "process_name", "pid": pid[s], "tid": 0,
                                     "args": {"name": f"server {s}"}} for s in servers]
    scale = 1e6 * float(time_unit_s)
    for _, r in seg.iterrows():
        args = {k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()
                if k in ("gpus", "iterations", "segment", "tracked", "model")}
        for lane in r["lanes"]:
            events.append({"name": str(r["job"]), "cat": "job", "ph": "X", "pid": pid[r["server"]], "tid": int(lane),
                           "ts": float(r["start"]) * scale, "dur": (float(r["end"]) - float(r["start"])) * scale,
                           "args": args})
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": {"producer": name}}


def write_chrome_trace(source: pd.DataFrame | SimResult, path: str | os.PathLike, **kwargs: Any) -> None:
    """Write [`chrome_trace`][optsched.plot.chrome_trace] to ``path`` atomically (open it in ui.perfetto.dev or
    ``chrome://tracing``)."""
    write_json(path, chrome_trace(source, **kwargs))


# -- gaps to the optimum -----------------------------------------------------------------------------------------
def gap_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Each run of [`optsched.experiments.solve_many`][] against the best reference of its instance: the
    proven optimum when an exact model proved one (``reference_kind="optimum"``), else the largest lower bound
    any run proved (``"bound"``: the gap is then an upper bound on the true gap), else the best objective found
    (``"best found"``). Adds ``reference``, ``reference_kind`` and ``gap`` = (objective - reference) / reference
    (NaN without a schedule). Every objective is minimised.

    ```pycon
    >>> runs = pd.DataFrame({"instance": ["i", "i"], "algorithm": ["h", "x"], "kind": ["heuristic", "exact"],
    ...                      "status": ["feasible", "optimal"], "objective": [12.0, 10.0],
    ...                      "lower_bound": [None, 10.0]})
    >>> gap_table(runs)[["algorithm", "reference_kind", "gap"]].values.tolist()
    [['h', 'optimum', 0.2], ['x', 'optimum', 0.0]]

    ```
    """
    need = {"instance", "algorithm", "status", "objective"}
    if not need <= set(runs.columns):
        raise InstanceError(f"needs the columns {sorted(need)} of solve_many", field="runs")
    out = runs.copy()
    obj = pd.to_numeric(out["objective"], errors="coerce")
    lb = pd.to_numeric(out["lower_bound"], errors="coerce") if "lower_bound" in out else pd.Series(np.nan,
                                                                                                     out.index)
    refs, kinds = {}, {}
    for inst, idx in out.groupby("instance", sort=False).groups.items():
        opt = obj[idx][out.loc[idx, "status"] == "optimal"]
        if opt.notna().any():
            refs[inst], kinds[inst] = float(opt.min()), "optimum"
        elif lb[idx].notna().any():
            refs[inst], kinds[inst] = float(lb[idx].max()), "bound"
        elif obj[idx].notna().any():
            refs[inst], kinds[inst] = float(obj[idx].min()), "best found"
        else:
            refs[inst], kinds[inst] = math.nan, "none"
    out["reference"] = out["instance"].map(refs).astype(float)
    out["reference_kind"] = out["instance"].map(kinds)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["gap"] = np.where(out["reference"] > 0, (obj - out["reference"]) / out["reference"],
                              np.where(obj == out["reference"], 0.0, np.nan))
    return out


def gap_summary(gaps: pd.DataFrame, by: Sequence[str] = ("algorithm",)) -> pd.DataFrame:
    """Per algorithm (or ``by``): runs, runs with a schedule, mean gap with its Student-t 95 % interval over
    instances, worst gap, and runs at the reference (``at_reference``: the optimum where one was proven).

    ```pycon
    >>> g = gap_table(pd.DataFrame({"instance": ["i", "i", "j", "j"], "algorithm": ["h", "x", "h", "x"],
    ...                             "status": ["feasible", "optimal"] * 2, "objective": [12.0, 10.0, 5.0, 5.0],
    ...                             "lower_bound": [None, 10.0, None, 5.0]}))
    >>> gap_summary(g)[["algorithm", "runs", "mean_gap", "max_gap", "at_reference"]].values.tolist()
    [['h', 2, 0.1, 0.2, 1], ['x', 2, 0.0, 0.0, 2]]

    ```
    """
    from scipy import stats

    rows = []
    for key, g in gaps.groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        v = g["gap"].dropna().to_numpy(dtype=float)
        n = len(v)
        mean = float(v.mean()) if n else math.nan
        half = float(stats.t.ppf(0.975, n - 1) * v.std(ddof=1) / math.sqrt(n)) if n >= 2 else math.nan
        rows.append({**dict(zip(by, key)), "runs": len(g), "found": n, "mean_gap": mean, "ci_low": mean - half,
                     "ci_high": mean + half, "max_gap": float(v.max()) if n else math.nan,
                     "at_reference": int((np.abs(v) <= 1e-9).sum())})
    return pd.DataFrame(rows)


def plot_gaps(gaps: pd.DataFrame, ax: Axes | None = None, *, by: str = "algorithm", title: str | None = None,
              percent: bool = True) -> Axes:
    """Every run's gap to its instance's reference (one dot per run, jittered), the mean and its 95 %
    interval per algorithm as a black bar."""
    ax = _new_axes(ax, (7, 4))
    names = list(dict.fromkeys(gaps[by]))
    summary = gap_summary(gaps, (by,)).set_index(by)
    k = 100.0 if percent else 1.0
    rng = np.random.default_rng(0)
    for i, name in enumerate(names):
        v = gaps.loc[gaps[by] == name, "gap"].dropna().to_numpy(dtype=float) * k
        ax.scatter(i + rng.uniform(-0.15, 0.15, len(v)), v, s=12, alpha=0.6)
        m = summary.loc[name]
        if not math.isnan(m["mean_gap"]):
            lo = m["mean_gap"] - (m["ci_low"] if not math.isnan(m["ci_low"]) else m["mean_gap"])
            hi = (m["ci_high"] if not math.isnan(m["ci_high"]) else m["mean_gap"]) - m["mean_gap"]
            ax.errorbar(i + 0.3, m["mean_gap"] * k, yerr=[[lo * k], [hi * k]], fmt="s", color="black", capsize=3,
                        markersize=4)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right")
    kinds = sorted(set(gaps.get("reference_kind", pd.Series(dtype=str)).dropna()))
    ax.set_ylabel(f"gap to {' / '.join(kinds) or 'reference'}" + (" (%)" if percent else ""))
    ax.axhline(0, color="grey", linewidth=0.5)
    ax.set_title(title or f"gap to the optimum or best bound, {gaps['instance'].nunique()} instances (our solvers)")
    return ax


# -- figures written as PNG files (what the command line and the benchmarks save) --------------------------------
def save_jct_cdf(results: Mapping[str, SimResult], path: str | os.PathLike,
                 title: str = "JCT CDF (our simulator)") -> None:
    """One JCT CDF curve per labelled run ([`plot_cdfs`][optsched.plot.plot_cdfs], log-scaled hours), written atomically
    as PNG."""
    save_cdf_curves({label: r.jct_cdf()[0] for label, r in results.items()}, path, title=title)


def save_cdf_curves(curves: Mapping[str, Sequence[float] | np.ndarray], path: str | os.PathLike,
                    title: str = "JCT CDF (our simulator)", ylabel: str = "fraction of jobs",
                    fontsize: int = 8) -> None:
    """One empirical CDF per label from raw JCTs in seconds ([`plot_cdfs`][optsched.plot.plot_cdfs]), PNG,
    atomically."""
    save_axes(plot_cdfs(curves, title=title, ylabel=ylabel, fontsize=fontsize), path)


def save_timeline(result: SimResult, path: str | os.PathLike, title: str | None = None) -> None:
    """Utilisation, queue and busy GPUs per server over time ([`utilisation`][optsched.plot.utilisation],
    [`queue`][optsched.plot.queue],
    [`occupancy`][optsched.plot.occupancy]), the tracked window shaded, as one PNG written atomically."""
    import matplotlib.pyplot as plt

    fig, (a1, a2, a3) = plt.subplots(3, 1, figsize=(7, 7.5), sharex=True)
    utilisation(result, a1, title=title or sim_title(result, "timeline"))
    a1.set_xlabel("")
    queue(result, a2, title="")
    a2.set_xlabel("")
    occupancy(result, a3, title="")
    save_axes(a1, path)


def save_vs_load(table: pd.DataFrame, path: str | os.PathLike, metric: str = "avg_jct_s", by: str = "scheduler",
                 title: str | None = None) -> None:
    """[`plot_vs_load`][optsched.plot.plot_vs_load] (one line per ``by`` value, hours on y) written atomically as
    PNG."""
    save_axes(plot_vs_load(table, metric=metric, by=by, title=title), path)
