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

__all__ = ["add_note", "assign_lanes", "bootstrap_interval", "chrome_trace", "coincidence_note", "coinciding",
           "display_name", "figure_legend", "gantt", "gap_summary", "gap_table", "integer_ticks", "legend_outside",
           "metric_label", "occupancy", "plot_cdfs", "plot_dots", "plot_gaps", "plot_quantile_cdfs", "plot_series",
           "plot_vs_load", "queue", "save_axes", "schedule_segments", "series_style", "series_styles", "sim_segments",
           "sim_title", "style_handle", "utilisation", "write_chrome_trace"]

SEGMENT_COLUMNS = ["job", "server", "gpus", "start", "end"]


# -- one style for every figure of the site ---------------------------------------------------------------------
MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">", "h", "p")
LINESTYLES: tuple[Any, ...] = ("-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1)), (0, (1, 2)),
                               (0, (5, 2, 1, 2, 1, 2)), (0, (10, 3)))   # nine: DRS's page draws nine policies
METRIC_LABELS = {  # column name -> words (the unit is added by metric_label)
    "avg_jct_s": "average JCT", "p90_jct_s": "90th-percentile JCT", "p99_jct_s": "99th-percentile JCT",
    "avg_responsiveness_s": "average responsiveness, first start \u2212 arrival",
    "avg_runtime_jct_s": "average run time", "makespan_s": "makespan", "avg_wait_s": "average wait",
    "avg_completion_s": "average completion time", "utilisation": "GPU utilisation",
    "mean_utilisation": "mean GPU utilisation", "r_trace": "deadlines met / jobs (R_trace)",
    "avg_cs": "mean contention sensitivity", "preemptions": "preemptions", "migrations": "migrations",
}


DISPLAY_NAMES = {  # registry name -> how a legend writes it (acronyms in capitals, names capitalised)
    "fifo": "FIFO", "las": "LAS", "srtf": "SRTF", "srsf": "SRSF", "tiresias": "Tiresias", "optimus": "Optimus",
    "gandiva": "Gandiva", "themis": "Themis", "edf": "EDF", "drs": "DRS", "norm": "NoRM", "asrpt": "A-SRPT",
    "elasticflow": "ElasticFlow", "deadline-fifo": "FIFO", "sjf-bco": "SJF-BCO", "ff": "FF", "ls": "LS",
    "rand": "RAND", "lbcp": "LBCP",
    "contention-las": "LAS", "contention-srtf": "SRTF", "accept-all": "accept all",
}


def display_name(name: Any) -> str:
    """How a legend names a scheduler, policy or admission rule: ``las`` -> ``LAS``, ``tiresias`` ->
    ``Tiresias``, ``accept-1.2`` -> ``accept 1.2x``; a name this table does not know is returned as it is.

    ```pycon
    >>> [display_name(n) for n in ("fifo", "tiresias", "accept-1.2", "my-policy")]
    ['FIFO', 'Tiresias', 'accept 1.2x', 'my-policy']

    ```
    """
    text = str(name)
    if text in DISPLAY_NAMES:
        return DISPLAY_NAMES[text]
    if text.startswith("accept-"):
        return f"accept {text.removeprefix('accept-')}x"
    return text


def series_style(i: int) -> dict[str, Any]:
    """The ``i``-th series' colour, marker and line style: every series of a figure gets its own triple, so two
    series drawn on top of each other stay apart by marker and dash even in grey print.

    ```pycon
    >>> a, b = series_style(0), series_style(1)
    >>> a["marker"] != b["marker"] and a["linestyle"] != b["linestyle"] and a["color"] != b["color"]
    True

    ```
    """
    import matplotlib

    return {"color": matplotlib.colormaps["tab10"](i % 10), "marker": MARKERS[i % len(MARKERS)],
            "linestyle": LINESTYLES[i % len(LINESTYLES)]}


def series_styles(names: Sequence[Any]) -> dict[Any, dict[str, Any]]:
    """[`series_style`][optsched.plot.series_style] for each name, in order (duplicates once)."""
    return {n: series_style(i) for i, n in enumerate(dict.fromkeys(names))}


