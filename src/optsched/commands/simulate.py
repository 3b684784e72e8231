"""``optsched simulate WORKLOAD ...`` (one run) and ``optsched simulate --sweep ...`` (Blox's experiment sweeper).

One run::

    optsched simulate philly --scheduler fifo --placement consolidated --admission accept-all --load 8 \\
        [--round-s 300 | --event] [--jobs-window 3000:4000] [--servers 32 --gpus-per-server 4] [--seed 0] \\
        [-o OUT.json] [--plots DIR]

``WORKLOAD`` is ``philly``, ``pollux:N`` (N = 1..8), ``synthetic`` or a workload file (``docs/formats.md``).
It prints a summary table; ``-o`` writes the per-job records, summary and time series as JSON; ``--plots`` writes
the JCT CDF and the utilisation/queue timeline. A sweep runs every scheduler x placement x admission x load and
writes ``<name>.md``, ``<name>.csv`` and plots (average JCT and responsiveness vs load, JCT CDF at the highest
load) to ``--out`` (default ``docs/results``), all atomically.

The sweep machinery (:func:`sweep`, :func:`write_sweep`) is importable; ``benchmarks/blox_policies.py`` uses it.

>>> from optsched.cli import main
>>> main(["simulate", "synthetic", "--jobs", "6", "--load", "4", "--servers", "2", "--no-progress", "--quiet"])
0
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..errors import InstanceError
from ._args import positive_float, positive_int

SUMMARY_ROWS = (
    ("jobs", "jobs simulated", "{:d}"), ("tracked", "jobs tracked", "{:d}"),
    ("finished_tracked", "tracked jobs finished", "{:d}"),
    ("avg_jct_s", "average JCT (h)", "h"), ("p50_jct_s", "median JCT (h)", "h"), ("p99_jct_s", "p99 JCT (h)", "h"),
    ("avg_responsiveness_s", "avg responsiveness (h)", "h"), ("makespan_s", "makespan (h)", "h"),
    ("mean_utilisation", "mean GPU utilisation", "{:.3f}"), ("mean_queue", "mean queue length", "{:.1f}"),
    ("preemptions", "preemptions (tracked)", "{:d}"), ("events", "engine events", "{:d}"),
    ("wall_s", "wall time (s)", "{:.2f}"), ("events_per_s", "events per second", "{:,.0f}"),
)


# -- argument helpers ------------------------------------------------------------------------------------------
def parse_list(text: str | None) -> list[str]:
    """``"fifo,las"`` -> ``['fifo', 'las']``."""
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def parse_loads(text: str) -> list[float]:
    """``"1-9"`` -> 1..9 (integers), ``"1,2.5,4"`` -> those values.

    >>> parse_loads("1-4"), parse_loads("2,8")
    ([1.0, 2.0, 3.0, 4.0], [2.0, 8.0])
    """
    out: list[float] = []
    for part in parse_list(text):
        try:
            if "-" in part[1:]:
                a, b = part.split("-", 1)
                lo, hi = int(a), int(b)
                if hi < lo:
                    raise ValueError
                out.extend(float(x) for x in range(lo, hi + 1))
            else:
                out.append(float(part))
        except ValueError:
            raise InstanceError(f"must be a list like 1-9 or 1,2,4 of positive loads, got {text!r}",
                                field="loads") from None
    if not out or any(not (x > 0 and math.isfinite(x)) for x in out):
        raise InstanceError(f"must be a list like 1-9 or 1,2,4 of positive loads, got {text!r}", field="loads")
    return out


def register(sub) -> None:
    p = sub.add_parser(
        "simulate", help="simulate online scheduling policies on a workload (Blox)",
        description="Simulate a policy composition (admission -> scheduling -> placement, as in Blox) on a "
                    "workload: philly, pollux:N, synthetic, or a workload file (docs/formats.md). With --sweep, "
                    "run every scheduler x placement x admission x load and write a table, CSV and plots.",
        epilog="Examples: optsched simulate philly --scheduler las --load 8 -o run.json; "
               "optsched simulate --sweep philly --schedulers fifo,las --loads 1-9 --out docs/results")
    p.add_argument("workload", nargs="?", default=None,
                   help="philly | pollux:N | synthetic | path to a workload file (default philly for --sweep)")
    p.add_argument("--scheduler", default="fifo", help="scheduling policy name (fifo, las, srtf, tiresias, ...)")
    p.add_argument("--placement", default="consolidated", help="consolidated | first-free | scattered")
    p.add_argument("--admission", default="accept-all", help="accept-all | accept-k | accept-1.2 (k = 1.2) ...")
    p.add_argument("--load", type=positive_float("--load"), default=None,
                   help="jobs per hour (Poisson re-timing; philly/synthetic default 8, pollux keeps its times)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--round-s", type=positive_float("--round-s"), default=300.0,
                      help="round length in seconds (Blox's round-based mode, default 300)")
    mode.add_argument("--event", action="store_true", help="event-driven mode: decide at every arrival/completion")
    p.add_argument("--jobs-window", default=None, metavar="START:END",
                   help="track only jobs START <= id < END (philly default 3000:4000; others: all jobs)")
    p.add_argument("--jobs", type=positive_int("--jobs"), default=None,
                   help="number of jobs (synthetic default 200; philly/pollux/files: truncate)")
    p.add_argument("--servers", type=positive_int("--servers"), default=32, help="servers (default 32)")
    p.add_argument("--gpus-per-server", type=positive_int("--gpus-per-server"), default=4,
                   help="GPUs per server (default 4)")
    p.add_argument("--seed", type=int, default=0, help="seed of the workload generator and policies (default 0)")
    p.add_argument("--perf", default=None, help="performance model name (default constant, cross-server x1.25)")
    p.add_argument("--restore-s", type=float, default=0.0, help="checkpoint-restore stall of a resumed job (s)")
    p.add_argument("--philly-filter", choices=("blox", "none"), default="blox",
                   help="blox: Blox's Gavel-like filter (31.6 min < run time < 6.9 days, <= 16 GPUs); none: all")
    p.add_argument("--philly-order", choices=("file", "submit"), default="file",
                   help="job ids in file order (Blox's parse order, default) or submission order")
    p.add_argument("--drain-h", type=positive_float("--drain-h"), default=None,
                   help="stop this many simulated hours after the last tracked arrival (default: when all "
                        "tracked jobs finish)")
    p.add_argument("-o", "--output", help="write the run's JSON (per-job records, summary, time series) here")
    p.add_argument("--plots", metavar="DIR", help="write JCT CDF and utilisation/queue plots to DIR")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    sw = p.add_argument_group("sweep (Blox's experiment sweeper)")
    sw.add_argument("--sweep", action="store_true", help="run the grid below instead of one run")
    sw.add_argument("--schedulers", default="fifo,las,srtf,tiresias", help="comma list (default fifo,las,srtf,tiresias)")
    sw.add_argument("--placements", default="consolidated", help="comma list (default consolidated)")
    sw.add_argument("--admissions", default="accept-all", help="comma list (default accept-all)")
    sw.add_argument("--loads", default="1-9", help="jobs/hour: 1-9 or 1,2,4 (default 1-9)")
    sw.add_argument("--out", default="docs/results", help="output folder of a sweep (default docs/results)")
    sw.add_argument("--name", default="sweep", help="file name stem of a sweep's outputs (default sweep)")
    sw.add_argument("--workers", type=positive_int("--workers"), default=1, help="processes (default 1)")
    p.set_defaults(func=run)


# -- one run ---------------------------------------------------------------------------------------------------
def _window(args) -> tuple[int, int] | None:
    if args.jobs_window is None:
        return None
    from ..sim.traces import parse_window
    return parse_window(args.jobs_window)


def run_one(spec: str, *, scheduler: Any = "fifo", placement: Any = "consolidated", admission: Any = "accept-all",
            load: float | None = None, seed: int = 0, round_s: float = 300.0, event: bool = False,
            window: tuple[int, int] | None = None, n_jobs: int | None = None, servers: int = 32,
            gpus_per_server: int = 4, perf: Any = None, restore_s: float = 0.0, philly_filter: str = "blox",
            philly_order: str = "file", progress: bool = False, label: str | None = None, philly_frame=None,
            drain_h: float | None = None):
    """Build the workload ``spec`` and simulate it; returns the :class:`~optsched.sim.metrics.SimResult`.
    Jobs too large for the cluster are dropped from generated traces (``max_gpus``); the run stops once every
    tracked job has finished (the later jobs only provide load, as in Blox), or, with ``drain_h``, at the
    horizon ``drain_h`` hours after the last tracked arrival (tracked jobs still running are then unfinished:
    ``summary['finished_tracked']`` says how many finished)."""
    from ..sim import simulate
    from ..sim.traces import resolve_workload

    generated = spec in ("philly", "synthetic") or spec.startswith("pollux")
    wl = resolve_workload(spec, load_jph=load, seed=seed, window=window, n_jobs=n_jobs,
                          max_gpus=servers * gpus_per_server if generated else None, philly_filter=philly_filter,
                          philly_order=philly_order, philly_frame=philly_frame)
    horizon = None
    if drain_h is not None:
        if not (drain_h > 0 and math.isfinite(drain_h)):
            raise InstanceError(f"must be a positive number of hours, got {drain_h!r}", field="drain_h")
        last = max((j.arrival_s for j in wl.jobs if j.tracked), default=0.0)
        horizon = last + drain_h * 3600.0
    return simulate(wl, servers=servers, gpus_per_server=gpus_per_server, scheduler=scheduler, placement=placement,
                    admission=admission, perf=perf, mode="event" if event else "round", round_s=round_s, seed=seed,
                    progress=progress, restore_s=restore_s, stop_when_tracked_done=True, label=label,
                    max_time_s=horizon)


def _fmt(v: Any, how: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if how == "h":
        return f"{v / 3600:.2f}"
    return how.format(v)


def summary_table(summary: dict, config: dict | None = None) -> str:
    """A two-column plain-text table of the headline numbers."""
    lines = []
    if config:
        sch = config.get("scheduler", {}).get("name", "?")
        pl = config.get("placement", {}).get("name", "?")
        ad = config.get("admission", {}).get("name", "?")
        k = config.get("admission", {}).get("k")
        wl = config.get("workload", {})
        lines.append(f"{wl.get('name', '')}: {sch} + {pl} + {ad}{'' if k is None else f' (k={k:g})'}, "
                     f"{config.get('cluster', {}).get('total_gpus', '?')} GPUs, mode {config.get('mode')}"
                     + (f" ({config.get('round_s'):g} s rounds)" if config.get("round_s") else "")
                     + f", seed {config.get('seed')}")
    for key, label, how in SUMMARY_ROWS:
        if key in summary:
            lines.append(f"  {label:<26} {_fmt(summary[key], how):>14}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.sweep:
        return run_sweep_cli(args)
    if args.workload is None:
        raise InstanceError("give a WORKLOAD (philly, pollux:N, synthetic or a file) or --sweep", field="workload")
    if args.seed < 0:
        raise InstanceError(f"must be an integer >= 0, got {args.seed}", field="seed")
    res = run_one(args.workload, scheduler=args.scheduler, placement=args.placement, admission=args.admission,
                  load=args.load, seed=args.seed, round_s=args.round_s, event=args.event, window=_window(args),
                  n_jobs=args.jobs, servers=args.servers, gpus_per_server=args.gpus_per_server, perf=args.perf,
                  restore_s=args.restore_s, philly_filter=args.philly_filter, philly_order=args.philly_order,
                  progress=not (args.no_progress or args.quiet), drain_h=args.drain_h)
    if not args.quiet:
        print(summary_table(res.summary, res.config))
    if args.output:
        res.save(args.output)
        if not args.quiet:
            print(f"results written to {args.output}")
    if args.plots:
        from ..sim.metrics import plot_jct_cdf, plot_timeline
        d = Path(args.plots)
        d.mkdir(parents=True, exist_ok=True)
        label = f"{res.config['scheduler'].get('name')}+{res.config['placement'].get('name')}"
        plot_jct_cdf({label: res}, d / "jct_cdf.png")
        plot_timeline(res, d / "timeline.png")
        if not args.quiet:
            print(f"plots written to {d}/jct_cdf.png and {d}/timeline.png")
    return 0


# -- sweep -----------------------------------------------------------------------------------------------------
_FRAME = None


def _philly_frame(order: str):
    global _FRAME
    if _FRAME is None or _FRAME[0] != order:
        from ..sim.traces import load_philly
        _FRAME = (order, load_philly(order=order))
    return _FRAME[1]


def _sweep_task(task: dict) -> dict:
    """One grid point (runs in a worker process): summary row plus the tracked JCTs for the CDF."""
    import numpy as np
    kw = dict(task["kw"])
    if task["spec"] == "philly":
        kw["philly_frame"] = _philly_frame(kw.get("philly_order", "file"))
    res = run_one(task["spec"], scheduler=task["scheduler"], placement=task["placement"],
                  admission=task["admission"], load=task["load"], **kw)
    s = res.summary
    row = {"scheduler": task["scheduler"], "placement": task["placement"], "admission": task["admission"],
           "load": task["load"]}
    # lower bound on the average JCT when a horizon cut some tracked jobs: they count as completing at the end
    tr = res.jobs[res.jobs["tracked"]]
    end = float(s.get("end_s") or 0.0)
    lb = np.where(tr["completion_s"].isna(), end - tr["arrival_s"], tr["jct_s"])
    row["avg_jct_lb_s"] = float(np.mean(lb)) if len(lb) else None
    for key in ("tracked", "finished_tracked", "avg_jct_s", "p50_jct_s", "p90_jct_s", "p99_jct_s",
                "avg_responsiveness_s", "makespan_s", "mean_utilisation", "mean_queue", "preemptions", "events",
                "wall_s", "events_per_s"):
        row[key] = s.get(key)
    jct, _ = res.jct_cdf()
    return {"row": row, "jct": np.asarray(jct, dtype=float)}


def sweep(spec: str, schedulers: Sequence[str], placements: Sequence[str], admissions: Sequence[str],
          loads: Sequence[float], *, workers: int = 1, progress: bool = True, **run_kw: Any):
    """Run the grid; returns ``(table, cdfs)``: a DataFrame with one row per run (sorted as the grid) and
    ``{(scheduler, placement, admission, load): sorted tracked JCTs}``. Policy names are validated before any
    run starts. ``run_kw`` goes to :func:`run_one` (seed, servers, window, ...)."""
    import pandas as pd
    from ..sim.policies import build_admission, build_placement, build_policy

    for s in schedulers:
        build_policy(s, "consolidated")
    for p in placements:
        build_placement(p)
    for a in admissions:
        build_admission(a)
    if not (schedulers and placements and admissions and loads):
        raise InstanceError("the grid is empty: give at least one scheduler, placement, admission and load",
                            field="sweep")
    tasks = [{"spec": spec, "scheduler": s, "placement": p, "admission": a, "load": float(L), "kw": run_kw}
             for s in schedulers for p in placements for a in admissions for L in loads]
    # longest first (high load, preemptive policies) for a better spread over the workers
    order = sorted(range(len(tasks)), key=lambda i: (-tasks[i]["load"], tasks[i]["scheduler"] == "fifo"))
    results: dict[int, dict] = {}
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(tasks), unit="run", desc="sweep", file=sys.stderr)
    try:
        if workers > 1 and len(tasks) > 1:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor, as_completed
            ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
            with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as ex:
                futs = {ex.submit(_sweep_task, tasks[i]): i for i in order}
                for f in as_completed(futs):
                    results[futs[f]] = f.result()
                    if bar is not None:
                        bar.update(1)
        else:
            for i in order:
                results[i] = _sweep_task(tasks[i])
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    table = pd.DataFrame([results[i]["row"] for i in range(len(tasks))])
    cdfs = {(t["scheduler"], t["placement"], t["admission"], t["load"]): results[i]["jct"]
            for i, t in enumerate(tasks)}
    return table, cdfs


def _combo(row) -> str:
    return f"{row['scheduler']}+{row['placement']}+{row['admission']}"


def markdown_table(table, title: str = "", notes: Iterable[str] = ()) -> str:
    """Markdown of a sweep table: hours for times, one row per run."""
    cols = [("scheduler", "scheduler"), ("placement", "placement"), ("admission", "admission"),
            ("load", "load (jobs/h)"), ("avg_jct_s", "avg JCT (h)"), ("p50_jct_s", "p50 JCT (h)"),
            ("p99_jct_s", "p99 JCT (h)"), ("avg_jct_lb_s", "avg JCT incl. unfinished, lower bound (h)"),
            ("avg_responsiveness_s", "avg responsiveness (h)"),
            ("mean_utilisation", "mean util."), ("preemptions", "preemptions"),
            ("finished_tracked", "tracked done"), ("wall_s", "wall (s)")]
    out = []
    if title:
        out += [f"# {title}", ""]
    out += list(notes)
    if notes:
        out.append("")
    out.append("| " + " | ".join(h for _, h in cols) + " |")
    out.append("|" + "---|" * len(cols))
    for _, r in table.iterrows():
        cells = []
        for key, _h in cols:
            v = r.get(key)
            if v is None or (isinstance(v, float) and math.isnan(v)):
                cells.append("-")
            elif key.endswith("_s") and key != "wall_s":
                cells.append(f"{v / 3600:.2f}")
            elif key == "mean_utilisation":
                cells.append(f"{v:.3f}")
            elif key == "wall_s":
                cells.append(f"{v:.1f}")
            elif key == "load":
                cells.append(f"{v:g}")
            elif isinstance(v, float) and v.is_integer():
                cells.append(str(int(v)))
            else:
                cells.append(str(v))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def plot_cdfs(cdfs: dict, load: float, path, title: str) -> None:
    """JCT CDF of every combination at one load."""
    import numpy as np
    from ..sim.metrics import _plt, _save
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    for (s, p, a, L), jct in cdfs.items():
        if L != load or len(jct) == 0:
            continue
        y = np.arange(1, len(jct) + 1) / len(jct)
        ax.step(np.asarray(jct) / 3600, y, where="post", label=f"{s}+{p}+{a}")
    ax.set_xscale("log")
    ax.set_xlabel("JCT (hours)")
    ax.set_ylabel("fraction of tracked jobs")
    ax.set_title(title)
    ax.legend(fontsize=7)
    _save(fig, path)


def write_sweep(table, cdfs, out_dir, name: str = "sweep", title: str = "Sweep (our simulator)",
                notes: Iterable[str] = (), cdf_load: float | None = None) -> list[Path]:
    """Write ``<name>.md``, ``<name>.csv``, ``<name>_jct_vs_load.png``, ``<name>_responsiveness_vs_load.png``
    and ``<name>_jct_cdf.png`` (at ``cdf_load``, default the highest load) to ``out_dir``, atomically."""
    from ..io import atomic_open
    from ..sim.metrics import plot_vs_load

    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    t = table.copy()
    t["combination"] = [_combo(r) for _, r in t.iterrows()]
    paths = [d / f"{name}.md", d / f"{name}.csv", d / f"{name}_jct_vs_load.png",
             d / f"{name}_responsiveness_vs_load.png", d / f"{name}_jct_cdf.png"]
    with atomic_open(paths[0], "w", encoding="utf-8") as fh:
        fh.write(markdown_table(table, title, notes))
    with atomic_open(paths[1], "w", encoding="utf-8", newline="") as fh:
        table.to_csv(fh, index=False)
    plot_vs_load(t, paths[2], metric="avg_jct_s", by="combination", title=f"{title}: average JCT vs load")
    plot_vs_load(t, paths[3], metric="avg_responsiveness_s", by="combination",
                 title=f"{title}: responsiveness vs load")
    L = max(table["load"]) if cdf_load is None else cdf_load
    plot_cdfs(cdfs, L, paths[4], f"{title}: JCT CDF at {L:g} jobs/h")
    return paths


def run_sweep_cli(args: argparse.Namespace) -> int:
    spec = args.workload or "philly"
    if args.seed < 0:
        raise InstanceError(f"must be an integer >= 0, got {args.seed}", field="seed")
    scheds, places, adms = parse_list(args.schedulers), parse_list(args.placements), parse_list(args.admissions)
    loads = parse_loads(args.loads)
    run_kw = dict(seed=args.seed, round_s=args.round_s, event=args.event, window=_window(args), n_jobs=args.jobs,
                  servers=args.servers, gpus_per_server=args.gpus_per_server, perf=args.perf,
                  restore_s=args.restore_s, philly_filter=args.philly_filter, philly_order=args.philly_order,
                  drain_h=args.drain_h)
    t0 = time.perf_counter()
    table, cdfs = sweep(spec, scheds, places, adms, loads, workers=args.workers,
                        progress=not (args.no_progress or args.quiet), **run_kw)
    notes = [f"Our simulator's numbers. Workload `{spec}`, seed {args.seed}, "
             f"{args.servers} servers x {args.gpus_per_server} GPUs, "
             + ("event-driven" if args.event else f"{args.round_s:g} s rounds")
             + f"; grid: schedulers {','.join(scheds)} x placements {','.join(places)} x admissions "
             f"{','.join(adms)} x loads {args.loads} (jobs/hour). Wall time of the sweep: "
             f"{time.perf_counter() - t0:.1f} s with {args.workers} worker(s)."]
    paths = write_sweep(table, cdfs, args.out, args.name, title=f"Sweep on {spec} (our simulator)", notes=notes)
    if not args.quiet:
        print(markdown_table(table))
        print("written: " + ", ".join(str(p) for p in paths))
    return 0
