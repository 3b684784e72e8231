"""Experiments on the simulator: one run from a workload name (:func:`run_one`) and Blox's experiment sweeper
(:func:`sweep`: every scheduler x placement x admission x load, in worker processes; :func:`write_sweep`: the
Markdown table, CSV and plots).

The ``optsched simulate`` command (:mod:`optsched.commands.simulate`) and ``benchmarks/blox_policies.py`` are thin
layers over this module. Workers are forked processes for now (a later issue rebuilds the pool on executors).

>>> table, cdfs = sweep("synthetic", ["fifo", "srtf"], ["consolidated"], ["accept-all"], [4.0], n_jobs=6,
...                     servers=2, progress=False)
>>> table[["scheduler", "load", "finished_tracked"]].values.tolist()
[['fifo', 4.0, 6], ['srtf', 4.0, 6]]
"""

from __future__ import annotations

import math
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from .errors import InstanceError
from .io import atomic_open
from .io import progress as progress_bar
from .limits import require_memory
from .sim import simulate
from .sim.metrics import SimResult, plot_cdf_curves, plot_vs_load
from .sim.policies import build_admission, build_placement, build_policy
from .sim.traces import load_philly, resolve_workload

__all__ = ["markdown_table", "plot_cdfs", "run_one", "sweep", "write_sweep"]


# -- one run ---------------------------------------------------------------------------------------------------
def run_one(spec: str, *, scheduler: Any = "fifo", placement: Any = "consolidated", admission: Any = "accept-all",
            load: float | None = None, seed: int = 0, round_s: float = 300.0, event: bool = False,
            window: tuple[int, int] | None = None, n_jobs: int | None = None, servers: int = 32,
            gpus_per_server: int = 4, perf: Any = None, restore_s: float = 0.0, philly_filter: str = "blox",
            philly_order: str = "file", progress: bool = False, label: str | None = None, philly_frame=None,
            drain_h: float | None = None) -> SimResult:
    """Build the workload ``spec`` and simulate it; returns the :class:`~optsched.sim.metrics.SimResult`.
    Jobs too large for the cluster are dropped from generated traces (``max_gpus``); the run stops once every
    tracked job has finished (the later jobs only provide load, as in Blox), or, with ``drain_h``, at the
    horizon ``drain_h`` hours after the last tracked arrival (tracked jobs still running are then unfinished:
    ``summary['finished_tracked']`` says how many finished)."""
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


# a grid point: its summary row, its tracked JCTs for the CDF and the worker that ran it (estimate)
SIMULATION_BYTES = 200_000


# -- sweep -----------------------------------------------------------------------------------------------------
_FRAME: tuple[str, pd.DataFrame] | None = None   # the Philly trace, read once per (forked) process


def _philly_frame(order: str) -> pd.DataFrame:
    global _FRAME
    if _FRAME is None or _FRAME[0] != order:
        _FRAME = (order, load_philly(order=order))
    return _FRAME[1]


def _sweep_task(task: dict) -> dict:
    """One grid point (runs in a worker process): summary row plus the tracked JCTs for the CDF."""
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
    for s in schedulers:
        build_policy(s, "consolidated")
    for p in placements:
        build_placement(p)
    for a in admissions:
        build_admission(a)
    if not (schedulers and placements and admissions and loads):
        raise InstanceError("the grid is empty: give at least one scheduler, placement, admission and load",
                            field="sweep")
    n_tasks = len(schedulers) * len(placements) * len(admissions) * len(loads)
    require_memory(n_tasks, SIMULATION_BYTES, "simulations in the grid", field="sweep")
    tasks: list[dict[str, Any]] = [
        {"spec": spec, "scheduler": s, "placement": p, "admission": a, "load": float(L), "kw": run_kw}
        for s in schedulers for p in placements for a in admissions for L in loads]
    # longest first (high load, preemptive policies) for a better spread over the workers
    order = sorted(range(len(tasks)), key=lambda i: (-tasks[i]["load"], tasks[i]["scheduler"] == "fifo"))
    results: dict[int, dict] = {}
    bar = progress_bar(len(tasks), "sweep", "run") if progress else None
    try:
        if workers > 1 and len(tasks) > 1:
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
    curves = {f"{s}+{p}+{a}": jct for (s, p, a, L), jct in cdfs.items() if L == load and len(jct)}
    plot_cdf_curves(curves, path, title=title, ylabel="fraction of tracked jobs", fontsize=7)


def write_sweep(table, cdfs, out_dir, name: str = "sweep", title: str = "Sweep (our simulator)",
                notes: Iterable[str] = (), cdf_load: float | None = None) -> list[Path]:
    """Write ``<name>.md``, ``<name>.csv``, ``<name>_jct_vs_load.png``, ``<name>_responsiveness_vs_load.png``
    and ``<name>_jct_cdf.png`` (at ``cdf_load``, default the highest load) to ``out_dir``, atomically."""
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