def metric_label(metric: str, hours: bool = True) -> str:
    """A column name in words with its unit: ``avg_jct_s`` -> ``average JCT (hours)``; a name ending in ``_s`` is
    seconds, shown in hours when ``hours``; an unknown name loses its underscores.

    ```pycon
    >>> metric_label("avg_jct_s"), metric_label("avg_wait_s", hours=False), metric_label("utilisation")
    ('average JCT (hours)', 'average wait (s)', 'GPU utilisation')

    ```
    """
    words = METRIC_LABELS.get(metric)
    if words is None:
        base = metric.removesuffix("_s") if metric.endswith("_s") else metric
        words = base.replace("avg_", "average ").replace("_", " ")
    if metric.endswith("_s"):
        return f"{words} ({'hours' if hours else 's'})"
    return words


def integer_ticks(ax: Axes, axis: str = "x") -> Axes:
    """Ticks only at whole numbers on ``axis`` (``"x"``, ``"y"`` or ``"both"``): an axis of counts (nodes, GPUs,
    cases) never shows 2.25."""
    from matplotlib.ticker import MaxNLocator

    for name in ("x", "y") if axis == "both" else (axis,):
        getattr(ax, f"{name}axis").set_major_locator(MaxNLocator(integer=True))
    return ax


def legend_outside(ax: Axes, *, fontsize: float = 7, title: str | None = None, handles: Sequence[Any] | None = None
                   ) -> Any:
    """The legend to the right of the axes, never over the data (``handles``: proxies to show instead of the
    axes' own)."""
    extra = {"handles": list(handles)} if handles is not None else {}
    return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=fontsize,
                     frameon=False, title=title, title_fontsize=fontsize, **extra)


def style_handle(label: str, style: Mapping[str, Any], hollow: bool = False) -> Any:
    """A legend proxy showing a series' colour, dash and marker together."""
    from matplotlib.lines import Line2D

    return Line2D([], [], label=label, color=style["color"], linestyle=style["linestyle"], marker=style["marker"],
                  markerfacecolor="none" if hollow else style["color"])


def figure_legend(fig: Any, ax: Axes, *, ncol: int | None = None, fontsize: float = 8) -> Any:
    """One legend for a figure of several panels (the handles of ``ax``), centred below every panel."""
    handles, labels = ax.get_legend_handles_labels()
    return fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), fontsize=fontsize,
                      ncol=ncol or min(len(labels), 5), frameon=False)


def add_note(ax: Axes, text: str, *, y: float = -0.2, fontsize: float = 7) -> None:
    """A sentence under the axes (below its x label), e.g. which series coincide; nothing for an empty text."""
    if text:
        import textwrap

        fig_w = float(ax.get_figure(root=True).get_figwidth())  # type: ignore[union-attr]
        width = max(40, int(fig_w * ax.get_position().width * 16))
        ax.text(0.0, y, textwrap.fill(text, width), transform=ax.transAxes, fontsize=fontsize, va="top",
                ha="left", style="italic")


def _fmt(v: Any) -> str:
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return str(int(f)) if f.is_integer() and abs(f) < 1e15 else f"{f:.3g}"
    return str(v)


def coinciding(table: pd.DataFrame, x: str, y: str, by: str, rtol: float = 1e-9) -> list[tuple[tuple[Any, ...],
                                                                                              list[Any]]]:
    """Groups of series (values of ``by``) whose ``y`` is equal (to ``rtol``) at the same ``x``: a list of
    (names, the x values where exactly these series coincide).

    ```pycon
    >>> t = pd.DataFrame({"p": ["a", "a", "b", "b"], "x": [1, 2, 1, 2], "y": [5.0, 6.0, 5.0, 7.0]})
    >>> coinciding(t, "x", "y", "p")
    [(('a', 'b'), [1])]

    ```
    """
    piv = table.pivot_table(index=x, columns=by, values=y, aggfunc="first", sort=True)
    order = [n for n in dict.fromkeys(table[by]) if n in piv.columns]
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for xv, row in piv.iterrows():
        vals = row.dropna()
        used: set[Any] = set()
        for a in order:
            if a in used or a not in vals.index:
                continue
            same = [b for b in order if b not in used and b in vals.index
                    and abs(float(vals[b]) - float(vals[a])) <= rtol * max(1.0, abs(float(vals[a])))]
            if len(same) > 1:
                used.update(same)
                groups.setdefault(tuple(same), []).append(xv)
    # a group also coincides wherever a larger group containing it does (LAS and Tiresias everywhere, all four
    # at loads 1-7): list each group at every such x, and drop a group whose x values its superset already has
    xs_of = {g: [xv for xv in piv.index if any(set(g) <= set(h) and xv in hx for h, hx in groups.items())]
             for g in groups}
    keep = {g: xs for g, xs in xs_of.items()
            if not any(set(g) < set(h) and xs_of[h] == xs for h in groups)}
    return sorted(keep.items(), key=lambda t: (-len(t[1]), -len(t[0])))


