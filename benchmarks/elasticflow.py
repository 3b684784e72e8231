"""ElasticFlow (NSDI '23) and its baselines in OUR simulator, beside DRS, NoRM and paper 003's baselines, with the
energy upper bound; and the CPU time of the ElasticFlow family on 2,000 GPUs against LAS (issue 29).

Run: ``.venv/bin/python benchmarks/elasticflow.py [--quick] [--seeds N] [--out DIR]
[--ef-trace PATH/elasticVpollux_e.csv --ef-throughputs PATH/throughputs_T4]``.
Full run: writes ``docs/results/elasticflow.md`` and ``elasticflow.csv`` atomically. ``--quick`` (2 seeds,
small timing workload, short bound solves) writes the same names into a temporary folder (or ``--out DIR``),
never into ``docs/results``. ``--ef-trace`` adds a table for ElasticFlow's public trace read from the given path
(never copied into the repository).

Workloads: paper 003's default trace (``deadline_workload``: 4 x 4 GPUs, lambda 4/h over 24 h, ring model,
OUR profiles) and a workload of ElasticFlow's kind (``elasticflow_shaped_workload``: 200 jobs on 16 x 4 GPUs,
OUR made-up measured-style tables with non-monotone rows, explicit deadlines 0.5-1.5 x the run time on the
requested count, offered load 3). Event mode, no rescaling overhead. Every number is OUR simulator's or OUR
solver's.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from optsched.exact.deadline import deadline_upper_bound  # noqa: E402
from optsched.generators.deadline import deadline_workload, elasticflow_shaped_workload  # noqa: E402
from optsched.io import atomic_open  # noqa: E402
from optsched.sim import simulate  # noqa: E402

RESULTS = ROOT / "docs" / "results"
EF_FAMILY = ("elasticflow", "elasticflow-noadmit", "edf-elastic", "edf-admission", "gandiva-ts",
             "elasticflow-fixed")
PAPER_003 = ("drs", "norm", "edf", "deadline-fifo", "themis", "las")
POLICIES = EF_FAMILY + PAPER_003
LABELS = {"elasticflow": "ElasticFlow (re-planning)", "elasticflow-noadmit": "ElasticFlow w/o admission",
          "edf-elastic": "elastic EDF (ElasticFlow's)", "edf-admission": "EDF + admission (ElasticFlow's)",
          "gandiva-ts": "Gandiva-style time slicing", "elasticflow-fixed": "ElasticFlow-style, fixed reservations",
          "drs": "DRS", "norm": "NoRM", "edf": "EDF (paper 003: whole cluster)",
          "deadline-fifo": "FIFO (paper 003)", "themis": "Themis (paper 003's simplification)",
          "las": "LAS (requested GPUs)"}


def run_grid(name: str, build, seeds: list[int], bound_s: float, log) -> pd.DataFrame:
    rows = []
    for seed in seeds:
        wl = build(seed)
        t = time.process_time()
        b = deadline_upper_bound(wl, time_limit=bound_s, seed=0)
        n = sum(1 for j in wl.jobs if not j.best_effort)
        rows.append({"workload": name, "seed": seed, "policy": "upper-bound", "r_trace": b.value / n,
                     "deadlines_met": b.value, "declined": math.nan, "migrations": math.nan,
                     "cpu_s": time.process_time() - t, "bound_status": b.status.value})
        for p in POLICIES:
            t = time.process_time()
            r = simulate(wl, scheduler=p)
            m = r.custom["deadline"]
            rows.append({"workload": name, "seed": seed, "policy": p, "r_trace": m["r_trace"],
                         "deadlines_met": m["deadlines_met"], "declined": m["declined"],
                         "migrations": m["migrations"], "cpu_s": time.process_time() - t, "bound_status": ""})
        log(f"{name} seed {seed}: " + ", ".join(f"{r['policy']} {r['r_trace']:.3f}" for r in rows[-len(POLICIES) - 1:]))
    return pd.DataFrame(rows)


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["workload", "policy"], sort=False)
    out = g.agg(r_mean=("r_trace", "mean"), r_sd=("r_trace", "std"), n=("r_trace", "size"),
                declined=("declined", "mean"), migrations=("migrations", "mean"), cpu_s=("cpu_s", "mean"))
    out["r_ci"] = 1.96 * out["r_sd"].fillna(0) / np.sqrt(out["n"])
    return out.reset_index()


def timing(window_h: float, log) -> pd.DataFrame:
    """CPU seconds per job on 2,000 GPUs (500 x 4) at 250 jobs/h, each policy beside LAS in the same process."""
    wl = deadline_workload(lam=250, window_h=window_h, nodes=500, gpus_per_node=4, seed=0)
    rows = []
    for p in ("las", *EF_FAMILY):
        t = time.process_time()
        r = simulate(wl, scheduler=p)
        dt = time.process_time() - t
        rows.append({"policy": p, "jobs": len(wl), "cpu_s": dt, "ms_per_job": 1000 * dt / len(wl),
                     "r_trace": r.summary["r_trace"]})
        log(f"timing {p}: {dt:.2f} CPU-s")
    df = pd.DataFrame(rows)
    df["x_las"] = df["cpu_s"] / float(df.loc[df["policy"] == "las", "cpu_s"].iloc[0])
    return df


def ef_trace(trace: str, throughputs: str, log) -> pd.DataFrame:
    from optsched.problems.elasticflow import read_elasticflow_trace

    wl = read_elasticflow_trace(trace, throughputs)
    rows = []
    for p in POLICIES:
        t = time.process_time()
        m = simulate(wl, scheduler=p).custom["deadline"]
        rows.append({"policy": p, "deadlines_met": m["deadlines_met"], "r_trace": m["r_trace"],
                     "declined": m["declined"], "cpu_s": time.process_time() - t})
    b = deadline_upper_bound(wl, time_limit=30.0, seed=0)
    rows.append({"policy": "upper-bound", "deadlines_met": b.value, "r_trace": b.value / len(wl),
                 "declined": math.nan, "cpu_s": math.nan})
    log("Fig. 8a trace done")
    return pd.DataFrame(rows)


def table(s: pd.DataFrame, workload: str) -> list[str]:
    t = s[s["workload"] == workload]
    lines = ["| policy | deadline ratio (mean ± 95 % CI) | declined | migrations | CPU s per run |",
             "|---|---|---|---|---|"]
    for _, r in t.iterrows():
        name = "upper bound (energy relaxation)" if r["policy"] == "upper-bound" else LABELS[r["policy"]]
        code = "" if r["policy"] == "upper-bound" else f" `{r['policy']}`"
        dec = "" if math.isnan(r["declined"]) else f"{r['declined']:.1f}"
        mig = "" if math.isnan(r["migrations"]) else f"{r['migrations']:.0f}"
        lines.append(f"| {name}{code} | {r['r_mean']:.3f} ± {r['r_ci']:.3f} | {dec} | {mig} | {r['cpu_s']:.2f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 seeds, small timing run; writes to a temporary folder")
    ap.add_argument("--seeds", type=int, default=5, help="seeds per workload (default 5)")
    ap.add_argument("--out", default=None, help="output folder (default docs/results; --quick: a temporary one)")
    ap.add_argument("--ef-trace", default=None, help="ElasticFlow's trace CSV (e.g. its Fig. 8a elasticVpollux_e.csv)")
    ap.add_argument("--ef-throughputs", default=None, help="its throughput folder (e.g. scheduler/throughputs_T4)")
    args = ap.parse_args(argv)
    quick = args.quick
    out = Path(args.out) if args.out else (Path(tempfile.mkdtemp(prefix="ef_quick_")) if quick else RESULTS)
    out.mkdir(parents=True, exist_ok=True)
    seeds = list(range(2 if quick else args.seeds))

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    bound_s = 5.0 if quick else 30.0
    df = pd.concat([
        run_grid("paper-003-default", lambda s: deadline_workload(seed=s), seeds, bound_s, log),
        run_grid("elasticflow-shaped", lambda s: elasticflow_shaped_workload(200, seed=s), seeds, bound_s, log),
    ], ignore_index=True)
    s = summarise(df)
    tm = timing(1.0 if quick else 4.0, log)
    efd = ef_trace(args.ef_trace, args.ef_throughputs, log) if args.ef_trace else None

    piv = df[df["workload"] == "elasticflow-shaped"].pivot(index="seed", columns="policy", values="r_trace")
    gap = piv["elasticflow"] - piv["elasticflow-fixed"]
    room = piv["upper-bound"] - piv["elasticflow-fixed"]  # the most any schedule could gain over the fixed variant
    order = ((piv["elasticflow"] > piv["edf-elastic"]) & (piv["edf-elastic"] > piv["gandiva-ts"]))
    mean = s.set_index(["workload", "policy"])["r_mean"]
    ef, fixed = mean[("elasticflow-shaped", "elasticflow")], mean[("elasticflow-shaped", "elasticflow-fixed")]
    edf, gan = mean[("elasticflow-shaped", "edf-elastic")], mean[("elasticflow-shaped", "gandiva-ts")]
    las_ms = float(tm.loc[tm["policy"] == "las", "ms_per_job"].iloc[0])
    cmd = f".venv/bin/python benchmarks/elasticflow.py{' --quick' if quick else ''} --seeds {len(seeds)}"
    if args.ef_trace:  # the local path is not written: ElasticFlow's checkout lives outside the repository
        cmd += " --ef-trace EF/traces_for_ElasticFlow/elasticVpollux_e.csv --ef-throughputs EF/scheduler/throughputs_T4"
    md = [f"# ElasticFlow and its baselines: our simulator{' (QUICK run)' if quick else ''}", "",
          f"Produced by `{cmd}`. Every number is OUR simulator's (event mode, no rescaling overhead) or OUR "
          "solver's (the energy upper bound, `deadline_upper_bound`, proven for every schedule); none is "
          "ElasticFlow's paper's. Policies: `docs/algorithms/elasticflow.md`, `docs/algorithms/drs.md`.", "",
          "## Targets", "",
          f"* Re-planning ElasticFlow vs the fixed-reservation variant on the ElasticFlow-shaped workload: "
          f"{ef:.3f} vs {fixed:.3f} (mean over {len(seeds)} seeds; per seed "
          f"{', '.join(f'{g:+.3f}' for g in gap)}): the target (at least +0.25) is "
          f"**{'met' if ef - fixed >= 0.25 else 'not met'}** (mean gap {ef - fixed:+.3f}). The upper bound caps "
          f"what any schedule can add over the fixed variant: {room.mean():+.3f} on the mean (per seed "
          f"{', '.join(f'{g:+.3f}' for g in room)}).",
          f"* ElasticFlow > elastic EDF > Gandiva-style time slicing (the paper's ordering): on the means "
          f"{ef:.3f} > {edf:.3f} > {gan:.3f} **{'holds' if ef > edf > gan else 'does not hold'}**; per seed it "
          f"holds in {int(order.sum())} of {len(order)}.",
          f"* CPU time on 2,000 GPUs (500 x 4, 250 jobs/h, {int(tm['jobs'].iloc[0])} jobs), per job, beside LAS "
          f"({las_ms:.3f} ms/job) in the same process: "
          + ", ".join(f"`{r.policy}` {r.x_las:.1f}x" for r in tm.itertuples() if r.policy != "las")
          + f". Issue 29's target (the ElasticFlow family within 10x LAS) is "
          f"**{'met' if tm[tm['policy'] != 'las']['x_las'].max() <= 10 else 'not met'}**.", "",
          "## Paper 003's default trace (4 x 4 GPUs, ring model, 24 h at 4 jobs/h)", "",
          *table(s, "paper-003-default"), "",
          "## A workload of ElasticFlow's kind (200 jobs, 16 x 4 GPUs, measured-style tables)", "",
          *table(s, "elasticflow-shaped"), "",
          "## CPU time on 2,000 GPUs", "",
          "| policy | jobs | CPU s | ms per job | x LAS | deadline ratio |", "|---|---|---|---|---|---|",
          *[f"| `{r.policy}` | {r.jobs} | {r.cpu_s:.2f} | {r.ms_per_job:.3f} | {r.x_las:.1f} | {r.r_trace:.3f} |"
            for r in tm.itertuples()], ""]
    if efd is not None:
        md += ["## ElasticFlow's public Fig. 8a trace (read from a local checkout, 16 x 4 GPUs, its T4 tables)", "",
               "| policy | deadlines met | ratio | declined | CPU s |", "|---|---|---|---|---|",
               *[f"| {LABELS.get(r.policy, 'upper bound')} `{r.policy}` | {r.deadlines_met:g} | {r.r_trace:.3f} | "
                 f"{'' if math.isnan(r.declined) else int(r.declined)} | "
                 f"{'' if math.isnan(r.cpu_s) else f'{r.cpu_s:.2f}'} |" for r in efd.itertuples()], ""]
    md += ["Notes: a declined job never runs and counts as missed. Best-effort jobs (none here) would be left out of "
           "the ratio. LAS runs each job on the GPUs it requests (format 2: the count it asked for; paper 003's "
           "jobs: the fewest that meet the deadline at arrival).", ""]
    with atomic_open(out / "elasticflow.md", encoding="utf-8") as fh:
        fh.write("\n".join(md))
    with atomic_open(out / "elasticflow.csv", encoding="utf-8", newline="") as fh:
        df.to_csv(fh, index=False)
    print(f"written to {out}/elasticflow.md and elasticflow.csv")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
