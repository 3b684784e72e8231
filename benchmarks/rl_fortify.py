"""The shipped rl-planner on the proven small instances against a recorded run: OUR DP optima and simulator.

Run: ``.venv/bin/python benchmarks/rl_fortify.py --optima CSV [--jobs 6,7,8] [--mix normal] [--hours 0.25]
[--no-fortify] [--tiebreak exact-jct|makespan|none] [--out CSV]``.

``--optima``: a CSV of ``benchmarks/rl_optimum.py`` (its ``opt_avg_jct_h`` of each proven instance and its
``rl-planner`` and ``planner 3 bases`` gaps, the recorded runs, when it has them: a CSV of optima alone serves
too, for instance of a tuning set's seeds). Each proven instance of ``--jobs`` jobs (the same
generator call as ``rl_optimum.py``: seed as recorded, ``--hours`` isolated hours per job) is run with the
shipped planner ([`SHIPPED_PLANNER`][optsched.rl.planner.SHIPPED_PLANNER]; ``--no-fortify``: its endgame search
unfortified; ``--tiebreak``: its endgame's tie-break, default the shipped one), and its gap to the optimum
printed beside the recorded ones, per job count: mean with a 95 % t-interval, how many instances are optimal,
better and worse than the recorded rl-planner. Writes nothing tracked (``--out``: the per-instance rows, a path
you choose).

```pycon
>>> main(["--help"])  # doctest: +SKIP
```
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT / "src", ROOT):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import pandas as pd  # noqa: E402

from benchmarks.rl import ci95  # noqa: E402  (one 95 % interval for the RL tables)


def main(argv: list[str] | None = None) -> int:
    from optsched.generators.contention import random_contention_instance
    from optsched.io import atomic_open, check_output
    from optsched.rl.planner import SHIPPED_PLANNER, TIEBREAKS, plan_episode
    from optsched.sim.contention.lookahead import SHIPPED_WC

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--optima", required=True)
    ap.add_argument("--jobs", default="6,7,8")
    ap.add_argument("--mix", default="normal")
    ap.add_argument("--hours", type=float, default=0.25)
    ap.add_argument("--no-fortify", dest="fortify", action="store_false")
    ap.add_argument("--tiebreak", default=SHIPPED_PLANNER.get("tiebreak") or "none",
                    choices=(*TIEBREAKS, "none"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    if args.out:
        check_output(args.out)
    known = pd.read_csv(args.optima)
    jobs = [int(x) for x in args.jobs.split(",")]
    known = known[(known["status"] == "optimal") & known["jobs"].isin(jobs)].copy()
    for col in ("rl-planner", "planner 3 bases"):  # the recorded runs, absent from a CSV of optima alone
        if col not in known:
            known[col] = float("nan")
    kw = {**SHIPPED_PLANNER, "fortify": args.fortify, "tiebreak": None if args.tiebreak == "none" else args.tiebreak}
    rows = []
    c0 = time.process_time()
    for _, k in known.iterrows():
        inst = random_contention_instance(jobs=int(k["jobs"]), mix=args.mix, seed=int(k["seed"]), hours=args.hours)
        r = plan_episode(inst, SHIPPED_WC, **kw)
        rows.append({"jobs": int(k["jobs"]), "seed": int(k["seed"]), "gap": r["avg_jct_h"] / k["opt_avg_jct_h"] - 1,
                     "recorded": float(k["rl-planner"]), "planner 3 bases": float(k["planner 3 bases"]),
                     "avg_jct_h": r["avg_jct_h"], "switches": r["switches"], "cpu_s": r["cpu_s"],
                     "decisions": r["decisions"]})
        print(f"  n={rows[-1]['jobs']} seed={rows[-1]['seed']}: gap {100 * rows[-1]['gap']:.2f} % (recorded "
              f"{100 * rows[-1]['recorded']:.2f} %)", flush=True)
    df = pd.DataFrame(rows)
    print(f"rl-planner ({', '.join(f'{k} {v}' for k, v in kw.items())}) against the recorded run, gap to the "
          "proven optimum (OUR DP and simulator):")
    for name, g in [*((str(n), g) for n, g in df.groupby("jobs")), (f"all {args.jobs}", df)]:
        m, h = ci95(g["gap"])
        print(f"  {name} jobs ({len(g)}): {100 * m:.2f} % +- {100 * h:.2f} %; recorded rl-planner "
              f"{100 * g['recorded'].mean():.2f} %, planner 3 bases {100 * g['planner 3 bases'].mean():.2f} %; "
              f"optimal {int((g['gap'] < 1e-9).sum())}, better {int((g['gap'] < g['recorded'] - 1e-9).sum())}, "
              f"worse {int((g['gap'] > g['recorded'] + 1e-9).sum())}")
    print(f"  CPU {time.process_time() - c0:.1f} s, {1000 * df['cpu_s'].sum() / df['decisions'].sum():.0f} ms "
          "per decision")
    if args.out:
        with atomic_open(args.out, "w") as f:
            df.to_csv(f, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