def coincidence_note(table: pd.DataFrame, x: str, y: str, by: str, *, xname: str | None = None,
                     labels: Mapping[Any, str] | None = None) -> str:
    """A sentence naming the series that coincide exactly, and where (``""`` when none do): what a reader needs
    when one line hides another.

    ```pycon
    >>> t = pd.DataFrame({"p": ["a", "a", "b", "b"], "x": [1, 2, 1, 2], "y": [5.0, 6.0, 5.0, 6.0]})
    >>> coincidence_note(t, "x", "y", "p")
    'a and b coincide exactly at every point (drawn side by side).'

    ```
    """
    xs_all = sorted(set(table[x]))
    parts = []
    for names, xs in coinciding(table, x, y, by):
        who = [str((labels or {}).get(n, n)) for n in names]
        who_text = " and ".join(who) if len(who) == 2 else ", ".join(who[:-1]) + " and " + who[-1]
        if len(xs) == len(xs_all):
            where = "at every point"
        else:
            pos = [xs_all.index(v) for v in xs]
            run = pos == list(range(pos[0], pos[0] + len(pos)))
            name, _, unit = str(xname or x).partition(" (")
            unit = f" ({unit}" if unit else ""
            where = (f"at {name} {_fmt(xs[0])}\u2013{_fmt(xs[-1])}{unit}" if run and len(xs) > 2 else
                     f"at {name} {', '.join(_fmt(v) for v in xs)}{unit}")
        parts.append(f"{who_text} coincide exactly {where}")
    return ("; ".join(parts) + " (drawn side by side).") if parts else ""


