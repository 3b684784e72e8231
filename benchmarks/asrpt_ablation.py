"""Ablation: why A-SRPT loses to the work-conserving baselines at scale (paper 001, issue 6), on our simulator.

Run: ``.venv/bin/python benchmarks/asrpt_ablation.py [--quick] [--seeds K] [--big]``.
Writes ``docs/results/asrpt_ablation.md`` (``--quick``: ``asrpt_ablation_quick.md``). Every number is OUR
simulator's on OUR Philly -> Table I mapping (the Fig. 6 setting of ``benchmarks/asrpt.py``: 16 x 8 GPUs, NIC
10 Gbps, offered load 1.0, first N test jobs, random-forest predictions, tau = 100).

Variants of A-SRPT (options of ``optsched.sim.asrpt.ASRPT``; defaults = the paper's reading):

* ``nb``: ``window_blocks_queue=False`` (later jobs may start while the head waits in its delay window);
* ``bf``: ``head_blocks_queue=False`` (later jobs may start past a head that does not fit);
* ``arr``: ``release="arrival"`` (no wait for the virtual completion; queue in p~_i order);
* combinations of the three.

``--big`` adds the 75,000-job run of ``benchmarks/asrpt.py`` (``big_run``) for A-SRPT, the best variants and the
best baselines.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT / "src", ROOT):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from benchmarks.asrpt import Data, big_run, total_jct_h  # noqa: E402
from optsched.io import atomic_open  # noqa: E402

RESULTS = ROOT / "docs" / "results"
NB = {"window_blocks_queue": False}
BF = {"head_blocks_queue": False}
ARR = {"release": "arrival"}
POLICIES = [  # (label, scheduler, options)
    ("A-SRPT", "a-srpt", {}),
    ("A-SRPT nb", "a-srpt", NB),
    ("A-SRPT bf", "a-srpt", BF),
    ("A-SRPT nb+bf", "a-srpt", {**NB, **BF}),
    ("A-SRPT arr", "a-srpt", ARR),
    ("A-SRPT arr+nb", "a-srpt", {**ARR, **NB}),
    ("A-SRPT arr+nb+bf", "a-srpt", {**ARR, **NB, **BF}),
    ("SPWF", "spwf", {}),
    ("WCS-Duration", "wcs-duration", {}),
    ("WCS-Workload", "wcs-workload", {}),
    ("WCS-SubTime", "wcs-subtime", {}),
]


def run_grid(data: Data, counts, seeds, servers: int, load: float, policies=POLICIES, log=print) -> pd.DataFrame:
    rows = []
    for n in counts:
        for seed in seeds:
            wl = data.workload(seed, None, n, "random-forest", servers, load)
            for label, sched, opts in policies:
                jct, wall = total_jct_h(wl, servers, 10.0, sched, seed, **opts)
                rows.append({"n": n, "seed": seed, "policy": label, "total_jct_h": jct, "wall_s": wall})
                log(f"  n={n} seed={seed} {label}: {jct:,.0f} h ({wall:.1f} s)")
    return pd.DataFrame(rows)


def table(df: pd.DataFrame) -> list[str]:
    labels = [p for p, _, _ in POLICIES if p in set(df["policy"])]
    mean = df.groupby(["n", "policy"])["total_jct_h"].mean().unstack("policy")[labels]
    per = df.pivot_table(index=["n", "seed"], columns="policy", values="total_jct_h")
    out = ["| policy | " + " | ".join(f"{n} jobs: mean total JCT (h)" for n in mean.index)
           + " | " + " | ".join(f"{n} jobs: / A-SRPT (per seed)" for n in mean.index) + " |",
           "|---|" + "---|" * (2 * len(mean.index))]
    for lab in labels:
        cells = [f"{mean.loc[n, lab]:,.0f}" for n in mean.index]
        for n in mean.index:
            r = (per.loc[n][lab] / per.loc[n]["A-SRPT"]).to_numpy()
            cells.append(" / ".join(f"{x:.2f}" for x in r))
        out.append(f"| {lab} | " + " | ".join(cells) + " |")
    return out


def big_lines(rows, infos, cmd: str) -> list[str]:
    """The 75,000-job table; ``rows`` carry a ``seed`` (one per big_run), ``infos`` one dict per seed."""
    seeds = sorted({r["seed"] for r in rows})
    lines = ["## 75,000 jobs (ours: the `--big` run of `benchmarks/asrpt.py`: last 75,000 Philly jobs, weekly "
             f"random forest, 250 x 8 GPUs, NIC 10 Gbps, load 1.0, seed{'s' if len(seeds) > 1 else ''} "
             f"{', '.join(map(str, seeds))})", "", f"Command: {cmd}", "",
             "Unseen share " + " / ".join(f"{i['unseen_share']:.2f}" for i in infos) + ", single-GPU share "
             + " / ".join(f"{i['single_gpu_share']:.2f}" for i in infos) + " (per seed: the seed draws the "
             "Table I mapping and the forests). Baselines and the paper-reading A-SRPT of seed 0: "
             "`docs/results/asrpt_big.md`.", ""]
    if len(seeds) == 1:
        lines += ["| policy | total JCT (h) | simulate wall (s) |", "|---|---|---|"]
        lines += [f"| {r['policy']} | {r['total_jct_h']:,.0f} | {r['wall_s']:.1f} |" for r in rows]
        return lines + [""]
    df = pd.DataFrame(rows)
    jct = df.pivot(index="policy", columns="seed", values="total_jct_h")
    jct = jct.loc[list(dict.fromkeys(df["policy"]))]  # the run order
    wall = df.groupby("policy")["wall_s"].median()
    ref = "WCS-SubTime" if "WCS-SubTime" in jct.index else None
    head = ["policy", *[f"seed {s} (h)" for s in seeds], "mean (h)"]
    if ref:
        head += [f"/ {ref} per seed", f"/ {ref} mean"]
    lines += ["| " + " | ".join(head + ["simulate wall median (s)"]) + " |", "|" + "---|" * (len(head) + 1)]
    for pol, row in jct.iterrows():
        cells = [pol, *[f"{row[s]:,.0f}" for s in seeds], f"{row.mean():,.0f}"]
        if ref:
            ratio = row / jct.loc[ref]
            cells += [" / ".join(f"{x:.2f}" for x in ratio), f"{row.mean() / jct.loc[ref].mean():.2f}"]
        lines.append("| " + " | ".join(cells + [f"{wall[pol]:.1f}"]) + " |")
    return lines + [""]


def big_runs(args, log) -> tuple[list[dict], list[dict]]:
    """``big_run`` of the chosen policies for every seed of ``--big-seeds``; rows tagged with their seed."""
    names = args.big_policies.split(",")
    pols = [p for p in POLICIES if p[0] in names]
    rows, infos = [], []
    for seed in (int(x) for x in args.big_seeds.split(",")):
        out, info = big_run(75_000, 250, pols, seed, 1.0, "philly", log)
        rows += [{**r, "seed": seed} for r in out]
        infos.append(info)
    return rows, infos


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="200/400 jobs on 8 servers, one seed")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--big", action="store_true", help="also the 75,000-job run (250 x 8 GPUs)")
    ap.add_argument("--big-only", action="store_true",
                    help="only the 75,000-job run; writes asrpt_ablation_big.md (with --big-policies)")
    ap.add_argument("--big-policies", default="A-SRPT,A-SRPT nb,A-SRPT bf,A-SRPT nb+bf,A-SRPT arr+nb+bf,"
                                               "WCS-SubTime,WCS-Duration")
    ap.add_argument("--big-seeds", default="0", help="comma-separated seeds of the 75,000-job run (default 0)")
    args = ap.parse_args(argv)
    log = lambda s: print(s, flush=True)  # noqa: E731
    if args.big_only:
        rows, infos = big_runs(args, log)
        seeds = "" if args.big_seeds == "0" else f" --big-seeds {args.big_seeds}"
        lines = big_lines(rows, infos, f"`.venv/bin/python benchmarks/asrpt_ablation.py --big-only --big-policies "
                                       f"'{args.big_policies}'{seeds}`")
        with atomic_open(RESULTS / "asrpt_ablation_big.md", "w") as fh:
            fh.write("\n".join(lines) + "\n")
        return 0
    quick = args.quick
    seeds = [0] if quick else list(range(args.seeds))
    servers = 8 if quick else 16
    counts = [200, 400] if quick else [2000, 4000]
    t0 = time.perf_counter()
    df = run_grid(Data(), counts, seeds, servers, 1.0, log=log)
    wall = time.perf_counter() - t0
    cmd = "`.venv/bin/python benchmarks/asrpt_ablation.py" + (" --quick" if quick else f" --seeds {len(seeds)}") \
        + (" --big" if args.big else "") + "`"
    lines = [f"# Ablation: why A-SRPT loses at scale (ours: our simulator{', QUICK run' if quick else ''})", "",
             f"Command: {cmd} (wall {wall:.0f} s for the grid). Setup = Fig. 6 of `benchmarks/asrpt.py`: "
             f"{servers} servers x 8 GPUs, NIC 10 Gbps, offered load 1.0, first N Philly test jobs mapped to "
             f"Table I (seeds {seeds}: mapping + forest), random-forest predictions, tau = 100, `MixedPerf`, "
             "event mode. Total JCT = sum (completion - arrival) in hours, mean over seeds; the ratio columns "
             "give each seed's total divided by A-SRPT's on the same workload (< 1 = better than A-SRPT).", "",
             "Variants (options of `optsched.sim.asrpt.ASRPT`): **nb** `window_blocks_queue=False` (later jobs "
             "may start while the head waits in its delay window, on GPUs other than the head's current "
             "SelectMost picks, if they need no window themselves); **bf** `head_blocks_queue=False` (the same "
             "backfill past a head that does not fit, no reservation); **arr** `release=\"arrival\"` (queued at "
             "arrival in p~_i order instead of at the virtual completion).", "",
             *table(df), ""]
    if args.big:
        rows, infos = big_runs(args, log)
        lines += big_lines(rows, infos, cmd)
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "asrpt_ablation_quick.md" if quick else "asrpt_ablation.md"
    with atomic_open(RESULTS / name, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    df.to_csv(RESULTS / name.replace(".md", ".csv"), index=False)
    log(f"wrote {RESULTS / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
