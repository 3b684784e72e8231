"""Gavel (issue 17) in our simulator: Gavel's max-min and makespan LPs realised round by round against FIFO, LAS and
Tiresias on a heterogeneous cluster fed by the Philly trace, over several seeds with 95 % intervals; and the cost
of one LP solve as the number of active jobs grows (target: under 100 ms for 1,000 jobs on 3 GPU types).

Run: ``.venv/bin/python benchmarks/gavel.py [--quick] [--seeds 5] [--load 5] [--out DIR]``.
Full run: writes ``docs/results/gavel.md`` and ``gavel_runs.csv``, ``gavel_lp.csv`` atomically. ``--quick`` (2
seeds, a smaller window, smaller LPs) writes the same names into a temporary folder (or ``--out DIR``), never
into ``docs/results``.

Setting: two clusters of Gavel's three types, ``V100:4x4,P100:4x4,K80:4x4`` (48 GPUs: light contention) and
``V100:2x4,P100:2x4,K80:2x4`` (24 GPUs: contended); workload
``philly_workload(load, seed, window=(300, 400), n_jobs=450, max_gpus=16)`` in OUR mode (the trace's run times
and GPU counts, Blox's filter, jobs up to 16 GPUs, Poisson arrivals; jobs 400-449 are load only, none arrive
after them; ``docs/algorithms/blox.md``); performance model
``HeteroPerf.for_cluster`` (OUR throughput table, ``optsched.perf.hetero``: every type speed is our estimate);
300 s rounds; each run stops when the tracked jobs are done. FIFO, LAS and Tiresias place with the type-aware
``consolidated`` placement (a job on one type, the best fit over all servers). Metrics over the tracked jobs:
average JCT, makespan, finish-time fairness rho (``optsched.sim.hetero.finish_time_fairness``: mean and worst).
Every number is OUR simulator's and OUR solvers'.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

from optsched.cluster import parse_cluster  # noqa: E402
from optsched.experiments import frame_markdown  # noqa: E402
from optsched.generators.workload import PHILLY_MODELS, philly_workload  # noqa: E402
from optsched.io import atomic_open  # noqa: E402
from optsched.perf.hetero import TYPE_SPEED, HeteroPerf  # noqa: E402
from optsched.sim import simulate  # noqa: E402
from optsched.sim.hetero import Gavel, GavelMakespan, finish_time_fairness, max_min_fairness  # noqa: E402

RESULTS = ROOT / "docs" / "results"
CLUSTERS = ("V100:4x4,P100:4x4,K80:4x4", "V100:2x4,P100:2x4,K80:2x4")
POLICIES = ("fifo", "las", "tiresias", "gavel", "gavel-makespan")


def _scheduler(name: str):
    return {"gavel": Gavel, "gavel-makespan": GavelMakespan}.get(name, lambda: name)()


def one_run(name: str, load: float, seed: int, window: tuple[int, int], cluster: str) -> dict:
    cl = parse_cluster(cluster)
    perf = HeteroPerf.for_cluster(cl)
    wl = philly_workload(load, seed, window=window, n_jobs=window[1] + 50, max_gpus=16)
    sched = _scheduler(name)
    t0 = time.perf_counter()
    r = simulate(wl, cl, scheduler=sched, perf=perf, stop_when_tracked_done=True, seed=seed)
    wall = time.perf_counter() - t0
    rho = finish_time_fairness(r, cl, perf)
    s = r.summary
    row = {"cluster": cluster, "gpus": cl.total_gpus, "policy": name, "load": load, "seed": seed,
           "tracked": s["tracked"], "finished": s["finished_tracked"],
           "avg_jct_h": s["avg_jct_s"] / 3600, "makespan_h": s["makespan_s"] / 3600,
           "rho_mean": float(rho["rho"].mean()), "rho_max": float(rho["rho"].max()),
           "share_rho_gt_1": float((rho["rho"] > 1).mean()), "preemptions": s["preemptions"], "wall_s": wall}
    log = getattr(sched, "lp_log", None)
    if log:
        row["lp_solves"] = len(log)
        row["lp_median_ms"] = 1000 * float(np.median([e["build_s"] + e["solve_s"] for e in log]))
    return row


def ci(x: pd.Series) -> str:
    x = x.dropna()
    if len(x) < 2:
        return f"{x.mean():.2f}"
    h = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))
    return f"{x.mean():.2f} ± {h:.2f}"


def lp_instance(m: int, rng: np.random.Generator, distinct: bool):
    """M active jobs on 3 types (Gavel's V100/P100/K80 with 16 servers of 4 GPUs per 100 jobs, at least 4
    servers): throughputs from OUR table (Philly models, 1-8 GPUs); ``distinct`` perturbs every row so no two
    jobs share an LP row (the worst case for the aggregation)."""
    models = list(PHILLY_MODELS)
    pick = rng.integers(0, len(models), m)
    z = rng.choice([1, 1, 1, 2, 4, 8], m).astype(float)
    T = np.array([[TYPE_SPEED[models[i]][t] / PHILLY_MODELS[models[i]] for t in ("V100", "P100", "K80")]
                  for i in pick])
    if distinct:
        T = T * rng.uniform(0.9, 1.1, T.shape)
    servers = max(4, int(round(16 * m / 100)))
    N = np.full(3, 4.0 * servers)
    return T, z, N


def lp_timing(sizes, repeats: int, seed: int = 0) -> pd.DataFrame:
    rows = []
    rng = np.random.default_rng(seed)
    for m in sizes:
        for distinct in (False, True):
            for solver in (("glop", "highs") if m <= 300 else ("glop",)):
                walls, builds, solves, rows_n = [], [], [], 0
                for _ in range(repeats):
                    T, z, N = lp_instance(m, rng, distinct)
                    a = max_min_fairness(T, z, N, solver=solver)
                    walls.append(a.wall_s)
                    builds.append(a.build_s)
                    solves.append(a.solve_s)
                    rows_n = a.rows
                rows.append({"jobs": m, "types": 3, "distinct_rows": distinct, "solver": solver,
                             "lp_rows": rows_n, "median_ms": 1000 * float(np.median(walls)),
                             "median_build_ms": 1000 * float(np.median(builds)),
                             "median_solve_ms": 1000 * float(np.median(solves)), "repeats": repeats})
                print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 seeds, window 300-360, small LPs; temporary output")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--load", type=float, default=4.0, help="jobs/hour (default 4)")
    ap.add_argument("--out", default=None, help="output folder (default docs/results; --quick: a temporary one)")
    args = ap.parse_args(argv)
    seeds = list(range(2 if args.quick else args.seeds))
    window = (300, 340) if args.quick else (300, 400)
    sizes = (10, 100, 300) if args.quick else (10, 100, 300, 1000, 3000)
    out = Path(args.out) if args.out else (Path(tempfile.mkdtemp(prefix="gavel_")) if args.quick else RESULTS)
    out.mkdir(parents=True, exist_ok=True)
    given = list(sys.argv[1:] if argv is None else argv)
    cmd = "`.venv/bin/python benchmarks/gavel.py" + "".join(" " + a for a in given) + "`"

    t0 = time.perf_counter()
    lp = lp_timing(sizes, repeats=3 if args.quick else 5)
    runs = []
    for cluster in CLUSTERS:
        for seed in seeds:
            for name in POLICIES:
                runs.append(one_run(name, args.load, seed, window, cluster))
                print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in runs[-1].items()}, flush=True)
    df = pd.DataFrame(runs)
    wall = time.perf_counter() - t0

    lines = ["# Gavel vs FIFO / LAS / Tiresias on a heterogeneous cluster (our simulator)", "",
             f"Our simulator's and our solvers' numbers. Command: {cmd} ({wall:.0f} s wall on the shared 2-core "
             "machine). Setting: " + " ".join(__doc__.split("Setting: ")[1].split("\n")).strip(), "",
             f"Philly in OUR mode at {args.load:g} jobs/h, jobs {window[0]}-{window[1] - 1} tracked; seeds "
             f"{', '.join(map(str, seeds))}; mean ± 95 % interval (Student t over seeds)."]
    for cluster in CLUSTERS:
        lines += ["", f"### {cluster} ({int(df[df['cluster'] == cluster]['gpus'].iloc[0])} GPUs)", "",
                  "| policy | avg JCT (h) | makespan (h) | mean rho | worst rho | share rho > 1 | preemptions |",
                  "|---|---|---|---|---|---|---|"]
        for name in POLICIES:
            d = df[(df["policy"] == name) & (df["cluster"] == cluster)]
            lines.append(f"| {name} | {ci(d['avg_jct_h'])} | {ci(d['makespan_h'])} | {ci(d['rho_mean'])} | "
                         f"{ci(d['rho_max'])} | {ci(d['share_rho_gt_1'])} | {ci(d['preemptions'].astype(float))} |")
    unfinished = df[df["finished"] < df["tracked"]]
    lines += ["", f"Runs with unfinished tracked jobs: {len(unfinished)}.", ""]
    g = df[df["policy"].str.startswith("gavel")]
    if "lp_median_ms" in g:
        lines += [f"LP solves per Gavel run (median over runs): {int(g['lp_solves'].median())}; median wall per "
                  f"solve (build + solve) {g['lp_median_ms'].median():.1f} ms.", ""]
    lines += ["## LP solve time vs active jobs (max-min, 3 GPU types)", "",
              "Median over repeats of one max-min solve (both phases), build + solve wall time. `distinct_rows` "
              "False: jobs from OUR table (7 models), identical jobs aggregated into one row (exact); True: every "
              "row perturbed by ±10 % so that nothing aggregates (worst case). Target: under 100 ms for 1,000 "
              "jobs on 3 types.", "",
              "| jobs | distinct rows | solver | LP rows | median ms | build ms | solve ms |",
              "|---|---|---|---|---|---|---|"]
    for _, r in lp.iterrows():
        lines.append(f"| {r['jobs']} | {r['distinct_rows']} | {r['solver']} | {r['lp_rows']} | {r['median_ms']:.1f} "
                     f"| {r['median_build_ms']:.1f} | {r['median_solve_ms']:.1f} |")
    lines += ["", "## Every run", "", frame_markdown(df)]
    with atomic_open(out / "gavel.md", "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    with atomic_open(out / "gavel_runs.csv", "w", encoding="utf-8", newline="") as fh:
        df.to_csv(fh, index=False)
    with atomic_open(out / "gavel_lp.csv", "w", encoding="utf-8", newline="") as fh:
        lp.to_csv(fh, index=False)
    print("\n".join(lines[:30]))
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