def plot_series(table: pd.DataFrame, x: str, y: str, by: str, ax: Axes | None = None, *,
                err: str | None = None, lo: str | None = None, hi: str | None = None, scale: float = 1.0,
                labels: Mapping[Any, str] | None = None, order: Sequence[Any] | None = None,
                xlabel: str | None = None, ylabel: str | None = None, dodge: float = 0.012,
                note: bool = True, highlight: Sequence[Any] = (), near: float = 0.01, logx: bool = False,
                logy: bool = False) -> Axes:
    """One line per value of ``by`` (``y`` against ``x``), each with its own colour, marker and dash
    ([`series_style`][optsched.plot.series_style]), an interval as error bars (``err``: a half-width column, or
    ``lo``/``hi``: bound columns), the series nudged sideways by ``dodge`` of the x range each so that equal
    points stay visible, and a note under the axes naming the series that coincide exactly (and those within
    ``near`` of the y range of each other at every point). ``highlight`` series (the method a figure is about)
    are drawn on top of the others, with a thicker line. Few x values are ticked where they are; whole-number x
    values get whole-number ticks only. ``logx``: a log x axis, the nudge a factor instead of a step;
    ``logy``: a log y axis (``near`` then compares orders of magnitude).

    ```pycon
    >>> t = pd.DataFrame({"p": ["a", "a", "b", "b"], "n": [2, 4, 2, 4], "y": [1.0, 2.0, 1.0, 3.0]})
    >>> ax = plot_series(t, "n", "y", "p")
    >>> [float(v) for v in ax.get_xticks()], len(ax.texts)   # the swept values; one note: a and b meet at 2
    ([2.0, 4.0], 1)

    ```
    """
    ax = _new_axes(ax, (6, 4))
    names = [n for n in (order or list(dict.fromkeys(table[by]))) if (table[by] == n).any()]
    styles = series_styles(names)
    xs = sorted(set(pd.to_numeric(table[x], errors="coerce").dropna().tolist()))
    if logx:
        span = math.log10(xs[-1] / xs[0]) if len(xs) > 1 and xs[0] > 0 else 1.0
    else:
        span = (xs[-1] - xs[0]) if len(xs) > 1 else 1.0
    top = [n for n in names if n in set(highlight)]
    for i, name in enumerate(names):
        g = table[table[by] == name].sort_values(x)
        step = dodge * span * (i - (len(names) - 1) / 2) if dodge else 0.0
        xv = g[x].to_numpy(dtype=float) * 10 ** step if logx else g[x].to_numpy(dtype=float) + step
        yv = g[y].to_numpy(dtype=float) / scale
        yerr = None
        if err is not None:
            yerr = np.nan_to_num(g[err].to_numpy(dtype=float) / scale)
        elif lo is not None and hi is not None:
            low, high = g[lo].to_numpy(dtype=float) / scale, g[hi].to_numpy(dtype=float) / scale
            yerr = np.vstack([np.nan_to_num(yv - low), np.nan_to_num(high - yv)])
        ax.errorbar(xv, yv, yerr=yerr, capsize=2.5, markersize=5, linewidth=2.6 if name in top else 1.3,
                    elinewidth=0.9, alpha=0.9, label=str((labels or {}).get(name, name)),
                    markerfacecolor="none" if i % 2 else None, zorder=4 if name in top else 2, **styles[name])
    if logx:
        ax.set_xscale("log")
        ax.minorticks_off()
    if logy:
        ax.set_yscale("log")
    if 0 < len(xs) <= 12:
        ax.set_xticks(xs)
        ax.set_xticklabels([_fmt(v) if not float(v).is_integer() else str(int(v)) for v in xs])
    elif xs and all(float(v).is_integer() for v in xs):
        integer_ticks(ax, "x")
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or metric_label(y, hours=scale == 3600.0))
    if note:
        text = coincidence_note(table, x, y, by, xname=xlabel or x, labels=labels)
        close = _near_pairs(table, x, y, by, near, log=logy)
        if close:
            text += (" " if text else "") + "; ".join(
                f"{(labels or {}).get(a, a)} and {(labels or {}).get(b, b)}" for a, b in close) + \
                f" differ by less than {near:.0%} of the axis at every point (nudged apart to show both)."
        add_note(ax, text)
    return ax


