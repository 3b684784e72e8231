"""Issue 16's targets: the RAR-DDLS heuristics and evaluator at scale, and the CLI's start-up, before vs after.

Every figure is a whole ``optsched`` CLI process (``python -m optsched.cli ...``, start-up, loading, algorithm,
evaluation, writing) run in a fresh process with ``PYTHONPATH`` set to one tree's ``src``: the CPU seconds
(user + system, from ``/usr/bin/time``), the wall seconds and the peak resident memory. The two trees are
run alternately (who goes first alternates too) and the medians are reported with their ratio; the schedules the
two trees write are compared (same starts and placements). All numbers are OUR code's on this shared 2-core
machine (the load average is printed with the table), none is the paper's.

Cases:

* ``solve PRESET -a sjf-bco`` on ``mobihoc22_preset(0)`` (160 jobs, 20 servers): target under 0.5 s;
* ``solve -a sjf-bco|ff|ls`` on ``random_rar_instance(n, n / 10, 0)`` (the paper's rules) for n = 1,000 and
  10,000 jobs: target under 60 s and 1 GB each at 10,000, growth exponent log(t10k / t1k) / log(10) <= 1.2;
* ``evaluate`` of the 10,000-job SJF-BCO schedule: target under 5 s;
* with ``--sim JOBS`` (a separate table, ``docs/results/scale_sim.md``): CPU seconds of FIFO, LAS and Tiresias
  on JOBS Philly-derived jobs (2,000 GPUs, round mode): target LAS and Tiresias within 1.5x of FIFO;
* with ``--exact`` (a separate table, ``docs/results/scale_exact.md``): the exact model on 10, 12 and 16 jobs /
  4 servers where jobs queue and contention binds, 60 s each.

Run: ``.venv/bin/python benchmarks/scale.py --before OTHER_SRC [--repeats K] [--quick]``; ``OTHER_SRC`` is the
``src`` folder of the code to compare with (e.g. a worktree of the branch point). The full run writes
``docs/results/scale.md``; ``--quick`` (n = 300 and 1,000, one repeat) writes to a temporary folder only.
Slow "before" cases are cut at ``--timeout`` seconds (reported as "> timeout").
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from optsched import load_schedule, save  # noqa: E402
from optsched.generators.rar import mobihoc22_preset, random_rar_instance  # noqa: E402
from optsched.io import atomic_open  # noqa: E402

RESULTS = ROOT / "docs" / "results"


def run_cli(src: Path, args: list[str], timeout: float) -> dict:
    """One CLI process: CPU seconds (user + sys) and peak RSS (MiB) of that very child (``os.wait4``), wall
    seconds and its standard output. Past ``timeout`` wall seconds it is killed and reported as a timeout, with
    the CPU seconds it had used by then (``/proc``)."""
    return run_python(src, ["-m", "optsched.cli", *args], timeout)


def run_python(src: Path, args: list[str], timeout: float) -> dict:
    """``python ARGS`` with ``PYTHONPATH=src``, measured as :func:`run_cli` says."""
    from optsched.data import data_root

    env = {**os.environ, "PYTHONPATH": str(src), "OPTSCHED_DATA": str(data_root())}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, *args], env=env, stdout=out, stderr=err, text=True)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > timeout:
                with open(f"/proc/{proc.pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
                proc.kill()
                os.wait4(proc.pid, 0)
                return {"timeout": True, "wall": math.inf, "cpu": math.inf, "cpu_at_cut": cpu,
                        "rss_mb": math.nan}
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read()
        if proc.returncode not in (0, 3):
            raise RuntimeError(f"{args}: exit {proc.returncode}: {err.read()[-500:]}")
    return {"timeout": False, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024, "stdout": stdout}


def ratio_text(before: list[dict], after: list[dict]) -> str:
    """after / before of the median CPU seconds; '< x' when the before run was cut (its CPU at the cut)."""
    a = statistics.median(r["cpu"] for r in after)
    cut = [r["cpu_at_cut"] for r in before if r["timeout"]]
    if cut:
        return f"< {a / min(cut):.3f}"
    return f"{a / statistics.median(r['cpu'] for r in before):.3f}"


def fmt_cpu(runs: list[dict]) -> str:
    """Median CPU seconds, or '> X (cut)' with the CPU seconds used when the first run was cut."""
    if any(r["timeout"] for r in runs):
        return f"> {min(r['cpu_at_cut'] for r in runs if r['timeout']):.0f} (cut)"
    return f"{statistics.median(r['cpu'] for r in runs):.2f}"


SIM_RUN = """
import json, sys
from optsched.sim import simulate
from optsched.generators.workload import load_philly, replicate_philly
sched, n = sys.argv[1], int(sys.argv[2])
wl = replicate_philly(n, 130.0, 0, frame=load_philly())
s = simulate(wl, servers=500, gpus_per_server=4, scheduler=sched, placement="consolidated", mode="round").summary
print(json.dumps({k: s[k] for k in ("events", "decisions", "avg_jct_s", "preemptions_total")}))
"""


def sim_table(before: Path, after: Path, n: int, repeats: int) -> str:
    """CPU seconds of a whole process building ``replicate_philly(n, 130 jobs/h)`` and simulating it on 2,000
    GPUs (round mode, consolidated placement) with FIFO, LAS and Tiresias, both trees alternating; each
    policy's ratio to FIFO within a tree (the issue's target: LAS and Tiresias within 1.5x of FIFO)."""
    cpu: dict[tuple[str, str], list[float]] = {}
    same: dict[str, str] = {}
    for sched in ("fifo", "las", "tiresias"):
        seen: dict[str, str] = {}
        for k in range(repeats):
            pair = [("before", before), ("after", after)]
            for who, src in (pair if k % 2 == 0 else pair[::-1]):
                r = run_python(src, ["-c", SIM_RUN, sched, str(n)], 3600)
                cpu.setdefault((sched, who), []).append(r["cpu"])
                seen[who] = r["stdout"].strip().splitlines()[-1]
                print(f"sim {sched} [{who}]: cpu {r['cpu']:.2f} s wall {r['wall']:.2f} s", file=sys.stderr,
                      flush=True)
        same[sched] = "yes" if seen["before"] == seen["after"] else f"NO: {seen}"
    rows = []
    for sched in ("fifo", "las", "tiresias"):
        b, a = statistics.median(cpu[sched, "before"]), statistics.median(cpu[sched, "after"])
        fb, fa = statistics.median(cpu["fifo", "before"]), statistics.median(cpu["fifo", "after"])
        rows.append(f"| {sched} | {', '.join(f'{x:.2f}' for x in cpu[sched, 'before'])} | {b:.2f} | {b / fb:.2f} | "
                    f"{', '.join(f'{x:.2f}' for x in cpu[sched, 'after'])} | {a:.2f} | {a / fa:.2f} | {same[sched]} |")
    return "\n".join([
        f"CPU seconds of one process that builds `replicate_philly({n:,}, 130 jobs/h, seed 0)` and simulates it on "
        "2,000 GPUs (500 x 4), round mode, consolidated placement (our simulator); both trees alternating, each "
        "run in a fresh process. 'x FIFO': the policy's median over FIFO's median in the same tree. 'same': the "
        "two trees give the same events, decisions, average JCT and preemptions.", "",
        "| policy | before runs | before median | before x FIFO | after runs | after median | after x FIFO | same |",
        "|---|---|---|---|---|---|---|---|", *rows, ""])


def exact_table(before: Path, after: Path, time_limit: float, work: Path) -> str:
    """``optsched solve FILE -a exact --time-limit L`` (CP-SAT, its default 2 workers) on the default
    generator's instances where jobs queue and contention binds (F in [100, 600], as the bundled ``queued``
    family), 10, 12 and 16 jobs on 4 servers, seeds 0 and 1, with both trees: status and wall seconds."""
    from optsched.generators.rar import contended_rar_instance

    rows = []
    for n in (10, 12, 16):
        for k in (0, 1):
            p = work / f"queued-{n}-{k}.json"
            save(contended_rar_instance(n, 4, k, iterations=(100, 600), horizon=400), p)
            cells = [f"{n} jobs / 4 servers, seed {k}"]
            for src in (before, after):
                r = run_cli(src, ["solve", str(p), "-a", "exact", "--time-limit", str(time_limit)],
                            time_limit * 4)
                first = r["stdout"].splitlines()[0] if r.get("stdout") else ""
                fields = dict(f.split("=", 1) for f in first.split() if "=" in f)
                cells += [fields.get("status", "?"), fields.get("objective", "?"),
                          fields.get("lower_bound", fields.get("bound", "?")), f"{r['wall']:.1f}"]
                print(f"exact {cells[0]} [{src}]: {cells[-4:]}", file=sys.stderr, flush=True)
            rows.append("| " + " | ".join(cells) + " |")
    return "\n".join([
        f"CP-SAT (`optsched solve FILE -a exact --time-limit {time_limit:g}`, 2 workers) on "
        "`contended_rar_instance(n, 4, seed, iterations=(100, 600), horizon=400)`: status, makespan, bound and "
        "wall seconds of the whole process (one run each, the machine shared).", "",
        "| instance | before status | before makespan | before bound | before wall s | after status | after makespan "
        "| after bound | after wall s |", "|---|---|---|---|---|---|---|---|---|", *rows, ""])


def repeats_or(value: int | None, default: int) -> int:
    return default if value is None else value


def same_schedule(a: Path, b: Path) -> str:
    if not (a.exists() and b.exists()):
        return "n/a"
    sa, sb = load_schedule(a), load_schedule(b)
    return "yes" if [(j.id, j.start, dict(j.placement)) for j in sa] == [(j.id, j.start, dict(j.placement))
                                                                        for j in sb] else "NO"


def fmt(xs: list[float]) -> str:
    m = statistics.median(xs)
    return "> timeout" if math.isinf(m) else f"{m:.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="src folder of the code to compare with")
    ap.add_argument("--repeats", type=int, default=None, help="runs per case and tree (default 3; quick 1)")
    ap.add_argument("--big-repeats", type=int, default=None,
                    help="runs per tree of the largest instance's cases (default: --repeats)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before a run is cut (default 900)")
    ap.add_argument("--quick", action="store_true", help="300 and 1,000 jobs, one repeat, temporary output")
    ap.add_argument("--exact", action="store_true",
                    help="only the exact RAR-DDLS model's table (writes docs/results/scale_exact.md)")
    ap.add_argument("--sim", type=int, default=None, metavar="JOBS",
                    help="only the simulator's table with JOBS Philly jobs (writes docs/results/scale_sim.md)")
    args = ap.parse_args(argv)
    before, after = Path(args.before).resolve(), ROOT / "src"
    if args.sim:
        text = ("# Simulator: LAS and Tiresias against FIFO, before / after (issue 16, our simulator)\n\n"
                f"Command: `.venv/bin/python benchmarks/scale.py --before {args.before} --sim {args.sim} "
                f"--repeats {repeats_or(args.repeats, 3)}`.\n\n" + sim_table(before, after, args.sim,
                                                                             repeats_or(args.repeats, 3)))
        with atomic_open(RESULTS / "scale_sim.md") as f:
            f.write(text)
        print(text)
        return 0
    if args.exact:
        text = "# Exact RAR-DDLS model: before / after (issue 16, our solver)\n\n" + exact_table(
            before, after, 60.0, Path(tempfile.mkdtemp(prefix="optsched-scale-")))
        text = text.replace("(one run each", f"(`.venv/bin/python benchmarks/scale.py --before {args.before} "
                            "--exact`; one run each")
        with atomic_open(RESULTS / "scale_exact.md") as f:
            f.write(text)
        print(text)
        return 0
    repeats = args.repeats or (1 if args.quick else 3)
    sizes = (300, 1000) if args.quick else (1000, 10_000)
    work = Path(tempfile.mkdtemp(prefix="optsched-scale-"))
    out_dir = work if args.quick else RESULTS

    cases: list[tuple[str, str, list[str], int]] = []   # (label, instance file, args, repeats)
    preset = work / "preset.json"
    save(mobihoc22_preset(0), preset)
    cases.append(("solve mobihoc22 preset (160 jobs) -a sjf-bco", "preset", ["solve", str(preset), "-a", "sjf-bco"],
                  max(repeats, 5)))
    for n in sizes:
        p = work / f"rar-{n}.json"
        save(random_rar_instance(n, n // 10, 0), p)
        for alg in ("sjf-bco", "ff", "ls"):
            reps = args.big_repeats or repeats if n == sizes[-1] else repeats
            cases.append((f"solve {n} jobs / {n // 10} servers -a {alg}", f"{n}-{alg}", ["solve", str(p), "-a", alg],
                          reps))
    rows, cpu_med = [], {}
    for label, tag, cli, reps in cases:
        runs: dict[str, list[dict]] = {"before": [], "after": []}
        for k in range(reps):
            order = [("before", before), ("after", after)]
            for who, src in (order if k % 2 == 0 else order[::-1]):
                if who == "before" and any(r["timeout"] for r in runs["before"]):
                    continue  # cut once: not run again
                sched = work / f"{tag}-{who}.schedule.json"
                extra = ["-o", str(sched)] if cli[0] == "solve" else []
                r = run_cli(src, cli + extra, args.timeout)
                runs[who].append(r)
                print(f"{label} [{who}]: cpu {r['cpu']:.2f} s wall {r['wall']:.2f} s rss {r['rss_mb']:.0f} MiB",
                      file=sys.stderr, flush=True)
        same = same_schedule(work / f"{tag}-before.schedule.json", work / f"{tag}-after.schedule.json")
        b_cpu, a_cpu = [r["cpu"] for r in runs["before"]], [r["cpu"] for r in runs["after"]]
        cpu_med[tag] = (statistics.median(b_cpu), statistics.median(a_cpu))
        rows.append(f"| {label} | {fmt_cpu(runs['before'])} | {fmt_cpu(runs['after'])} | "
                    f"{ratio_text(runs['before'], runs['after'])} | "
                    f"{fmt([r['wall'] for r in runs['before']])} | {fmt([r['wall'] for r in runs['after']])} | "
                    f"{max((r['rss_mb'] for r in runs['before']), default=math.nan):.0f} | "
                    f"{max((r['rss_mb'] for r in runs['after']), default=math.nan):.0f} | {same} | "
                    f"{len(runs['after'])} |")
    big = sizes[-1]
    sched = work / f"{big}-sjf-bco-after.schedule.json"
    ev: dict[str, list[dict]] = {"before": [], "after": []}
    for k in range(repeats):
        pair = [("before", before), ("after", after)]
        for who, src in (pair if k % 2 == 0 else pair[::-1]):
            ev[who].append(run_cli(src, ["evaluate", str(work / f"rar-{big}.json"), str(sched)], args.timeout))
    b_cpu, a_cpu = [r["cpu"] for r in ev["before"]], [r["cpu"] for r in ev["after"]]
    ratio = statistics.median(a_cpu) / statistics.median(b_cpu)
    rows.append(f"| evaluate the {big}-job SJF-BCO schedule | {fmt(b_cpu)} | {fmt(a_cpu)} | {ratio:.3f} | "
                f"{fmt([r['wall'] for r in ev['before']])} | "
                f"{fmt([r['wall'] for r in ev['after']])} | {max(r['rss_mb'] for r in ev['before']):.0f} | "
                f"{max(r['rss_mb'] for r in ev['after']):.0f} | - | {repeats} |")
    growth = []

    def ex(x: float, y: float) -> str:
        return "n/a" if math.isinf(x) or math.isinf(y) else f"{math.log(y / x) / math.log(big / sizes[0]):.2f}"

    for alg in ("sjf-bco", "ff", "ls"):
        (b1, a1), (b2, a2) = cpu_med[f"{sizes[0]}-{alg}"], cpu_med[f"{big}-{alg}"]
        growth.append(f"| {alg} | {ex(b1, b2)} | {ex(a1, a2)} |")
    load = os.getloadavg()
    text = "\n".join([
        "# RAR-DDLS at scale: before / after (issue 16, our code)", "",
        f"Command: `.venv/bin/python benchmarks/scale.py --before {args.before}" + (" --quick" if args.quick else "")
        + f" --repeats {repeats}" + (f" --big-repeats {args.big_repeats}" if args.big_repeats else "")
        + f"`. Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; load "
        f"average after the run {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} "
        "(the machine is shared: compare the ratios of side-by-side runs). Instances: `mobihoc22_preset(0)` and "
        "`random_rar_instance(n, n // 10, 0)` (the paper's rules), generated once and given to both trees.", "",
        "Each figure is a whole CLI process (`python -m optsched.cli solve FILE -a ALG -o OUT`, or `evaluate`): "
        "medians of CPU seconds (user + system) and wall seconds, peak resident memory (the largest of the runs). "
        "'same schedule': the two trees wrote identical starts and placements.", "",
        "| case | CPU s before | CPU s after | after / before | wall s before | wall s after | RSS MiB before "
        "| RSS MiB after | same schedule | runs |",
        "|---|---|---|---|---|---|---|---|---|---|", *rows, "",
        f"Growth exponent of the whole process's CPU time from {sizes[0]:,} to {big:,} jobs "
        f"(log(t_{big}/t_{sizes[0]}) / log({big // sizes[0]})):", "",
        "| algorithm | before | after |", "|---|---|---|", *growth, "",
    ])
    target = out_dir / ("scale_quick.md" if args.quick else "scale.md")
    with atomic_open(target) as f:
        f.write(text)
    print(text)
    print(f"written to {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
