"""What-if policy switching (issue 17, Blox's automatic scheduler synthesizer) in our simulator: the switcher against
each fixed (scheduler, admission) pair on the Philly trace, and what the switching costs in simulation.

Run: ``.venv/bin/python benchmarks/whatif.py [--quick] [--seeds 3] [--load 4] [--out DIR]``.
Full run: writes ``docs/results/whatif.md`` and ``whatif.csv`` atomically; ``--quick`` (one seed, a smaller
window) writes into a temporary folder (or ``--out DIR``), never into ``docs/results``.

Setting: Philly in OUR mode (``philly_workload(load, seed, window=(300, 400), n_jobs=500, max_gpus=16)``: the
trace's run times and GPU counts, Blox's filter, Poisson arrivals; the jobs after the window are load only);
16 GPUs (4 servers x 4), consolidated placement, constant performance model, 300 s rounds, each run stops when
the tracked jobs are done. Candidates: FIFO, LAS, SRTF, Tiresias, each with accept-all, and LAS with accept-1.2.
The switcher re-decides every 3000 s (Blox: every 10 rounds) with a 3000 s horizon, score ``jct`` (time in the
system within the horizon), for both lookaheads (``workload``: the copies see future arrivals; ``present``:
only the jobs already arrived, Blox's code). Cost: the switcher's wall time split into the live run, the
clones and the copies' simulation (CPU seconds, medians of the runs), against the fixed policies' median wall time and
CPU seconds (CPU seconds are the steadier figure on a shared machine; each run is repeated ``--repeat`` times, 3 by
default, the repeats interleaved, and its median time kept). Every number is OUR simulator's.
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

from optsched.experiments import frame_markdown  # noqa: E402
from optsched.generators.workload import bursty_workload, philly_workload  # noqa: E402
from optsched.io import atomic_open  # noqa: E402
from optsched.sim import simulate  # noqa: E402
from optsched.sim.whatif import run_whatif  # noqa: E402

RESULTS = ROOT / "docs" / "results"
PAIRS = [("fifo", "accept-all"), ("las", "accept-all"), ("srtf", "accept-all"), ("tiresias", "accept-all"),
         ("las", "accept-1.2")]
SERVERS, GPUS = 4, 4


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one seed, window 300-350; temporary output")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--load", type=float, default=4.0, help="jobs/hour (default 4)")
    ap.add_argument("--period-s", type=float, default=3000.0)
    ap.add_argument("--horizon-s", type=float, default=3000.0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs of each policy and switcher; the times reported are the medians (default 3)")
    ap.add_argument("--bursty", action="store_true",
                    help="Blox's bursty dual load (paper variant, our mode: short jobs at 2x the load for 2 h of "
                         "every 4 h) instead of the plain Philly stream; writes whatif_bursty.*")
    args = ap.parse_args(argv)
    seeds = [0] if args.quick else list(range(args.seeds))
    window, n_jobs = ((300, 350), 400) if args.quick else ((300, 400), 500)
    out = Path(args.out) if args.out else (Path(tempfile.mkdtemp(prefix="whatif_")) if args.quick else RESULTS)
    out.mkdir(parents=True, exist_ok=True)
    given = list(sys.argv[1:] if argv is None else argv)
    cmd = "`.venv/bin/python benchmarks/whatif.py" + "".join(" " + a for a in given) + "`"
    cluster = (SERVERS, GPUS)
    rows = []
    t_all = time.perf_counter()
    for seed in seeds:
        if args.bursty:
            wl = bursty_workload(args.load, seed, mode="ours", window=window, n_jobs=n_jobs,
                                 max_gpus=SERVERS * GPUS)
        else:
            wl = philly_workload(args.load, seed, window=window, n_jobs=n_jobs, max_gpus=SERVERS * GPUS)
        # the repeats interleaved (each repeat runs every fixed pair, then the switcher with either lookahead), so
        # that a change of the machine's load during the seed weighs on the fixed runs and the switcher alike
        looks = ("workload", "present")
        runs: dict = {}
        for _ in range(max(1, args.repeat)):  # (every run gives the same result: the last one's is kept)
            for key in [*PAIRS, *looks]:
                t0, c0 = time.perf_counter(), time.process_time()
                if key in looks:
                    r = run_whatif(wl, cluster, PAIRS, period_s=args.period_s, horizon_s=args.horizon_s,
                                   lookahead=key, stop_when_tracked_done=True, seed=seed)
                else:
                    r = simulate(wl, cluster, scheduler=key[0], admission=key[1], stop_when_tracked_done=True,
                                 seed=seed)
                wall_s, cpu_s = time.perf_counter() - t0, time.process_time() - c0
                rec = runs.setdefault(key, {"walls": [], "cpus": [], "parts": []})
                rec["walls"].append(wall_s)
                rec["cpus"].append(cpu_s)
                rec["res"] = r
                if key in looks:
                    rec["parts"].append([r.summary[k] for k in ("live_s", "copy_s", "whatif_s")])
        for s, a in PAIRS:
            rec = runs[(s, a)]
            r = rec["res"]
            rows.append({"seed": seed, "policy": f"{s}+{a}", "avg_jct_h": r.summary["avg_jct_s"] / 3600,
                         "avg_resp_h": r.summary["avg_responsiveness_s"] / 3600,
                         "finished": r.summary["finished_tracked"], "wall_s": float(np.median(rec["walls"])),
                         "cpu_s": float(np.median(rec["cpus"])), "decisions": int(r.summary["decisions"])})
            print(rows[-1], flush=True)
        for look in looks:
            rec = runs[look]
            w = rec["res"]
            live_s, copy_s, whatif_s = (float(x) for x in np.median(np.array(rec["parts"]), axis=0))
            sm = w.summary  # the run's summary, with the switching figures
            rows.append({"seed": seed, "policy": f"what-if ({look})", "avg_jct_h": sm["avg_jct_s"] / 3600,
                         "avg_resp_h": sm["avg_responsiveness_s"] / 3600, "finished": sm["finished_tracked"],
                         "wall_s": float(np.median(rec["walls"])), "cpu_s": float(np.median(rec["cpus"])),
                         "points": sm["switch_points"],
                         "switches": sm["switches"], "copies": sm["copies"], "live_windows": sm["reused"],
                         "skipped_windows": sm["skipped"],
                         "decisions": int(sm["decisions"]), "window_decisions": sm["window_decisions"],
                         "live_s": live_s, "copy_s": copy_s, "whatif_s": whatif_s,
                         "cost_ratio": (copy_s + whatif_s) / live_s if live_s > 0 else None,
                         "choices": "; ".join(f"{k} {v:.2f}" for k, v in w.custom["whatif"].share().items() if v > 0)})
            print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    wall = time.perf_counter() - t_all

    names = [f"{s}+{a}" for s, a in PAIRS] + ["what-if (workload)", "what-if (present)"]
    fixed = df[~df["policy"].str.startswith("what-if")]
    best_fixed = fixed.groupby("seed")["avg_jct_h"].min()
    kind = "Blox's bursty dual load on Philly" if args.bursty else "Philly"
    lines = [f"# What-if policy switching vs fixed policies on {kind} (our simulator)", "",
             f"Our simulator's numbers. Command: {cmd} ({wall:.0f} s wall on the shared 2-core machine). Setting: "
             + " ".join(__doc__.split("Setting: ")[1].split("\n")).strip(), "",
             ("Workload: `bursty_workload(load, seed, mode='ours', window, n_jobs, max_gpus=16)`: the Philly "
              "stream above plus short jobs (10-60 min, the GPU count of a cycled trace row) arriving at 2x the "
              "load during the first 2 h of every 4 h; the window counts positions over both streams. "
              if args.bursty else "")
             + f"Load {args.load:g} jobs/h, jobs {window[0]}-{window[1] - 1} tracked, seeds "
             f"{', '.join(map(str, seeds))}; period {args.period_s:g} s, horizon {args.horizon_s:g} s.", "",
             "| policy | " + " | ".join(f"avg JCT seed {s} (h)" for s in seeds) + " | mean | wall s (median) |",
             "|---|" + "---|" * (len(seeds) + 2)]
    for n in names:
        d = df[df["policy"] == n].set_index("seed")
        cells = [f"{d.loc[s, 'avg_jct_h']:.2f}" if s in d.index else "-" for s in seeds]
        lines.append(f"| {n} | " + " | ".join(cells) + f" | {d['avg_jct_h'].mean():.2f} | "
                     f"{d['wall_s'].median():.2f} |")
    lines += ["", "## Does switching beat every fixed policy?", ""]
    for look in ("workload", "present"):
        w = df[df["policy"] == f"what-if ({look})"].set_index("seed")
        beats = [s for s in seeds if w.loc[s, "avg_jct_h"] < best_fixed.loc[s] - 1e-9]
        ratio = (w["avg_jct_h"] / best_fixed).round(3).tolist()
        lines.append(f"* lookahead `{look}`: beats the best fixed policy on {len(beats)} of {len(seeds)} seeds; "
                     f"avg JCT / best fixed = {ratio}.")
    lines += ["", "## Simulation cost", "",
              "CPU seconds. A point's candidates run on copies of the live run, except (lookahead `workload`, "
              "horizon <= period) one window the live run runs itself, after which the chosen run goes on as the "
              "live run (`live windows`); those windows count in `what-if s`, not in `live s`, so the "
              "`(clone + what-if) / live` ratio is not the cost's measure there: `CPU s / median fixed CPU s` is. "
              "The candidates' windows (`what-if s`) simulate, point by point, what each candidate's own fixed run "
              "simulates over the same time, up to the decision point where their score is settled (no scored job "
              "can finish before the window's end; the chosen run goes on to the next point): `window decisions / "
              "five fixed` compares the decisions they take with those of the five fixed runs together (`five "
              "fixed CPU s / median`: their CPU time against the median one's). `skipped windows`: windows not run "
              "because the point's first window took only decisions every candidate takes alike (at most one "
              "waiting job, which fits), so every candidate's window is that one.", "",
              "| lookahead | seed | points | switches | copies | live windows | skipped windows | live s | clone s "
              "| what-if s "
              "| (clone + what-if) / live | wall s / median fixed wall s | CPU s / median fixed CPU s "
              "| clone s / median fixed CPU s | what-if s / median fixed CPU s | five fixed CPU s / median "
              "| window decisions / five fixed | chosen (share of points) |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    fixed_wall = fixed.groupby("seed")["wall_s"].median()
    fixed_cpu = fixed.groupby("seed")["cpu_s"].median()
    fixed_sum = fixed.groupby("seed")["cpu_s"].sum()
    fixed_dec = fixed.groupby("seed")["decisions"].sum()
    for look in ("workload", "present"):
        for _, r in df[df["policy"] == f"what-if ({look})"].iterrows():
            lines.append(f"| {look} | {r['seed']} | {int(r['points'])} | {int(r['switches'])} | {int(r['copies'])} | "
                         f"{int(r['live_windows'])} | {int(r['skipped_windows'])} | "
                         f"{r['live_s']:.2f} | {r['copy_s']:.2f} | {r['whatif_s']:.2f} | {r['cost_ratio']:.1f} | "
                         f"{r['wall_s'] / fixed_wall.loc[r['seed']]:.1f} | "
                         f"{r['cpu_s'] / fixed_cpu.loc[r['seed']]:.1f} | "
                         f"{r['copy_s'] / fixed_cpu.loc[r['seed']]:.1f} | "
                         f"{r['whatif_s'] / fixed_cpu.loc[r['seed']]:.1f} | "
                         f"{fixed_sum.loc[r['seed']] / fixed_cpu.loc[r['seed']]:.1f} | "
                         f"{r['window_decisions'] / fixed_dec.loc[r['seed']]:.2f} | {r['choices']} |")
    lines += ["", "## Every run", "", frame_markdown(df)]
    stem = "whatif_bursty" if args.bursty else "whatif"
    with atomic_open(out / f"{stem}.md", "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    with atomic_open(out / f"{stem}.csv", "w", encoding="utf-8", newline="") as fh:
        df.to_csv(fh, index=False)
    print("\n".join(lines[:40]))
    print(f"written to {out}")
    return 0 if np.isfinite(df["avg_jct_h"]).all() else 1


if __name__ == "__main__":
    sys.exit(main())