def _near_pairs(table: pd.DataFrame, x: str, y: str, by: str, near: float, log: bool = False
                ) -> list[tuple[Any, Any]]:
    """Pairs of series within ``near`` of the y range (of log10 y on a log axis) at every shared x, without being
    equal at all of them."""
    piv = table.pivot_table(index=x, columns=by, values=y, aggfunc="first")
    if log:
        piv = np.log10(piv.where(piv > 0))
    if piv.empty or near <= 0:
        return []
    span = float(np.nanmax(piv.to_numpy()) - np.nanmin(piv.to_numpy())) or 1.0
    order = [n for n in dict.fromkeys(table[by]) if n in piv.columns]
    out = []
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            d = (piv[a] - piv[b]).abs().dropna()
            if len(d) and float(d.max()) <= near * span and not bool((d <= 1e-9 * span).all()):
                out.append((a, b))
    return out


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
    legend_outside(ax, fontsize=7)
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
        legend_outside(ax, fontsize=7)
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
              hours: bool = True, log: bool = True, xlabel: str | None = None, scale: float | None = None) -> Axes:
    """One empirical CDF per label from raw values in seconds (sorted here), hours on a log x axis; each curve
    with its own colour, dash and a few markers ([`series_style`][optsched.plot.series_style]), the legend beside
    the axes and a note under them naming curves that are identical (``xlabel``/``scale`` for values that are
    not JCTs in seconds)."""
    ax = _new_axes(ax, (6, 4))
    scale = scale if scale is not None else (3600.0 if hours else 1.0)
    styles = series_styles(list(curves))
    sorted_ = {label: np.sort(np.asarray(values, dtype=float)) for label, values in curves.items()}
    for label, v in sorted_.items():
        y = np.arange(1, len(v) + 1) / len(v) if len(v) else v
        st = styles[label]
        ax.step(v / scale, y, where="post", label=label, color=st["color"], linestyle=st["linestyle"],
                linewidth=1.3)
        if len(v):  # markers at fixed quantiles, offset per curve, so curves on top of each other stay apart
            k = list(styles).index(label)
            q = np.clip(np.arange(0.1 + 0.02 * (k % 5), 1.0, 0.2), 0, 1)
            idx = np.minimum((q * len(v)).astype(int), len(v) - 1)
            ax.plot(v[idx] / scale, (idx + 1) / len(v), linestyle="none", marker=st["marker"], color=st["color"],
                    markersize=5, markerfacecolor="none" if k % 2 else st["color"])
    if log and any(len(v) for v in curves.values()):
        ax.set_xscale("log")
    ax.set_xlabel(xlabel or ("JCT (hours)" if hours else "JCT (s)"))
    ax.set_ylabel(ylabel)
    import textwrap

    ax.set_title(textwrap.fill(title, 72), fontsize=9)
    if curves:
        legend_outside(ax, fontsize=fontsize, handles=[style_handle(str(lab), styles[lab], k % 2 == 1)
                                                       for k, lab in enumerate(styles)])
    labels = list(sorted_)
    same = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1:]
            if len(sorted_[a]) and np.array_equal(sorted_[a], sorted_[b])]
    if same:
        add_note(ax, "; ".join(f"{a} and {b} are identical" for a, b in same)
                 + " (one curve drawn over the other; markers offset).", y=-0.16)
    return ax


def plot_quantile_cdfs(table: pd.DataFrame, by: str, ax: Axes | None = None, *, q: str = "q",
                       value: str = "jct_s", seed: str = "seed", title: str = "JCT CDF (our simulator)",
                       ylabel: str = "fraction of jobs", xlabel: str = "JCT (hours, log scale)", scale: float = 3600.0,
                       labels: Mapping[Any, str] | None = None, log: bool = True) -> Axes:
    """CDFs from stored quantiles: ``table`` has one row per series (``by``), ``seed`` and quantile level ``q``
    (a fraction) with the quantile's ``value`` (seconds, shown in hours). Per series, the curve is the mean over
    seeds of each quantile, the shaded band its 95 % percentile-bootstrap interval over seeds
    ([`bootstrap_interval`][optsched.plot.bootstrap_interval], so inside the seeds' range); each curve has its
    own colour, dash and markers at offset levels, the legend is beside the axes
    ([`display_name`][optsched.plot.display_name] names), and a note under the axes names curves that are identical.

    ```pycon
    >>> t = pd.DataFrame({"p": ["a"] * 6 + ["b"] * 6, "seed": [0, 0, 0, 1, 1, 1] * 2, "q": [0.0, 0.5, 1.0] * 4,
    ...                   "jct_s": [1.0, 2.0, 4.0, 1.0, 3.0, 5.0, 2.0, 4.0, 8.0, 2.0, 5.0, 9.0]})
    >>> ax = plot_quantile_cdfs(t, "p", scale=1.0)
    >>> [x.get_text() for x in ax.get_legend().get_texts()]
    ['a', 'b', '95 % bootstrap interval\\nover 2 seeds']

    ```
    """
    ax = _new_axes(ax, (6, 4))
    names = list(dict.fromkeys(table[by]))
    styles = series_styles(names)
    curves: dict[Any, np.ndarray] = {}
    for k, name in enumerate(names):
        g = table[table[by] == name]
        piv = g.pivot_table(index=q, columns=seed, values=value, aggfunc="first").sort_index()
        levels = piv.index.to_numpy(dtype=float)
        per_seed = piv.to_numpy(dtype=float) / scale
        mean = np.nanmean(per_seed, axis=1)
        curves[name] = mean
        st = styles[name]
        if per_seed.shape[1] > 1:
            band = np.array([bootstrap_interval(row) for row in per_seed])
            ax.fill_betweenx(levels, band[:, 0], band[:, 1], color=st["color"], alpha=0.15, linewidth=0)
        ax.plot(mean, levels, color=st["color"], linestyle=st["linestyle"], linewidth=1.4, zorder=3)
        marks = np.arange(0.1 + 0.03 * (k % 5), 1.0, 0.2)
        idx = np.searchsorted(levels, marks).clip(0, len(levels) - 1)
        ax.plot(mean[idx], levels[idx], linestyle="none", marker=st["marker"], color=st["color"], markersize=5,
                markerfacecolor="none" if k % 2 else st["color"], zorder=4)
    if log:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.02)
    import textwrap

    ax.set_title(textwrap.fill(title, 72), fontsize=9)
    shown = {n: (labels or {}).get(n, display_name(n)) for n in names}
    nseeds = table[seed].nunique()
    handles = [style_handle(shown[n], styles[n], k % 2 == 1) for k, n in enumerate(names)]
    if nseeds > 1:
        from matplotlib.patches import Patch

        handles.append(Patch(color="grey", alpha=0.3, label=f"95 % bootstrap interval\nover {nseeds} seeds"))
    if names:
        legend_outside(ax, fontsize=8, handles=handles)
    same = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]
            if len(curves[a]) == len(curves[b]) and np.allclose(curves[a], curves[b], rtol=1e-9, atol=0)]
    if same:
        add_note(ax, "; ".join(f"{shown[a]} and {shown[b]} are identical" for a, b in same)
                 + " (one curve drawn over the other; markers offset).", y=-0.16)
    return ax


