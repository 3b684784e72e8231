"""Exact total completion time (paper 001's problem A) on tiny instances: OUR solver's numbers, not the paper's.

Run: ``.venv/bin/python benchmarks/total_jct.py [--quick] [--seeds K] [--time-limit S] [--workers W]
[--parallel P | --dask local|tcp://HOST:PORT]``: the instances run through ``optsched.experiments.map_tasks``,
one at a time by default (so that the solve times are not inflated by sharing the cores), ``--parallel`` at a
time on a local pool or on Dask for the optima alone.

Instances (:func:`optsched.exact.total_jct.random_pipeline_jobs`, seeded ``default_rng([seed, n])``): n = 3..8 jobs
drawn from paper 001's Table I catalogue (``optsched.models``, ESTIMATED profiles) with at most 4 GPUs, on 2
servers x 4 GPUs (G = 8), NIC 10 Gbps, NVLink 300 GB/s (the paper's simulation network), 20-400 iterations,
releases uniform in [0, 5] s (so that jobs contend), predicted iterations = true +- up to 50%. Problem A is built
with :func:`optsched.exact.total_jct.from_pipeline_jobs` (every placement shape, exact alpha per shape, time unit
10 ms, durations rounded up) and solved with CP-SAT (:func:`~optsched.exact.total_jct.solve_total_jct`).

Per n: CP-SAT median / max solve time and how many instances it proves optimal within the time limit; the
brute force's time (n <= 5) and agreement; the gaps of the lower bounds to the optimum (sum_i (r_i +
n_i alpha_i^min), and paper 001's alpha^min I(I+1)/(2G), l. 225); A-SRPT's and A-SRPT-Perfect's total
completion time over the optimum (``optsched.sim.asrpt.run_asrpt``, tau = 1) and Theorem 1's ratio.

Writes ``docs/results/total_jct.md``, ``total_jct.csv`` (every instance's row) and ``total_jct.png``
(``--quick``: ``total_jct_quick.*``); ``--replot`` redraws the figure from the committed CSV.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from optsched.bounds import asrpt_lower_bound, asrpt_theorem1_ratio  # noqa: E402
from optsched.exact.total_jct import brute_force_total_jct, solve_total_jct  # noqa: E402
from optsched.experiments import SerialExecutor, executor, map_tasks  # noqa: E402
from optsched.generators.total_jct import from_pipeline_jobs  # noqa: E402
from optsched.generators.total_jct import random_pipeline_jobs as instance
from optsched.io import atomic_open, save_figure  # noqa: E402

CLUSTER = (2, 4)
NIC_GBPS, INTRA_GBS = 10.0, 300.0
UNIT_S = 0.01
BRUTE_MAX = 5


def run_one(n: int, seed: int, time_limit: float, workers: int) -> dict:
    from optsched.sim.asrpt import run_asrpt

    jobs = instance(n, seed)
    inst = from_pipeline_jobs(jobs, CLUSTER, nic_gbps=NIC_GBPS, intra_gbs=INTRA_GBS, time_unit_s=UNIT_S)
    res = solve_total_jct(inst, time_limit=time_limit, num_workers=workers)
    row = {"n": n, "seed": seed, "status": str(res.status), "cpsat_s": res.runtime_s,
           "opt_s": res.objective * UNIT_S if res.objective is not None else None,
           "bound_s": res.lower_bound * UNIT_S, "options": res.info["options"]}
    p = inst.asrpt_parameters({j[0]: j[4] for j in jobs}, tau=1.0)
    # both lower bounds in seconds (alpha in ms)
    row["lb_trivial_s"] = sum(j[1] + j[3] * jj.alpha_min / 1000 for j, jj in zip(jobs, inst.jobs))
    row["lb_paper_s"] = float(asrpt_lower_bound(p)) / 1000
    ratio = asrpt_theorem1_ratio(p)
    row["thm1"] = float(ratio) if ratio is not None else None
    if n <= BRUTE_MAX:
        t0 = time.perf_counter()
        bf = brute_force_total_jct(inst, max_jobs=BRUTE_MAX)
        row["brute_s"] = time.perf_counter() - t0
        row["agree"] = bf.objective == res.objective if res.status.value == "optimal" else None
    for name, kw in (("asrpt", {}), ("perfect", {"predictor": "perfect"})):
        run = run_asrpt(jobs, CLUSTER, tau=1.0, nic_gbps=NIC_GBPS, intra_gbs=INTRA_GBS, **kw)
        row[name] = float(run.jobs["completion_s"].sum()) / row["opt_s"] if row["opt_s"] else None
    return row


def _task(t: dict) -> dict:
    row = run_one(t["n"], t["seed"], t["time_limit"], t["workers"])
    print(f"n={t['n']} seed={t['seed']} {row['status']} {row['cpsat_s']:.2f}s", file=sys.stderr, flush=True)
    return row


def _md_table(header: list[str], rows: list[list[object]]) -> str:
    def cell(c):
        if c is None:
            return "-"
        if isinstance(c, float):
            return f"{c:.3g}" if abs(c) < 1000 else f"{c:.3e}"
        return str(c)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def _pct(x):
    return None if x is None else f"{100 * x:.2f}%"


def summarise(rows: list[dict]) -> list[list[object]]:
    out = []
    for n in sorted({r["n"] for r in rows}):
        rs = [r for r in rows if r["n"] == n]
        proven = [r for r in rs if r["status"] == "optimal"]
        bf = [r for r in rs if "brute_s" in r]
        out.append([
            n, len(rs), len(proven), _med([r["options"] for r in rs]), _med([r["cpsat_s"] for r in rs]),
            max(r["cpsat_s"] for r in rs),
            _med([r["brute_s"] for r in bf]) if bf else None,
            (f"{sum(bool(r['agree']) for r in bf)}/{len(bf)}") if bf else "-",
            _pct(_med([1 - r["lb_trivial_s"] / r["opt_s"] for r in proven])),
            _pct(_med([1 - r["lb_paper_s"] / r["opt_s"] for r in proven])),
            _med([r["asrpt"] for r in proven]), max((r["asrpt"] for r in proven), default=None),
            _med([r["perfect"] for r in proven]), _med([r["thm1"] for r in proven]),
        ])
    return out


def plot(rows: list[dict], path: Path | None):
    """Left: CP-SAT's and the brute force's solve time per size (mean over the instances with its 95 %
    percentile-bootstrap interval, and CP-SAT's slowest instance), log scale. Right: over the proven optimum,
    A-SRPT, A-SRPT-Perfect and the simple lower bound sum(r + n alpha_min) (mean with its bootstrap interval).
    One style (``optsched.plot.plot_series``): own marker and dash per series, nudged apart, whole-number jobs
    ticks, A-SRPT on top. Written to ``path`` when given (returns the figure)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from optsched.plot import bootstrap_interval, legend_outside, plot_series

    df = pd.DataFrame(rows)
    k = int(df.groupby("n").size().max())
    proven = df[df["status"] == "optimal"].copy()
    proven["lb"] = proven["lb_trivial_s"] / proven["opt_s"]

    def stats(frame, col, name):
        out = []
        for n, g in frame.groupby("n"):
            v = pd.to_numeric(g[col], errors="coerce").dropna().to_numpy(dtype=float)
            if len(v):
                lo, hi = bootstrap_interval(v)
                out.append({"n": int(n), "series": name, "mean": float(v.mean()), "lo": lo, "hi": hi})
        return out

    times = stats(df, "cpsat_s", "CP-SAT, mean") + stats(df, "brute_s", "brute force, mean")
    times += [{"n": int(n), "series": "CP-SAT, slowest instance", "mean": float(g["cpsat_s"].max()),
               "lo": float(g["cpsat_s"].max()), "hi": float(g["cpsat_s"].max())} for n, g in df.groupby("n")]
    ratios = (stats(proven, "asrpt", "A-SRPT / OPT") + stats(proven, "perfect", "A-SRPT-Perfect / OPT")
              + stats(proven, "lb", "lower bound sum(r + n \u03b1_min) / OPT"))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12.5, 4.2))
    plot_series(pd.DataFrame(times), "n", "mean", "series", a1, lo="lo", hi="hi", xlabel="jobs per instance",
                ylabel="solve time (s, log scale)", logy=True, dodge=0.02)
    a1.set_title(f"Exact total JCT: solve time over {k} instances per size (ours)", fontsize=9)
    legend_outside(a1, fontsize=7)
    plot_series(pd.DataFrame(ratios), "n", "mean", "series", a2, lo="lo", hi="hi", xlabel="jobs per instance",
                ylabel="total completion time / proven optimum OPT_A", highlight=("A-SRPT / OPT",), dodge=0.02)
    a2.axhline(1.0, color="grey", lw=0.8)
    a2.set_title("Our simulator's A-SRPT against the optimum (1 = optimal)", fontsize=9)
    legend_outside(a2, fontsize=7)
    fig.suptitle("Mean over the instances with its 95 % bootstrap interval (error bars)", fontsize=9)
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path, dpi=110, bbox_inches="tight")
    return fig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="benchmarks/total_jct.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 seeds per size, 10 s limit, writes *_quick files")
    ap.add_argument("--seeds", type=int, default=10, help="instances per size (default 10)")
    ap.add_argument("--time-limit", type=float, default=60.0, help="CP-SAT seconds per instance (default 60)")
    ap.add_argument("--workers", type=int, default=2, help="CP-SAT num_workers (default 2)")
    ap.add_argument("--max-jobs", type=int, default=8, help="largest instance size (default 8)")
    ap.add_argument("--parallel", type=int, default=1, help="instances at once on a local pool (default 1)")
    ap.add_argument("--dask", default=None, help="'local' or a Dask scheduler address (times then shared)")
    ap.add_argument("--replot", action="store_true", help="only redraw total_jct.png from the committed total_jct.csv")
    args = ap.parse_args(argv)
    results = ROOT / "docs" / "results"
    if args.replot:
        import pandas as pd

        rows = pd.read_csv(results / "total_jct.csv").to_dict("records")
        plot(rows, results / "total_jct.png")
        print(results / "total_jct.png")
        return 0
    seeds = 3 if args.quick else args.seeds
    tl = 10.0 if args.quick else args.time_limit
    sizes = range(3, 7) if args.quick else range(3, args.max_jobs + 1)
    t0 = time.perf_counter()
    tasks = [{"n": n, "seed": k, "time_limit": tl, "workers": args.workers} for n in sizes for k in range(seeds)]
    if args.dask is None and args.parallel == 1:
        rows = map_tasks(_task, tasks, SerialExecutor(), progress=False)
    else:
        with executor(args.dask, args.parallel) as ex:
            rows = map_tasks(_task, tasks, ex, desc="total_jct")
    wall = time.perf_counter() - t0
    suffix = "_quick" if args.quick else ""
    out_md = ROOT / "docs" / "results" / f"total_jct{suffix}.md"
    out_png = ROOT / "docs" / "results" / f"total_jct{suffix}.png"
    header = ["jobs", "instances", "proven", "placements (median)", "CP-SAT median s", "CP-SAT max s",
              "brute median s", "brute agrees", "gap sum(r+n a_min)", "gap a_min I(I+1)/2G", "A-SRPT/OPT median",
              "A-SRPT/OPT max", "Perfect/OPT median", "Thm 1 ratio median"]
    md = ["# Exact total completion time (paper 001, problem A) on tiny instances", "",
          "OUR solver's and simulator's numbers on instances we generated, not the paper's (the paper never "
          "computes OPT_A). CP-SAT (`optsched.exact.total_jct`, ortools, "
          f"num_workers={args.workers}, time limit {tl:g} s), {seeds} instances per size, "
          f"{CLUSTER[0]} servers x {CLUSTER[1]} GPUs, NIC {NIC_GBPS:g} Gbps, intra {INTRA_GBS:g} GB/s, time unit "
          f"{UNIT_S * 1000:g} ms (durations rounded up). Jobs: Table I catalogue configurations with <= 4 GPUs "
          "(ESTIMATED profiles, `optsched.models`), 20-400 iterations, releases in [0, 5] s, predictions within "
          "+-50% (benchmark docstring).",
          f"Reproduce: `.venv/bin/python benchmarks/total_jct.py{' --quick' if args.quick else ''}` "
          f"(this run: {wall:.0f} s wall).", "",
          "* `placements`: (job, concrete placement) pairs in the model (optional intervals);",
          "* `brute`: the independent enumeration (every order x placement, serial schedule generation, branch "
          f"and bound), n <= {BRUTE_MAX}; `agrees`: same optimum as CP-SAT;",
          "* `gap X` = 1 - X / OPT_A over the proven instances: sum_i (r_i + n_i alpha_i^min) and paper 001's "
          "alpha^min I(I+1)/(2G) (l. 225, the bound behind Theorem 1's ratio);",
          "* `A-SRPT/OPT`: our simulator's A-SRPT (tau = 1, predictions as above) total completion time over "
          "OPT_A (rounded-up durations: OPT_A here is at most 10 ms per job above the continuous optimum); "
          "`Thm 1 ratio`: the guarantee for the same instance (`optsched.bounds.asrpt_theorem1_ratio`).", "",
          _md_table(header, summarise(rows)), "",
          "## Per instance", "",
          _md_table(["jobs", "seed", "status", "CP-SAT s", "OPT_A s", "bound s", "A-SRPT/OPT", "Perfect/OPT"],
                    [[r["n"], r["seed"], r["status"], r["cpsat_s"], r["opt_s"], r["bound_s"], r["asrpt"],
                      r["perfect"]] for r in rows]), ""]
    with atomic_open(out_md, encoding="utf-8") as fh:
        fh.write("\n".join(md))
    import pandas as pd

    with atomic_open(results / f"total_jct{suffix}.csv", "w", encoding="utf-8", newline="") as fh:
        pd.DataFrame(rows).to_csv(fh, index=False)
    plot(rows, out_png)
    print(f"wrote {out_md.relative_to(ROOT)} and {out_png.relative_to(ROOT)} ({wall:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
