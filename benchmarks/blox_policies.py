"""Blox's policy comparison (paper 002, section 4.2, Figs. 6-7) in our simulator: FIFO, LAS, SRTF and Tiresias with
consolidated placement on the Philly trace at 1..9 jobs/hour on 128 GPUs (32 servers x 4), jobs 3000-4000 tracked;
and the admission study (Fig. 12): LAS with Accept-all / Accept 1.0x, 1.2x, 1.4x, 1.5x at 8 jobs/hour.

Run: ``.venv/bin/python benchmarks/blox_policies.py [--quick] [--workers 2] [--dask local|tcp://HOST:PORT]
[--no-admission] [--seeds 0]`` (grids run through ``optsched.experiments.sweep``; with several seeds the tables
give the mean over seeds).
Writes ``docs/results/blox_policies.{md,csv}``, ``blox_policies_jct_quantiles.csv`` (every run's tracked-job JCT
quantiles 0-100 % at the highest load) and plots ``blox_policies_{jct,responsiveness}_vs_load.png``,
``blox_policies_jct_cdf.png`` (drawn from the quantile table; ``--cdf-only`` runs just that load, ``--replot``
redraws every figure from the committed CSVs), ``blox_admission.{md,csv}`` (``*_quick`` names with ``--quick``: a
smoke run on 4 GPUs (one server) at loads 1 and 2 jobs/hour with jobs 300-399 tracked), atomically.

Workload: ``optsched.generators.workload.philly_workload`` (Blox's filter, Poisson re-timing with the same seed at every
load, uniform Table 2 models; rules in docs/algorithms/blox.md). Each run stops once every tracked job is done.
Profiled constant iteration time with the cross-server factor 1.25; 300 s rounds; no restore overhead.
Runs stop at a horizon of ``--drain-h`` (2000) simulated hours after the last tracked arrival: LAS at overload
starves a few long tracked jobs until the trace ends (thousands of hours; see blox.md).
Tiresias: two queues, threshold 3600 GPU-seconds (our default; Blox's value is not given in the paper).
All numbers are OUR simulator's; the paper's figures have no published values (digest 002, section 5 gives only
the qualitative picture, which the results file checks one statement at a time).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

import pandas as pd  # noqa: E402

from optsched.experiments import executor, markdown_table, sweep, write_sweep  # noqa: E402
from optsched.io import atomic_open  # noqa: E402

RESULTS = ROOT / "docs" / "results"
SCHEDULERS = ("fifo", "las", "srtf", "tiresias")
ADMISSIONS = ("accept-all", "accept-1.5", "accept-1.4", "accept-1.2", "accept-1.0")


def mode_text(mode: str) -> str:
    """Which Philly mode ran, in words (every result says it)."""
    if mode == "blox":
        return ("BLOX'S MODE (`philly:blox`, as Blox's simulator_simple.py runs by default: synthetic run times, "
                "80 % 60*10^U(1.5,3) s and 20 % 60*10^U(3,4) s, one GPU per job, Blox's run-time filter, "
                "integer-second Poisson gaps)")
    return "OUR MODE (`philly`: the trace's run times and GPU counts, Blox's filter, Poisson arrivals)"


def pivot_md(table: pd.DataFrame, metric: str, label: str) -> str:
    """Loads x schedulers, hours. A run cut by the horizon shows ``value* (lb)``: the average over the finished
    tracked jobs, then the lower bound counting the unfinished ones as completing at the horizon."""
    scheds = [s for s in SCHEDULERS if s in set(table["scheduler"])]
    lines = ["| load (jobs/h) | " + " | ".join(f"{s} {label}" for s in scheds) + " |",
             "|" + "---|" * (len(scheds) + 1)]
    for load in sorted(set(table["load"])):
        cells = []
        for sch in scheds:
            r = table[(table["load"] == load) & (table["scheduler"] == sch)]
            if r.empty or pd.isna(r[metric].iloc[0]):
                cells.append("-")
                continue
            r = r.iloc[0]
            v = f"{r[metric] / 3600:.2f}"
            if r["finished_tracked"] < r["tracked"]:
                v += f"* ({int(r['tracked'] - r['finished_tracked'])} unfinished"
                v += f"; lb {r['avg_jct_lb_s'] / 3600:.2f})" if metric == "avg_jct_s" else ")"
            cells.append(v)
        lines.append(f"| {load:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def checks(table: pd.DataFrame) -> list[str]:
    """The digest's section-5 statements about FIFO and Tiresias, tested on our numbers (Optimus is not
    part of this grid, so the statements about it are left out)."""
    jct = table.pivot_table(index="load", columns="scheduler", values="avg_jct_s", aggfunc="first")
    resp = table.pivot_table(index="load", columns="scheduler", values="avg_responsiveness_s", aggfunc="first")
    high = [L for L in jct.index if L > 7]
    hl = "loads > 7"
    if not high:  # quick runs: the highest load stands in for "high load"
        high, hl = [max(jct.index)], f"the highest load ({max(jct.index):g})"
    out = []
    if high and {"fifo", "tiresias"} <= set(jct.columns):
        ok = [L for L in high if jct.loc[L, "tiresias"] > jct.loc[L, "fifo"]]
        out.append(f"* Blox: above 7 jobs/h Tiresias has a higher average JCT than FIFO. Ours: true at "
                   f"{len(ok)} of {len(high)} {hl} ({', '.join(f'{L:g}' for L in ok) or 'none'}).")
        if "las" in jct.columns:
            # Blox's repository Tiresias (tiresias.py) builds its queues but returns the plain LAS order (digest
            # section 2): the paper's Tiresias curve may be that code's, i.e. our LAS
            ok = [L for L in high if jct.loc[L, "las"] > jct.loc[L, "fifo"]]
            out.append(f"* The same statement for Blox's repository Tiresias, which returns the plain LAS order "
                       f"(digest section 2), i.e. our LAS: true at {len(ok)} of {len(high)} {hl} "
                       f"({', '.join(f'{L:g}' for L in ok) or 'none'}).")
        ok = [L for L in high if resp.loc[L, "tiresias"] < resp.loc[L, "fifo"]]
        out.append(f"* Blox: above 7 jobs/h Tiresias is more responsive than FIFO. Ours: true at {len(ok)} of "
                   f"{len(high)} {hl}.")
        worst = [L for L in high if resp.loc[L].idxmax() == "fifo"]
        out.append(f"* Blox: FIFO has the worst responsiveness under high load. Ours: FIFO is the least responsive "
                   f"of {', '.join(resp.columns)} at {len(worst)} of {len(high)} {hl}.")
    low = [L for L in jct.index if L < 4]
    if low:
        spread = [(resp.loc[L].max() - resp.loc[L].min()) / 3600 for L in low]
        out.append("* Blox: below 4 jobs/h the policies are similarly responsive. Ours: spread of average "
                   "responsiveness across policies at loads < 4: "
                   + ", ".join(f"{L:g}: {s:.2f} h" for L, s in zip(low, spread)) + ".")
    return out


QUANTILE_LEVELS = [round(k / 100, 2) for k in range(101)]   # 0 %, 1 %, ..., 100 % of the tracked jobs' JCTs
AXES = ["scheduler", "placement", "admission", "load"]


def jct_quantiles(result, load: float) -> pd.DataFrame:
    """Each run's tracked-job JCT quantiles at ``load`` (one row per scheduler, seed and level 0-100 %: small
    enough to commit, enough to redraw the CDF without a rerun). ``jobs`` is how many tracked jobs finished (the
    CDF is over those; an unfinished one is left out, as in the averages)."""
    import numpy as np

    rows = []
    for key, jct in result.cdfs.items():
        point = dict(zip(result.axes, key[:-1]))
        if float(point.get("load", load)) != float(load) or not len(jct):
            continue
        values = np.quantile(np.asarray(jct, dtype=float), QUANTILE_LEVELS)
        rows += [{"scheduler": point["scheduler"], "load": float(load), "seed": int(key[-1]), "jobs": len(jct),
                  "q": q, "jct_s": round(float(v), 3)} for q, v in zip(QUANTILE_LEVELS, values)]
    return pd.DataFrame(rows, columns=["scheduler", "load", "seed", "jobs", "q", "jct_s"])


def write_quantiles(result, sfx: str, load: float) -> Path:
    path = RESULTS / f"blox_policies{sfx}_jct_quantiles.csv"
    with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
        jct_quantiles(result, load).to_csv(fh, index=False)
    return path


def plot_cdf(sfx: str, mode: str, path: Path | None = None):
    """The JCT CDF of every policy at the quantile table's load, from ``blox_policies<sfx>_jct_quantiles.csv``:
    the mean over seeds of each quantile, its 95 % bootstrap interval over seeds as a band
    (``optsched.plot.plot_quantile_cdfs``). Returns the axes (written to ``path`` when given)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from optsched.experiments import seed_text
    from optsched.plot import plot_quantile_cdfs, save_axes

    q = pd.read_csv(RESULTS / f"blox_policies{sfx}_jct_quantiles.csv")
    order = [s for s in SCHEDULERS if s in set(q["scheduler"])]
    q = q.set_index("scheduler").loc[order].reset_index()
    seeds = sorted(set(q["seed"]))
    load = float(q["load"].iloc[0])
    fig, ax = plt.subplots(figsize=(6.4, 4))
    plot_quantile_cdfs(q, "scheduler", ax, ylabel="fraction of tracked jobs finished",
                       title=f"Blox policy comparison on Philly, {mode} mode (our simulator): JCT CDF at {load:g} "
                             f"jobs/h, mean of each quantile over seeds {seed_text(seeds)}")
    if path is not None:
        save_axes(ax, path)
    return ax