def plot_vs_load(table: pd.DataFrame, ax: Axes | None = None, *, metric: str | None = None, by: str = "scheduler",
                 title: str | None = None, hours: bool = True, labels: Mapping[Any, str] | None = None) -> Axes:
    """A metric against load, one line per ``by`` value ([`plot_series`][optsched.plot.plot_series]: own marker
    and dash per line, nudged apart, a note where lines coincide exactly), each named by
    [`display_name`][optsched.plot.display_name] unless ``labels`` says otherwise. ``table`` is either a tidy
    summary ([`optsched.experiments.summarise`][]: ``load, metric, mean, ci_low, ci_high``; the 95 %
    percentile-bootstrap interval over seeds is drawn as error bars) or one row per run with the ``metric`` column
    (seconds, shown in hours)."""
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
    has_ci = tidy and bool(table["ci_low"].notna().any())
    names = {n: display_name(n) for n in dict.fromkeys(table[by])}
    plot_series(table, "load", "mean" if tidy else metric, by, ax, lo="ci_low" if has_ci else None,
                hi="ci_high" if has_ci else None, scale=unit_scale, xlabel="load (jobs/hour)",
                ylabel=metric_label(metric, hours=unit_scale != 1.0), labels={**names, **(labels or {})})
    import textwrap

    ax.set_title(textwrap.fill(title or f"{metric_label(metric, hours=unit_scale != 1.0)} vs load (our simulator)",
                               72), fontsize=9)
    legend_outside(ax, fontsize=8)
    return ax


# -- Chrome trace / Perfetto -------------------------------------------------------------------------------------
def _slice_name(row: Mapping[str, Any]) -> str:
    """``job 12 \u00b7 ResNet-50 \u00b7 4 GPUs`` (the model when the segments carry one; GPUs on this server)."""
    parts = [f"job {row['job']}"]
    model = row.get("model")
    if isinstance(model, str) and model:
        parts.append(model)
    n = int(row["gpus"])
    parts.append(f"{n} GPU{'s' if n != 1 else ''}")
    return " \u00b7 ".join(parts)


