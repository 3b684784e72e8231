"""Issue 29's offline targets: SJF-BCO, FF and LS from 10,000 to 100,000 jobs, and ``evaluate``, base vs this checkout.

The issue-16 benchmark (``benchmarks/scale.py``) stops at 10,000 jobs; this one reuses its measuring (one whole
``python -m optsched.cli`` process per figure, run with ``PYTHONPATH`` at one tree's ``src``; CPU seconds = user +
system of that very child from ``os.wait4``, i.e. its ``getrusage``; peak RSS from the same call) and goes to 100,000
jobs. The base tree is ``git archive BASE src`` of ``--base`` (default: the merge base of ``HEAD`` and ``main``)
unpacked in a temporary folder; this checkout is the other tree. Each case runs the two trees alternately (who goes
first alternates too) and reports medians; with ``--parallel`` the two trees' processes of a case run at the same time
(one per core: half the wall time, the same conditions for both).

Cases, on ``random_rar_instance(n, n // 10, 0)`` (the paper's rules), generated once by this checkout and given to
both trees:

* ``solve FILE -a sjf-bco|ff|ls -o OUT`` for n = 10,000 and 100,000 (``--quick``: 1,000 and 10,000); targets at
  100,000 jobs: under 30 CPU seconds each, growth exponent log(t_100k / t_10k) / log(10) at most 1.15;
* ``evaluate FILE SCHEDULE --json -v`` of the largest SJF-BCO schedule: target under 3 s;
* identity: for every case the two trees' schedule files must hold the same starts and placements, and the two
  trees' ``evaluate --json -v`` of their own schedules the same makespan, average JCT and per-job completions. Any
  difference is printed and makes the run exit with status 1.

Run: ``.venv/bin/python benchmarks/offline_scaling.py [--base COMMIT] [--repeats K] [--parallel] [--quick]``. The full
run writes ``docs/results/offline_scaling.md``; ``--quick`` writes to a temporary folder only. All numbers are OUR
code's on a shared 2-core machine (the load average is printed with the table), none is a paper's.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (str(ROOT / "src"), str(Path(__file__).resolve().parent)):
    if p not in sys.path:
        sys.path.insert(0, p)

from optsched import save  # noqa: E402
from optsched.generators.rar import random_rar_instance  # noqa: E402
from optsched.io import atomic_open  # noqa: E402
from scale import fmt_cpu, run_cli, same_schedule  # noqa: E402

RESULTS = ROOT / "docs" / "results"
ALGORITHMS = ("sjf-bco", "ff", "ls")
CPU_TARGET, GROWTH_TARGET, EVAL_TARGET = 30.0, 1.15, 3.0


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


def base_tree(commit: str, work: Path) -> Path:
    """``src`` of ``commit``, unpacked from ``git archive`` under ``work``; returns that ``src`` folder."""
    dest = work / "base"
    dest.mkdir()
    archive = work / "base.tar"
    with open(archive, "wb") as f:
        subprocess.run(["git", "-C", str(ROOT), "archive", commit, "src"], check=True, stdout=f)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    archive.unlink()
    return dest / "src"


def figures_of(r: dict) -> dict:
    """What an ``evaluate --json -v`` process printed, without the file paths (empty if it was cut)."""
    if r["timeout"]:
        return {}
    doc = json.loads(r["stdout"])
    for key in ("instance", "schedule"):
        doc.pop(key, None)
    return doc


def growth(t_small: float, t_big: float, factor: float) -> float:
    return math.log(t_big / t_small) / math.log(factor) if t_small > 0 and math.isfinite(t_big) else math.inf


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default=None, help="commit to compare with (default: merge base of HEAD and main)")
    ap.add_argument("--repeats", type=int, default=1, help="runs per case and tree (default 1)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds before a run is cut (default 1800)")
    ap.add_argument("--quick", action="store_true", help="1,000 and 10,000 jobs, temporary output")
    ap.add_argument("--parallel", action="store_true", help="run the two trees' processes of a case together")
    args = ap.parse_args(argv)
    pool = ThreadPoolExecutor(2) if args.parallel else None

    turn = [0]

    def both(cli: list[str], label: str) -> dict[str, dict]:
        """One CLI process per tree (``{who}`` in ``cli`` replaced by the tree's name), in turn (who goes first
        alternates) or together; their measurements."""
        order = list(trees.items())[::1 if turn[0] % 2 == 0 else -1]
        turn[0] += 1
        cmd = {who: [a.replace("{who}", who) for a in cli] for who in trees}
        if pool is not None:
            futures = {who: pool.submit(run_cli, src, cmd[who], args.timeout) for who, src in order}
            out = {who: f.result() for who, f in futures.items()}
        else:
            out = {who: run_cli(src, cmd[who], args.timeout) for who, src in order}
        for who, r in out.items():
            print(f"{label} [{who}]: cpu {r['cpu']:.2f} s, wall {r['wall']:.2f} s, rss {r['rss_mb']:.0f} MiB",
                  file=sys.stderr, flush=True)
        return out

    base = args.base or git("merge-base", "HEAD", "main")
    base_sha, head_sha = git("rev-parse", "--short", base), git("rev-parse", "--short", "HEAD")
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "src") else ""
    sizes = (1_000, 10_000) if args.quick else (10_000, 100_000)
    work = Path(tempfile.mkdtemp(prefix="optsched-offline-"))
    trees = {"base": base_tree(base, work), "new": ROOT / "src"}
    out_dir = work if args.quick else RESULTS

    runs: dict[tuple[str, int, str], list[dict]] = {}
    identical: dict[tuple[str, int], str] = {}
    problems: list[str] = []
    for n in sizes:
        inst = work / f"rar-{n}.json"
        save(random_rar_instance(n, n // 10, 0), inst)
        for alg in ALGORITHMS:
            for who in trees:
                runs[alg, n, who] = []
            for k in range(args.repeats):
                got = both(["solve", str(inst), "-a", alg, "-o", str(work / f"{n}-{alg}-{{who}}.schedule.json")],
                           f"{n} jobs {alg} #{k}")
                for who, r in got.items():
                    runs[alg, n, who].append(r)
            same = same_schedule(work / f"{n}-{alg}-base.schedule.json", work / f"{n}-{alg}-new.schedule.json")
            got = both(["evaluate", str(inst), str(work / f"{n}-{alg}-{{who}}.schedule.json"), "--json", "-v"],
                       f"evaluate {n} jobs {alg}")
            figures = {who: figures_of(r) for who, r in got.items()}
            same_eval = "yes" if figures["base"] and figures["base"] == figures["new"] else "NO"
            identical[alg, n] = f"{same} / {same_eval}"
            if same != "yes" or same_eval != "yes":
                problems.append(f"{alg} at {n} jobs: same schedule {same}, same evaluation {same_eval}")
    big = sizes[-1]
    inst, sched = work / f"rar-{big}.json", work / f"{big}-sjf-bco-new.schedule.json"
    ev: dict[str, list[dict]] = {who: [] for who in trees}
    for k in range(args.repeats):
        for who, r in both(["evaluate", str(inst), str(sched), "--json", "-v"], f"evaluate {big} SJF-BCO #{k}").items():
            ev[who].append(r)

    def med(rs: list[dict]) -> float:
        return math.inf if any(r["timeout"] for r in rs) else statistics.median(r["cpu"] for r in rs)

    def rss(rs: list[dict]) -> str:
        return f"{max(r['rss_mb'] for r in rs):.0f}"

    rows = []
    for alg in ALGORITHMS:
        for n in sizes:
            b, a = runs[alg, n, "base"], runs[alg, n, "new"]
            rows.append(f"| {alg} | {n:,} | {fmt_cpu(b)} | {fmt_cpu(a)} | {med(a) / med(b):.3f} | {rss(b)} | {rss(a)} "
                        f"| {identical[alg, n]} |")
    rows.append(f"| evaluate (SJF-BCO schedule) | {big:,} | {fmt_cpu(ev['base'])} | {fmt_cpu(ev['new'])} | "
                f"{med(ev['new']) / med(ev['base']):.3f} | {rss(ev['base'])} | {rss(ev['new'])} | - |")
    factor = big / sizes[0]
    grow = []
    for alg in ALGORITHMS:
        gb = growth(med(runs[alg, sizes[0], "base"]), med(runs[alg, big, "base"]), factor)
        ga = growth(med(runs[alg, sizes[0], "new"]), med(runs[alg, big, "new"]), factor)
        t_big = med(runs[alg, big, "new"])
        grow.append(f"| {alg} | {gb:.2f} | {ga:.2f} | {'yes' if ga <= GROWTH_TARGET else 'no'} | "
                    f"{'yes' if t_big < CPU_TARGET else 'no'} ({t_big:.1f} s) |")
    t_eval = med(ev["new"])
    load = os.getloadavg()
    cmd = ".venv/bin/python benchmarks/offline_scaling.py" + (f" --base {args.base}" if args.base else "") + \
        (f" --repeats {args.repeats}" if args.repeats != 1 else "") + (" --parallel" if args.parallel else "") + \
        (" --quick" if args.quick else "")
    text = "\n".join([
        "# RAR-DDLS offline heuristics from 10,000 to 100,000 jobs: base / new (issue 29, our code)"
        if not args.quick else "# RAR-DDLS offline heuristics, quick run (1,000 / 10,000 jobs; issue 29, our code)", "",
        f"Command: `{cmd}`. Base: `{base_sha}` (`git archive` of its `src`); new: `{head_sha}`{dirty}. Machine: "
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; load average after the "
        f"run {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (a shared machine: compare the side-by-side ratios). "
        f"Instances: `random_rar_instance(n, n // 10, 0)` (the paper's rules), generated once and given to both "
        "trees.", "",
        "Each figure is a whole CLI process (`python -m optsched.cli solve FILE -a ALG -o OUT`, or `evaluate FILE "
        f"SCHEDULE --json -v`): CPU seconds (user + system of the child), median of {args.repeats} run(s) per tree"
        + (" (the two trees' processes run at the same time)" if args.parallel else "") + ", "
        "and its peak resident memory. 'identical': the two trees wrote the same starts and placements / the two "
        "trees' evaluations of their own schedules give the same makespan, average JCT and every job's completion.",
        "", "| case | jobs | CPU s base | CPU s new | new / base | RSS MiB base | RSS MiB new | identical |",
        "|---|---:|---:|---:|---:|---:|---:|---|", *rows, "",
        f"Growth exponent log(t_{big} / t_{sizes[0]}) / log({factor:g}) of the CPU seconds, and the issue's targets "
        f"(exponent <= {GROWTH_TARGET}, under {CPU_TARGET:g} s at {big:,} jobs):", "",
        "| algorithm | exponent base | exponent new | exponent target met | time target met (new) |",
        "|---|---:|---:|---|---|", *grow, "",
        f"`evaluate` of the {big:,}-job SJF-BCO schedule: {t_eval:.2f} s new (target under {EVAL_TARGET:g} s: "
        f"{'met' if t_eval < EVAL_TARGET else 'not met'}).", "",
    ] + ([f"**Differences:** {'; '.join(problems)}", ""] if problems else []))
    target = out_dir / ("offline_scaling_quick.md" if args.quick else "offline_scaling.md")
    with atomic_open(target) as f:
        f.write(text)
    print(text)
    print(f"written to {target}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
