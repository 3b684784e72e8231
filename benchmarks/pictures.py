"""The pictures the documentation shows, drawn by the library's own plot functions on bundled or generated data
(no shared data needed): a Gantt chart of a heuristic schedule beside the proven optimum, a simulation's GPU
occupancy per server, and the gap-to-optimum plot of a small batch.

Run: ``.venv/bin/python benchmarks/pictures.py`` (about 20 s) writes ``docs/results/pictures_*.png`` and the
Perfetto trace ``docs/results/pictures_trace.json``; ``--quick`` writes ``pictures_quick_*`` (untracked) instead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import optsched  # noqa: E402
from optsched.experiments import solve_many  # noqa: E402
from optsched.generators.workload import synthetic_workload  # noqa: E402
from optsched.io import save_figure  # noqa: E402
from optsched.plot import gantt, gap_table, occupancy, plot_gaps, save_axes, write_chrome_trace  # noqa: E402
from optsched.sim import simulate  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="write pictures_quick_* (untracked) instead")
    args = ap.parse_args(argv)
    out = ROOT / "docs" / "results"
    stem = "pictures_quick" if args.quick else "pictures"
    names = {k: f"{stem}_{k}" for k in ("gantt.png", "occupancy.png", "trace.json", "gaps.png")}

    # 1. a queued, contended RAR-DDLS instance: SJF-BCO's schedule above the proven optimum
    inst = optsched.generate("rar", jobs=6, servers=3, seed=0)
    opt = optsched.solve(inst, "exact", deterministic_limit=60, num_workers=1, seed=0)
    heur = optsched.solve(inst, "sjf-bco")
    reference = opt.objective if opt.status.value == "optimal" else None
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8.5, 7), sharex=True)
    gantt(inst, heur.schedule, top, optimum=reference,
          title=f"{inst.name}: SJF-BCO, makespan {heur.objective:g} (our solvers)")
    gantt(inst, opt.schedule, bottom, optimum=reference,
          title=f"{inst.name}: CP-SAT, makespan {opt.objective:g} ({opt.status.value})")
    top.set_xlabel("")      # one time axis, under the lower panel
    fig.tight_layout()
    save_figure(fig, out / names["gantt.png"], bbox_inches="tight")

    # 2. a simulation's GPU occupancy per server, and its segments as a Perfetto trace
    wl = synthetic_workload(n_jobs=60, load_jph=6.0, seed=0)
    res = simulate(wl, servers=4, gpus_per_server=4, scheduler="las", mode="event")
    save_axes(occupancy(res), out / names["occupancy.png"])
    write_chrome_trace(res, out / names["trace.json"])

    # 3. gaps to the optimum on a small batch
    batch = {f"rar-j4-s2-seed{s}": optsched.generate("rar", jobs=4, servers=2, seed=s) for s in range(10)}
    runs = solve_many(batch, ["ff", "ls", "rand", "sjf-bco", "exact"], deterministic_limit=30, threads=1,
                      workers=1, progress=False)
    ax = plot_gaps(gap_table(runs), title="RAR-DDLS, 4 jobs on 2 servers, seeds 0-9: gap to the CP-SAT optimum "
                                          "(our solvers)")
    save_axes(ax, out / names["gaps.png"])
    for name in names.values():
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