def chrome_trace(segments: pd.DataFrame | SimResult, *, instance: Any = None, time_unit_s: float = 1.0,
                 name: str = "optsched") -> dict[str, Any]:
    """Segments as a Chrome-trace document (``{"traceEvents": [...]}``, JSON Object Format): a complete event
    (``"ph": "X"``) per job segment and GPU, one process per server and one thread per GPU, named for a person
    (``job 12 \u00b7 ResNet-50 \u00b7 4 GPUs``: job id, model when known, the job's GPUs on that server). Times are
    whole microseconds (``time_unit_s`` seconds per unit of ``start``/``end``: 1 for a simulation, the instance's
    slot or time unit for a schedule), start and end each rounded once, so a slice ends exactly where the next
    one on its GPU starts and slices never overlap on a thread (a strict importer rejects mis-nested slices).
    Give a [`SimResult`][optsched.sim.metrics.SimResult], [`sim_segments`][optsched.plot.sim_segments]
    or [`schedule_segments`][optsched.plot.schedule_segments] output (with ``instance`` for the servers' GPU counts).

    ```pycon
    >>> seg = pd.DataFrame({"job": ["a"], "server": ["s0"], "gpus": [2], "start": [0.0], "end": [3.0]})
    >>> ev = chrome_trace(seg)["traceEvents"]
    >>> {e["tid"]: e["dur"] for e in ev if e["ph"] == "X"}      # one complete event per GPU, 3 s in microseconds
    {0: 3000000, 1: 3000000}
    >>> [e["name"] for e in ev if e["ph"] == "X"][0]
    'job a \u00b7 2 GPUs'

    ```
    """
    if not isinstance(segments, pd.DataFrame):
        segments = sim_segments(segments)
    cap = _capacity(instance) if instance is not None else None
    seg = assign_lanes(segments, cap)
    if "model" not in seg.columns and instance is not None and getattr(instance, "jobs", None) is not None:
        models = {str(j.id): getattr(j, "model", None) for j in instance.jobs}
        seg["model"] = seg["job"].astype(str).map(models)
    servers = list(dict.fromkeys(seg["server"])) if cap is None else list(cap)
    pid = {s: i for i, s in enumerate(servers)}
    events: list[dict[str, Any]] = [{"ph": "M", "name": "process_name", "pid": pid[s], "tid": 0,
                                     "args": {"name": f"server {s}"}} for s in servers]
    for s in servers:
        lanes = sorted({int(k) for ls in seg.loc[seg["server"] == s, "lanes"] for k in ls} | set(
            range(cap[s] if cap is not None else 0)))
        events += [{"ph": "M", "name": "thread_name", "pid": pid[s], "tid": k, "args": {"name": f"GPU {k}"}}
                   for k in lanes]
    scale = 1e6 * float(time_unit_s)
    for _, r in seg.iterrows():
        args = {k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()
                if k in ("job", "gpus", "iterations", "segment", "tracked", "model")}
        ts, te = int(round(float(r["start"]) * scale)), int(round(float(r["end"]) * scale))
        for lane in r["lanes"]:
            events.append({"name": _slice_name(r), "cat": "job", "ph": "X", "pid": pid[r["server"]],
                           "tid": int(lane), "ts": ts, "dur": max(0, te - ts), "args": args})
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