def rewrite_tables(sfx: str) -> list[Path]:
    """Rewrite ``blox_policies<sfx>_summary.csv`` and the "Every run" table of ``blox_policies<sfx>.md`` from the
    committed runs (``blox_policies<sfx>.csv``), with the intervals ``optsched.experiments.summarise`` gives
    today; the text above the table (command, wall time, the checks) is kept as it was written."""
    from optsched.experiments import SweepResult

    name = f"blox_policies{sfx}"
    runs = pd.read_csv(RESULTS / f"{name}.csv")
    result = SweepResult(runs=runs, axes=[a for a in AXES if a in runs.columns], cdfs={})
    md = RESULTS / f"{name}.md"
    head, sep, _ = md.read_text(encoding="utf-8").partition("## Every run\n\n")
    if not sep:
        raise SystemExit(f"{md} has no '## Every run' section to rewrite")
    with atomic_open(md, "w", encoding="utf-8") as fh:
        fh.write(head + sep + markdown_table(result))
    with atomic_open(RESULTS / f"{name}_summary.csv", "w", encoding="utf-8", newline="") as fh:
        result.summary().to_csv(fh, index=False)
    return [md, RESULTS / f"{name}_summary.csv"]


def replot(sfx: str, mode: str) -> list[Path]:
    """Redraw ``blox_policies<sfx>_{jct,responsiveness}_vs_load.png`` from the committed runs in the site's style
    (the tidy summary and the "Every run" table rewritten first, ``rewrite_tables``), and
    ``blox_policies<sfx>_jct_cdf.png`` from the committed quantile table when there is one."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from optsched.experiments import seed_text
    from optsched.plot import plot_vs_load, save_axes

    name = f"blox_policies{sfx}"
    paths = rewrite_tables(sfx)
    summary = pd.read_csv(RESULTS / f"{name}_summary.csv")
    runs = pd.read_csv(RESULTS / f"{name}.csv")
    seeds = sorted(set(runs["seed"])) if "seed" in runs.columns else [0]
    band = ", mean and 95 % bootstrap interval over seeds" if len(seeds) > 1 else ""
    title = f"Blox policy comparison on Philly, {mode} mode (our simulator)"
    for metric, stem, label in (("avg_jct_s", "jct_vs_load", "average JCT"),
                                ("avg_responsiveness_s", "responsiveness_vs_load", "responsiveness")):
        t = summary[summary["metric"] == metric]
        fig, ax = plt.subplots(figsize=(6, 4))
        plot_vs_load(t, ax, metric=metric, by="scheduler",
                     title=f"{title}: {label} vs load, seeds {seed_text(seeds)}{band}")
        save_axes(ax, RESULTS / f"{name}_{stem}.png")
        paths.append(RESULTS / f"{name}_{stem}.png")
    if (RESULTS / f"{name}_jct_quantiles.csv").exists():
        plot_cdf(sfx, mode, RESULTS / f"{name}_jct_cdf.png")
        paths.append(RESULTS / f"{name}_jct_cdf.png")
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="4 GPUs, window 300-400, loads 1 and 2; *_quick files")
    ap.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    ap.add_argument("--dask", default=None, help="'local' (a LocalCluster) or a Dask scheduler address")
    ap.add_argument("--seeds", default="0", help="comma list of seeds (default 0); tables show means over seeds")
    ap.add_argument("--no-admission", action="store_true", help="skip the admission study")
    ap.add_argument("--admission-only", action="store_true", help="only the admission study")
    ap.add_argument("--loads", default=None, help="override the loads, e.g. 1,5,9")
    ap.add_argument("--mode", choices=("ours", "blox"), default="ours",
                    help="Philly mode: ours (trace run times and GPUs, jobs 3000-3999) or blox (Blox's code: "
                         "synthetic run times, one GPU, integer gaps, jobs 3000..4000 inclusive); blox writes "
                         "*_bloxmode files")
    ap.add_argument("--drain-h", type=float, default=2000.0,
                    help="stop each run this many simulated hours after the last tracked arrival (default 2000)")
    ap.add_argument("--admissions", default=",".join(ADMISSIONS),
                    help="admission variants of the study (default all; without accept-all the baseline row is "
                         "taken from blox_policies.csv, LAS at the same load)")
    ap.add_argument("--replot", action="store_true",
                    help="only redraw the figures of --mode from the committed CSVs (runs and JCT quantiles) and "
                         "rewrite the summary and the 'Every run' table with today's intervals")
    ap.add_argument("--cdf-only", action="store_true",
                    help="only run the highest load (or --loads) for every seed, write the JCT quantile table "
                         "blox_policies[_bloxmode]_jct_quantiles.csv and draw the CDF from it")
    args = ap.parse_args(argv)
    blox = args.mode == "blox"
    if args.replot:
        for p in replot("_bloxmode" if blox else "", args.mode):
            print(p)
        return 0
    # Blox's mode tracks its inclusive window (3000..4000: 1,001 jobs; quick 300..400)
    window = ((300, 401) if blox else (300, 400)) if args.quick else ((3000, 4001) if blox else (3000, 4000))
    if args.loads:
        loads = [float(x) for x in args.loads.split(",")]
    else:
        loads = [1.0, 2.0] if args.quick else [float(x) for x in range(1, 10)]
    sfx = ("_bloxmode" if blox else "") + ("_quick" if args.quick else "")
    servers = 1 if args.quick else 32
    seeds = [int(x) for x in args.seeds.split(",")]
    args.seed = ",".join(map(str, seeds))
    run_kw = dict(workload="philly:blox" if blox else "philly", window=window, servers=servers, gpus_per_server=4,
                  drain_h=args.drain_h)
    RESULTS.mkdir(parents=True, exist_ok=True)
    given = list(sys.argv[1:] if argv is None else argv)
    cmd = "`.venv/bin/python benchmarks/blox_policies.py" + "".join(" " + a for a in given) + "`"

    if args.cdf_only:
        load = max(loads)
        with executor(args.dask, args.workers) as ex:
            result = sweep({**run_kw, "scheduler": list(SCHEDULERS), "placement": ["consolidated"],
                            "admission": ["accept-all"], "load": [load]}, seeds=seeds, executor=ex)
        print(write_quantiles(result, sfx, load))
        if not args.quick:
            plot_cdf(sfx, args.mode, RESULTS / f"blox_policies{sfx}_jct_cdf.png")
        print(result.wide()[["scheduler", "avg_jct_s", "finished_tracked"]].to_string())
        return 0
    if not args.admission_only:
        t0 = time.perf_counter()
        with executor(args.dask, args.workers) as ex:
            result = sweep({**run_kw, "scheduler": list(SCHEDULERS), "placement": ["consolidated"],
                            "admission": ["accept-all"], "load": loads}, seeds=seeds, executor=ex)
        table = result.wide()
        wall = time.perf_counter() - t0
        notes = [
            f"Our simulator's numbers, not the paper's. Command: {cmd} (seed {args.seed}, {args.workers} workers, "
            f"{wall:.0f} s). Philly trace in {mode_text(args.mode)}, jobs {window[0]}-{window[1] - 1} "
            f"tracked (inclusive), {servers * 4} GPUs ({servers} x 4), consolidated placement, accept-all, "
            "300 s rounds, "
            "constant iteration time (cross-server factor 1.25), Tiresias threshold 3600 GPU-s. Each run stops when "
            "every tracked job "
            f"is done or {args.drain_h:g} simulated hours after the last tracked arrival, whichever is first; "
            "a `*` marks runs with unfinished tracked jobs (the average is over the finished ones; `lb` counts the "
            "unfinished as completing at the horizon, a lower bound on the true average).",
            "",
            "## Average JCT (hours)", "", pivot_md(table, "avg_jct_s", "JCT"), "",
            "## Average responsiveness (hours; first start - arrival)", "",
            pivot_md(table, "avg_responsiveness_s", "resp."), "",
            "## The digest's section-5 picture, statement by statement", "", *checks(table), "",
            "## Every run", "",
        ]
        paths = write_sweep(result, RESULTS, f"blox_policies{sfx}",
                            title=f"Blox policy comparison on Philly, {args.mode} mode (our simulator)", notes=notes)
        paths.append(write_quantiles(result, sfx, max(loads)))
        if not args.quick:
            paths += replot(sfx, args.mode)   # the site's style: display names, the CDF from the quantile table
        print("\n".join(notes[:-2]))
        print("written: " + ", ".join(str(p) for p in paths))

    if not args.no_admission:
        load = 2.0 if args.quick else 8.0
        t0 = time.perf_counter()
        adms = [a.strip() for a in args.admissions.split(",") if a.strip()]
        with executor(args.dask, args.workers) as ex:
            result = sweep({**run_kw, "scheduler": ["las"], "placement": ["consolidated"], "admission": adms,
                            "load": [load]}, seeds=seeds, executor=ex)
        table = result.wide()
        wall = time.perf_counter() - t0
        prev_csv = RESULTS / f"blox_policies{sfx}.csv"
        if "accept-all" not in adms and prev_csv.exists():
            prev = pd.read_csv(prev_csv)
            row = prev[(prev["scheduler"] == "las") & (prev["load"] == load)
                       & (prev["admission"] == "accept-all")]
            if "seed" in prev.columns:  # files of earlier versions hold one seed and no seed column
                row = row[row["seed"].isin(seeds)]
            base_row = row.groupby(["scheduler", "placement", "admission", "load"], as_index=False).mean(
                numeric_only=True)
            table = pd.concat([base_row.reindex(columns=table.columns), table], ignore_index=True)
        has_base = (table["admission"] == "accept-all").any()
        base = table.loc[table["admission"] == "accept-all", "avg_jct_s"].iloc[0] if has_base else float("nan")
        base_r = (table.loc[table["admission"] == "accept-all", "avg_responsiveness_s"].iloc[0] if has_base
                  else float("nan"))
        lines = [
            f"# Admission study: LAS + FIFO admission (Accept k x) on Philly at {load:g} jobs/h (our simulator)", "",
            f"Our simulator's numbers. Command: {cmd} (seed {args.seed}, {wall:.0f} s); Philly in "
            f"{mode_text(args.mode)}; setting as in blox_policies{sfx}.md. Blox (Fig. 12 caption): Accept 1.5x "
            "5% faster, 1.2x 15% faster, 1.0x 30% faster "
            "than Accept-all in average JCT, responsiveness worse.", "",
            "| admission | avg JCT (h) | JCT change vs accept-all | avg responsiveness (h) | responsiveness change |"
            " preemptions |",
            "|---|---|---|---|---|---|",
        ]
        for _, r in table.iterrows():
            lines.append(f"| {r['admission']} | {r['avg_jct_s'] / 3600:.2f} | "
                         f"{100 * (r['avg_jct_s'] / base - 1):+.1f}% | {r['avg_responsiveness_s'] / 3600:.2f} | "
                         f"{100 * (r['avg_responsiveness_s'] / base_r - 1):+.1f}% | {int(r['preemptions'])} |")
        out = RESULTS / f"blox_admission{sfx}.md"
        with atomic_open(out, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n\n## Every run\n\n" + markdown_table(result))
        with atomic_open(RESULTS / f"blox_admission{sfx}.csv", "w", encoding="utf-8", newline="") as fh:
            result.runs.to_csv(fh, index=False)
        print("\n".join(lines))
        print(f"written {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
