"""Issue 29: CPU time of the slow policies (Optimus, Gavel max-min, Gavel makespan) beside SRTF, before and after.

Each run is a fresh process of ``benchmarks/sim_equivalence.py``'s speed child: ``replicate_philly(JOBS,
130 jobs/h, seed 0)`` (Philly-derived jobs) on 2,000 GPUs (500 x 4), round mode, consolidated placement, the
policy's default options and the default (constant) performance model (one GPU type: Gavel's LP has one
column per job). The base is a temporary git worktree of ``--base`` (default :data:`DEFAULT_BASE`, main before
the speed-up; removed at the end), the candidate this checkout; both run with this venv's python, alternating
run by run (who goes first alternates too). Reported per policy and side: the child's whole-process CPU seconds
(user + sys, ``os.wait4``), medians over ``--repeats``, the candidate / base ratio, each side's ratio to its own
SRTF median, and whether every run's per-job table (``sim_equivalence.COMMON`` columns) is bit-identical to the
base's first run.

Commands (from the repository root):

* ``python -m benchmarks.policy_speed [--jobs 100000] [--repeats 3] [--policies srtf,optimus,gavel,gavel-makespan]``:
  writes ``docs/results/policy_speed.md`` (atomically) and prints it;
* ``python -m benchmarks.policy_speed --quick``: 5,000 jobs, one repeat, printed only (writes nothing tracked);
  ``--out FILE`` writes the table there instead.

All numbers are OUR simulator's on a shared 2-core machine (the load average is printed with the table); none
is a paper's. Exit status 1 if a per-job table differs.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from benchmarks.sim_equivalence import (  # noqa: E402
    BaseTree,
    _child_cmd,
    _env,
    _head,
    _run_measured,
    first_difference,
    md_table,
)

DEFAULT_BASE = "53eea95"  # main before issue 29's speed-up of Gavel and Optimus
POLICIES = ("srtf", "optimus", "gavel", "gavel-makespan")
RESULT = ROOT / "docs" / "results" / "policy_speed.md"


def measure(base_src: Path, policies: list[str], jobs: int, repeats: int, workdir: str) -> tuple[dict, dict]:
    """CPU seconds per (policy, side) over the repeats, and per policy the notes of the runs whose per-job
    table differs from the base's first."""
    sides = {"base": base_src, "candidate": ROOT / "src"}
    cpu: dict[tuple[str, str], list[float]] = {}
    notes: dict[str, list[str]] = {p: [] for p in policies}
    first: dict[str, object] = {}
    for k in range(repeats):
        for pol in policies:
            for who in (["base", "candidate"] if k % 2 == 0 else ["candidate", "base"]):
                src = sides[who]
                out = Path(workdir) / f"{who}-{pol}-{k}.pkl"
                sec, text = _run_measured(_child_cmd("_speed-child", src, "--policy", pol, "--jobs", str(jobs),
                                                     "--out", str(out), "--api", "legacy"), _env(src), workdir)
                info = json.loads(text.strip().splitlines()[-1])
                cpu.setdefault((pol, who), []).append(sec)
                table = pickle.loads(out.read_bytes())
                out.unlink()
                if pol not in first:
                    first[pol] = table
                else:
                    diff = first_difference(first[pol], table)  # type: ignore[arg-type]
                    if diff is not None:
                        notes[pol].append(f"{who} run {k + 1}: job {diff[0]} {diff[1]} ({diff[2]} jobs)")
                print(f"{pol} [{who}] run {k + 1}: process {sec:.2f} s CPU, simulate() {info['sim_cpu_s']:.2f} s",
                      file=sys.stderr, flush=True)
    return cpu, notes


def report(cpu: dict, notes: dict, policies: list[str], args: argparse.Namespace, base_commit: str,
           head: str) -> str:
    med = {key: statistics.median(v) for key, v in cpu.items()}
    rows = []
    for pol in policies:
        b, c = med[pol, "base"], med[pol, "candidate"]
        rel = [f"{med[pol, w] / med['srtf', w]:.2f}" if "srtf" in policies else "-" for w in ("base", "candidate")]
        rows.append([pol, ", ".join(f"{x:.2f}" for x in cpu[pol, "base"]), f"{b:.2f}",
                     ", ".join(f"{x:.2f}" for x in cpu[pol, "candidate"]), f"{c:.2f}", f"{c / b:.3f}", *rel,
                     "yes" if not notes[pol] else "NO: " + "; ".join(notes[pol])])
    header = ["policy", "base CPU s (runs)", "base median", "candidate CPU s (runs)", "candidate median",
              "candidate / base", "base / base SRTF", "candidate / candidate SRTF", "per-job identical"]
    load = os.getloadavg()
    cmd = "python -m benchmarks.policy_speed" + (" --quick" if args.quick else
                                                 f" --jobs {args.jobs} --repeats {args.repeats}")
    return "\n".join([
        "# Policy speed before and after issue 29 (our simulator)", "",
        f"Command: `{cmd}`; base {base_commit}, candidate {head}. `replicate_philly({args.jobs:,}, 130 jobs/h, "
        "seed 0)` on 2,000 GPUs (500 x 4), round mode, consolidated placement, constant performance model. "
        "Whole-process CPU seconds (user + sys) of a fresh child per run (start-up, building the workload, "
        "simulating, writing its per-job table); base and candidate alternate. Ratios of medians. "
        f"Load average at the end: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f} on {os.cpu_count()} cores. "
        "'per-job identical': every run's per-job table equals the base's first run's, bit for bit.",
        "", md_table(header, rows), ""])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.policy_speed", description=__doc__.splitlines()[0])
    ap.add_argument("--base", default=DEFAULT_BASE, help="git ref of the code before (default %(default)s)")
    ap.add_argument("--base-src", default=None, help="an existing src folder as the base instead of a worktree")
    ap.add_argument("--jobs", type=int, default=100_000, help="Philly-derived jobs (default %(default)s)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per side and policy (default %(default)s)")
    ap.add_argument("--policies", default=",".join(POLICIES), help="comma-separated (default %(default)s)")
    ap.add_argument("--quick", action="store_true", help="5,000 jobs, one repeat, nothing written")
    ap.add_argument("--out", default=None, help="write the table here (default: docs/results/policy_speed.md, "
                    "none with --quick)")
    args = ap.parse_args(argv)
    if args.quick:
        args.jobs, args.repeats = 5_000, 1
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    if args.jobs < 1 or args.repeats < 1 or not policies:
        print("--jobs and --repeats must be positive and --policies not empty", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else (None if args.quick else RESULT)
    if out is not None:
        from optsched.io import check_output

        check_output(out)
    head = _head()
    base = BaseTree(args.base, args.base_src)
    with base as base_src, tempfile.TemporaryDirectory(prefix="policy-speed-") as d:
        cpu, notes = measure(base_src, policies, args.jobs, args.repeats, d)
    text = report(cpu, notes, policies, args, base.commit, head)
    print(text)
    if out is not None:
        from optsched.io import atomic_open

        with atomic_open(out) as fh:
            fh.write(text)
    return 0 if not any(notes.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