def bootstrap_interval(values: Sequence[float] | np.ndarray, *, level: float = 0.95, resamples: int = 2000,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile-bootstrap interval of the mean (``resamples`` resamples with replacement, seeded): it stays
    inside the range of the values, so the interval of a quantity that cannot be negative (a gap to an optimum
    or a lower bound) never reaches below 0. NaN, NaN for no value; the value twice for one.

    ```pycon
    >>> lo, hi = bootstrap_interval([0.0, 0.0, 0.0, 0.0, 0.5])
    >>> lo >= 0.0, hi <= 0.5
    (True, True)

    ```
    """
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return math.nan, math.nan
    if len(v) == 1:
        return float(v[0]), float(v[0])
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, len(v), size=(resamples, len(v)))].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def gap_summary(gaps: pd.DataFrame, by: Sequence[str] = ("algorithm",)) -> pd.DataFrame:
    """Per algorithm (or ``by``): runs, runs with a schedule, mean gap with its 95 % percentile-bootstrap
    interval over instances ([`bootstrap_interval`][optsched.plot.bootstrap_interval]: a gap is never negative,
    and neither is its interval), worst gap, and runs at the reference (``at_reference``: the optimum where one
    was proven).

    ```pycon
    >>> g = gap_table(pd.DataFrame({"instance": ["i", "i", "j", "j"], "algorithm": ["h", "x", "h", "x"],
    ...                             "status": ["feasible", "optimal"] * 2, "objective": [12.0, 10.0, 5.0, 5.0],
    ...                             "lower_bound": [None, 10.0, None, 5.0]}))
    >>> gap_summary(g)[["algorithm", "runs", "mean_gap", "max_gap", "at_reference"]].values.tolist()
    [['h', 2, 0.1, 0.2, 1], ['x', 2, 0.0, 0.0, 2]]

    ```
    """
    rows = []
    for key, g in gaps.groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        v = g["gap"].dropna().to_numpy(dtype=float)
        n = len(v)
        mean = float(v.mean()) if n else math.nan
        lo, hi = bootstrap_interval(v) if n >= 2 else (math.nan, math.nan)
        rows.append({**dict(zip(by, key)), "runs": len(g), "found": n, "mean_gap": mean, "ci_low": lo,
                     "ci_high": hi, "max_gap": float(v.max()) if n else math.nan,
                     "at_reference": int((np.abs(v) <= 1e-9).sum())})
    return pd.DataFrame(rows)


def plot_dots(table: pd.DataFrame, value: str, by: str, ax: Axes | None = None, *,
              order: Sequence[Any] | None = None, scale: float = 1.0, ylabel: str | None = None,
              title: str | None = None, dot_label: str = "one run", legend: bool = True) -> Axes:
    """One column per ``by`` value: every row's ``value`` as a dot (jittered sideways, the value's own colour and
    marker), beside them the mean as a black square with its 95 % percentile-bootstrap interval
    ([`bootstrap_interval`][optsched.plot.bootstrap_interval], inside the range of the dots); the legend says
    which is which. Categories on x never hide each other.

    ```pycon
    >>> t = pd.DataFrame({"policy": ["a", "a", "b", "b"], "cs": [1.0, 1.2, 2.0, 2.2]})
    >>> ax = plot_dots(t, "cs", "policy")
    >>> [x.get_text() for x in ax.get_xticklabels()]
    ['a', 'b']

    ```
    """
    ax = _new_axes(ax, (7, 4))
    names = [n for n in (order or list(dict.fromkeys(table[by]))) if (table[by] == n).any()]
    styles = series_styles(names)
    rng = np.random.default_rng(0)
    for i, name in enumerate(names):
        v = table.loc[table[by] == name, value].dropna().to_numpy(dtype=float) / scale
        ax.scatter(i - 0.1 + rng.uniform(-0.12, 0.12, len(v)), v, s=14, alpha=0.6, color=styles[name]["color"],
                   marker=styles[name]["marker"], label=dot_label if i == 0 else None)
        if len(v):
            m = float(v.mean())
            lo, hi = bootstrap_interval(v)
            ax.errorbar(i + 0.25, m, yerr=[[max(0.0, m - lo)], [max(0.0, hi - m)]], fmt="s", color="black",
                        capsize=3, markersize=4, label="mean, 95 % bootstrap interval" if i == 0 else None)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([display_name(n) for n in names], rotation=30, ha="right")
    ax.set_ylabel(ylabel or metric_label(value, hours=scale == 3600.0))
    if title:
        ax.set_title(title, fontsize=9)
    if names and legend:
        legend_outside(ax)
    return ax


def plot_gaps(gaps: pd.DataFrame, ax: Axes | None = None, *, by: str = "algorithm", title: str | None = None,
              percent: bool = True) -> Axes:
    """Every run's gap to its instance's reference ([`plot_dots`][optsched.plot.plot_dots]: one dot per run, the
    mean as a black square with its 95 % percentile-bootstrap interval over instances, never below 0 as no gap
    is)."""
    kinds = sorted(set(gaps.get("reference_kind", pd.Series(dtype=str)).dropna()))
    ax = plot_dots(gaps, "gap", by, ax, scale=0.01 if percent else 1.0, dot_label="one run (instance)",
                   ylabel=f"gap to the {' / '.join(kinds) or 'reference'}" + (" (%)" if percent else ""),
                   title=title or f"gap to the optimum or best bound, {gaps['instance'].nunique()} instances "
                                  "(our solvers)")
    ax.axhline(0, color="grey", linewidth=0.5)
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
