"""``optsched simulate WORKLOAD ...`` (one run) and ``optsched simulate --sweep ...`` (Blox's experiment sweeper).

One run::

    optsched simulate philly --scheduler fifo --placement consolidated --admission accept-all --load 8 \\
        [--round-s 300 | --event] [--jobs-window 3000:4000] [--servers 32 --gpus-per-server 4] [--seed 0] \\
        [-o OUT.json] [--plots DIR]

``WORKLOAD`` is ``philly``, ``pollux:N`` (N = 1..8), ``synthetic`` or a file of any online kind the package
writes (``docs/formats.md``): a workload, a deadline workload (``optsched generate deadline``: DRS, the ring model
and the deadline metrics by default) or a contention job set (``optsched generate contention``: the measured
table, the instance's rounds, ``contention-greedy`` and the round accounting by default); or Pollux's own
``workload-N.csv`` or a Philly trace CSV, recognised by their headers.
It prints a summary table (``--json``: the summary and configuration as JSON); ``-o`` writes the per-job
records, summary and time series as JSON; ``--plots`` writes the JCT CDF and the timeline (utilisation, queue,
GPUs per server); ``--trace`` a Chrome-trace/Perfetto JSON of every job segment.

A sweep runs every scheduler x placement x admission x load once per seed (``--seeds 0-4``) on a local process
pool (``--workers``), a Dask ``LocalCluster`` (``--dask local``) or a running Dask scheduler
(``--dask tcp://HOST:8786``), and writes ``<name>.md`` (means and 95 % intervals over seeds), ``<name>.csv``
(every run), ``<name>_summary.csv`` and plots to ``--out`` (default ``./sweep-results``), all atomically.

This module only parses arguments and prints; the runs and the sweep are [`optsched.experiments`][].

```pycon
>>> from optsched.cli import main
>>> main(["simulate", "synthetic", "--jobs", "6", "--load", "4", "--servers", "2", "--no-progress", "--quiet"])
0

```
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
from pathlib import Path
from typing import Any

from .. import plot
from ..errors import InstanceError
from ..experiments import (
    DEFAULT_GPUS_PER_SERVER,
    DEFAULT_ROUND_S,
    DEFAULT_SERVERS,
    SIMULATION_BYTES,
    available_cores,
    executor,
    markdown_table,
    run_one,
    seed_text,
    sweep,
    write_sweep,
)
from ..generators.workload import parse_window
from ..limits import require_memory
from ._args import (
    dask_address,
    non_negative_float,
    output_dir,
    output_file,
    positive_float,
    positive_int,
    seed,
    seed_list,
)

SUMMARY_ROWS = (
    ("jobs", "jobs simulated", "{:d}"), ("tracked", "jobs tracked", "{:d}"),
    ("finished_tracked", "tracked jobs finished", "{:d}"),
    ("avg_jct_s", "average JCT (h)", "h"), ("p50_jct_s", "median JCT (h)", "h"), ("p99_jct_s", "p99 JCT (h)", "h"),
    ("avg_responsiveness_s", "avg responsiveness (h)", "h"), ("makespan_s", "makespan (h)", "h"),
    ("mean_utilisation", "mean GPU utilisation", "{:.3f}"), ("mean_queue", "mean queue length", "{:.1f}"),
    ("preemptions", "preemptions (tracked)", "{:d}"), ("migrations", "migrations (tracked)", "{:d}"),
    ("events", "engine events", "{:d}"),
    # the deadline family (paper 003)
    ("round_avg_jct_s", "avg JCT, in rounds (h)", "h"),
    ("avg_runtime_jct_s", "avg run-time JCT (h)", "h"), ("avg_cs", "mean contention sensitivity", "{:.3f}"),
    ("deadlines_met", "deadlines met", "{:d}"), ("r_trace", "deadline ratio R_trace", "{:.3f}"),
    ("declined", "jobs declined (admission)", "{:d}"),
    ("wall_s", "wall time (s)", "{:.2f}"), ("events_per_s", "events per second", "{:,.0f}"),
)

_log = logging.getLogger(__name__)  # diagnostics, not the command's output: one line each on stderr (optsched.cli)


# -- argument helpers ------------------------------------------------------------------------------------------
def _servers(text: str) -> int | str:
    """A server count, or a cluster description with GPU types (``optsched.cluster.parse_cluster``).

    >>> _servers("8"), _servers("V100:2x4,K80:1x8")
    (8, 'V100:2x4,K80:1x8')
    """
    if text.strip().isdigit():
        return positive_int("--servers")(text)
    from ..cluster import parse_cluster
    from ..errors import InstanceError

    try:
        parse_cluster(text)
    except InstanceError as exc:
        raise argparse.ArgumentTypeError(f"--servers must be a count or a cluster such as V100:8x4,K80:8x4: "
                                         f"{exc}") from None
    return text


def _stem(text: str) -> str:
    """A file name stem: not empty, not hidden, no folder in it (the sweep writes <stem>.md, <stem>.csv, ...).

    >>> _stem("blox")
    'blox'
    """
    if not text or text.startswith(".") or "/" in text or "\\" in text or text != text.strip():
        raise argparse.ArgumentTypeError(f"--name must be a plain file name stem (no folder, not empty, not hidden), "
                                         f"got {text!r}")
    return text


def parse_list(text: str | None) -> list[str]:
    """``"fifo,las"`` -> ``['fifo', 'las']``."""
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def parse_loads(text: str) -> list[float]:
    """``"1-9"`` -> 1..9 (integers), ``"1,2.5,4"`` -> those values.

    ```pycon
    >>> parse_loads("1-4"), parse_loads("2,8")
    ([1.0, 2.0, 3.0, 4.0], [2.0, 8.0])

    ```
    """
    out: list[float] = []
    for part in parse_list(text):
        try:
            if "-" in part[1:]:
                a, b = part.split("-", 1)
                lo, hi = int(a), int(b)
                if hi < lo:
                    raise ValueError
                require_memory(hi - lo + 1, SIMULATION_BYTES, "simulations (loads)", field="loads")
                out.extend(float(x) for x in range(lo, hi + 1))
            else:
                out.append(float(part))
        except ValueError:
            raise InstanceError(f"must be a list like 1-9 or 1,2,4 of positive loads, got {text!r}",
                                field="loads") from None
    if not out or any(not (x > 0 and math.isfinite(x)) for x in out):
        raise InstanceError(f"must be a list like 1-9 or 1,2,4 of positive loads, got {text!r}", field="loads")
    return out


def register(sub) -> None:
    p = sub.add_parser(
        "simulate", help="simulate online scheduling policies on a workload (Blox)",
        description="Simulate a policy composition (admission -> scheduling -> placement, as in Blox) on a "
                    "workload: philly, pollux:N, synthetic, or a workload file (docs/formats.md). With --sweep, "
                    "run every scheduler x placement x admission x load and write a table, CSV and plots.",
        epilog="Examples: optsched simulate philly --scheduler las --load 8 -o run.json; "
               "optsched simulate --sweep philly --schedulers fifo,las --loads 1-9 --out docs/results; "
               "optsched simulate ElasticFlow/traces_for_ElasticFlow/elasticVpollux_e.csv --throughputs "
               "ElasticFlow/scheduler/throughputs_T4 --scheduler elasticflow")
    p.add_argument("workload", nargs="?", default=None,
                   help="philly | pollux:N | synthetic | path to a workload file (default philly for --sweep)")
    p.add_argument("--throughputs", metavar="DIR", default=None,
                   help="with an ElasticFlow trace CSV as WORKLOAD (pkusys/ElasticFlow's job_id,submit_time,"
                        "iteration,model_name,ddl,... file): its throughput folder, one <model>.csv per model "
                        "(e.g. scheduler/throughputs_T4); runs as a deadline workload on --servers x "
                        "--gpus-per-server GPUs (default 16 x 4), e.g. --scheduler elasticflow")
    p.add_argument("--scheduler", default=None,
                   help="scheduling policy name (optsched list schedulers; default: the workload kind's: fifo, drs "
                        "for a deadline workload, contention-greedy for a contention job set)")
    p.add_argument("--placement", default="consolidated", help="consolidated | first-free | scattered")
    p.add_argument("--admission", default=None,
                   help="accept-all | accept-k | accept-1.2 (k = 1.2) ... (default accept-all, or the policy's own)")
    p.add_argument("--load", type=positive_float("--load"), default=None,
                   help="jobs per hour (Poisson re-timing; philly/synthetic default 8, pollux keeps its times)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--round-s", type=positive_float("--round-s"), default=None,
                      help="round length in seconds (Blox's round-based mode, default 300; a deadline workload "
                           "runs event-driven unless given, a contention job set in its own rounds)")
    mode.add_argument("--event", action="store_true", help="event-driven mode: decide at every arrival/completion")
    p.add_argument("--jobs-window", default=None, metavar="START:END",
                   help="track only jobs START <= id < END (philly default 3000:4000; others: all jobs)")
    p.add_argument("--jobs", type=positive_int("--jobs"), default=None,
                   help="number of jobs (synthetic default 200; philly/pollux/files: truncate)")
    p.add_argument("--servers", type=_servers, default=None,
                   help="servers (default 32), or a cluster with GPU types such as V100:8x4,K80:8x4 (8 servers of "
                        "4 V100s, 8 of 4 K80s); deadline and contention files bring their own cluster")
    p.add_argument("--gpus-per-server", type=positive_int("--gpus-per-server"), default=None,
                   help="GPUs per server (default 4)")
    p.add_argument("--seed", type=seed(), default=0, help="seed of the workload generator and policies (default 0)")
    p.add_argument("--perf", default=None, help="performance model name (default constant, cross-server x1.25)")
    p.add_argument("--restore-s", type=non_negative_float("--restore-s"), default=0.0,
                   help="checkpoint-restore stall of a resumed job (s)")
    p.add_argument("--philly-filter", choices=("blox", "none"), default="blox",
                   help="blox: Blox's Gavel-like filter (31.6 min < run time < 6.9 days, <= 16 GPUs); none: all")
    p.add_argument("--philly-order", choices=("file", "submit"), default="file",
                   help="job ids in file order (Blox's parse order, default) or submission order")
    p.add_argument("--drain-h", type=positive_float("--drain-h"), default=None,
                   help="stop this many simulated hours after the last tracked arrival (default: when all "
                        "tracked jobs finish)")
    p.add_argument("-o", "--output", type=output_file("-o"),
                   help="write the run's JSON (per-job records, summary, time series) here ('-': standard output)")
    p.add_argument("--plots", metavar="DIR", type=output_dir("--plots"),
                   help="write the JCT CDF and the timeline (utilisation, queue, GPUs per server) to DIR")
    p.add_argument("--trace", metavar="FILE", type=output_file("--trace"),
                   help="write every job segment as Chrome-trace JSON (open in ui.perfetto.dev)")
    p.add_argument("--json", action="store_true",
                   help="print the summary (a sweep: every point's means and intervals) as JSON on standard output")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--list", action="store_true",
                   help="list the schedulers, placements, admission policies and performance models, and exit")
    sw = p.add_argument_group("sweep (Blox's experiment sweeper)")
    sw.add_argument("--sweep", action="store_true", help="run the grid below instead of one run")
    sw.add_argument("--schedulers", default="fifo,las,srtf,tiresias",
                    help="comma list (default fifo,las,srtf,tiresias)")
    sw.add_argument("--placements", default="consolidated", help="comma list (default consolidated)")
    sw.add_argument("--admissions", default="accept-all", help="comma list (default accept-all)")
    sw.add_argument("--loads", default="1-9", help="jobs/hour: 1-9 or 1,2,4 (default 1-9)")
    sw.add_argument("--seeds", type=seed_list("--seeds"), default=None, metavar="0-4|0,3,7",
                    help="run every point once per seed: means and 95%% intervals over them (default: --seed)")
    sw.add_argument("--out", default="sweep-results", type=output_dir("--out"),
                    help="output folder of a sweep (default ./sweep-results)")
    sw.add_argument("--name", default="sweep", type=_stem,
                    help="file name stem of a sweep's outputs (default sweep)")
    sw.add_argument("--workers", type=positive_int("--workers", 4096), default=None,
                    help="processes of the local pool, or of --dask local (default: the machine's cores)")
    sw.add_argument("--dask", type=dask_address("--dask"), default=None, metavar="local|tcp://HOST:PORT",
                    help="run the grid on Dask: 'local' starts a LocalCluster, an address joins a running "
                         "scheduler (pip install 'optsched[dask]')")
    sw.add_argument("--send-trace", action="store_true", help="read the Philly trace here and send it to the "
                                                              "workers (for workers without a data folder)")
    sw.add_argument("--strict", action="store_true", help="exit 4 if a run of the grid failed (without it, a "
                                                          "failed run is a row with its error; the rest is written)")
    p.set_defaults(func=run)


# -- one run ---------------------------------------------------------------------------------------------------
def _window(args) -> tuple[int, int] | None:
    if args.jobs_window is None:
        return None
    return parse_window(args.jobs_window)


def _fmt(v: Any, how: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if how == "h":
        return f"{v / 3600:.2f}"
    return how.format(v)


def summary_table(summary: dict, config: dict | None = None) -> str:
    """A two-column plain-text table of the headline numbers."""
    lines = []
    if config:
        sch = config.get("scheduler", {}).get("name", "?")
        pl = config.get("placement", {}).get("name", "?")
        ad = config.get("admission", {}).get("name", "?")
        k = config.get("admission", {}).get("k")
        wl = config.get("workload", {})
        lines.append(f"{wl.get('name', '')}: {sch} + {pl} + {ad}{'' if k is None else f' (k={k:g})'}, "
                     f"{config.get('cluster', {}).get('total_gpus', '?')} GPUs, mode {config.get('mode')}"
                     + (f" ({config.get('round_s'):g} s rounds)" if config.get("round_s") else "")
                     + f", seed {config.get('seed')}")
    for key, label, how in SUMMARY_ROWS:
        if key in summary:
            lines.append(f"  {label:<26} {_fmt(summary[key], how):>14}")
    return "\n".join(lines)


def list_policies() -> None:
    """The simulator's policies and performance models, one line each (``optsched list`` sections)."""
    from .list import print_sections

    print_sections(["schedulers", "placements", "admissions", "perf"])


def _name_of(d: Any) -> str:
    return str(d.get("name", "?")) if isinstance(d, dict) else "?"


def run(args: argparse.Namespace) -> int:
    if args.list:
        list_policies()
        return 0
    if args.sweep:
        return run_sweep_cli(args)
    for flag, value in (("--seeds", args.seeds), ("--dask", args.dask), ("--workers", args.workers),
                        ("--send-trace", args.send_trace or None), ("--strict", args.strict or None)):
        if value is not None:
            raise InstanceError("applies to --sweep only (one run is one process)", field=flag)
    if args.workload is None:
        raise InstanceError("give a WORKLOAD (philly, pollux:N, synthetic or a file) or --sweep", field="workload")
    if args.json and args.output == "-":
        raise InstanceError("--json and -o - both write to standard output: give -o a file", field="--json")
    from ..io import check_output

    for flag, path in (("-o", args.output), ("--trace", args.trace)):  # never over the workload file
        if path is not None:
            check_output(path, flag, inputs=[args.workload])
    res = run_one(args.workload, scheduler=args.scheduler, placement=args.placement, admission=args.admission,
                  load=args.load, seed=args.seed, round_s=args.round_s, event=args.event, window=_window(args),
                  n_jobs=args.jobs, servers=args.servers, gpus_per_server=args.gpus_per_server, perf=args.perf,
                  restore_s=args.restore_s, philly_filter=args.philly_filter, philly_order=args.philly_order,
                  progress=not (args.no_progress or args.quiet), drain_h=args.drain_h, throughputs=args.throughputs)
    out = sys.stderr if args.output == "-" else sys.stdout  # the run's JSON itself goes to standard output
    rounds = res.custom.get("contention")
    if rounds is not None:  # the contention family: the repository's round accounting beside the exact JCT
        res.summary.update({"round_avg_jct_s": rounds["avg_jct_s"], "avg_runtime_jct_s": rounds["avg_runtime_jct_s"],
                            "avg_cs": rounds["avg_cs"]})
    if args.json:
        doc = res.to_dict(timeseries=False)
        print(json.dumps({"config": doc["config"], "summary": doc["summary"]}, indent=1))
        out = sys.stderr
    elif not args.quiet:
        print(summary_table(res.summary, res.config), file=out)
    if args.output:
        res.save(args.output)
        if not args.quiet and args.output != "-":
            print(f"results written to {args.output}", file=out)
    if args.plots:
        d = Path(args.plots)
        d.mkdir(parents=True, exist_ok=True)
        label = f"{_name_of(res.config.get('scheduler'))}+{_name_of(res.config.get('placement'))}"
        plot.save_jct_cdf({label: res}, d / "jct_cdf.png", title=plot.sim_title(res, "JCT CDF"))
        plot.save_timeline(res, d / "timeline.png")
        if not args.quiet:
            print(f"plots written to {d}/jct_cdf.png and {d}/timeline.png", file=out)
    if args.trace:
        plot.write_chrome_trace(res, args.trace)
        if not args.quiet and args.trace != "-":
            print(f"trace written to {args.trace} (open it in ui.perfetto.dev)", file=out)
    return 0


def run_sweep_cli(args: argparse.Namespace) -> int:
    spec = args.workload or "philly"
    for flag, value in (("-o", args.output), ("--plots", args.plots), ("--trace", args.trace),
                        ("--scheduler", args.scheduler is not None),
                        ("--placement", args.placement != "consolidated"),
                        ("--admission", args.admission is not None), ("--load", args.load)):
        if value:
            plural = {"--scheduler": "--schedulers", "--placement": "--placements", "--admission": "--admissions",
                      "--load": "--loads"}.get(flag)
            hint = f" (a sweep takes {plural})" if plural else " (a sweep writes its files to --out)"
            raise InstanceError(f"applies to one run, not to --sweep{hint}", field=flag)
    if args.dask is not None and args.dask != "local" and args.workers is not None:
        raise InstanceError("sets the size of a local pool or of --dask local; a running scheduler has its own "
                            "workers", field="--workers")
    scheds, places, adms = parse_list(args.schedulers), parse_list(args.placements), parse_list(args.admissions)
    loads = parse_loads(args.loads)
    seeds = args.seeds if args.seeds is not None else [args.seed]
    fixed = dict(round_s=args.round_s, event=args.event, window=_window(args), n_jobs=args.jobs,
                 servers=args.servers, gpus_per_server=args.gpus_per_server, perf=args.perf,
                 restore_s=args.restore_s, philly_filter=args.philly_filter, philly_order=args.philly_order,
                 drain_h=args.drain_h)
    grid = {"workload": spec, "scheduler": scheds, "placement": places, "admission": adms, "load": loads,
            **{k: v for k, v in fixed.items() if v is not None}}
    progress = not (args.no_progress or args.quiet)
    n_tasks = len(scheds) * len(places) * len(adms) * len(loads) * len(seeds)
    workers = args.workers if args.workers is not None or args.dask else min(n_tasks, available_cores())
    t0 = time.perf_counter()
    with executor(args.dask, workers, dashboard=sys.stderr if progress else None) as ex:
        result = sweep(grid, seeds=seeds, executor=ex, progress=progress, send_trace=args.send_trace)
    wall = time.perf_counter() - t0
    failed = result.failed
    seed_txt = f"seed {seeds[0]}" if len(seeds) == 1 else f"{len(seeds)} seeds ({seed_text(seeds)}), mean and " \
                                                           "95% interval over seeds in brackets"
    servers = DEFAULT_SERVERS if args.servers is None else args.servers
    gps = DEFAULT_GPUS_PER_SERVER if args.gpus_per_server is None else args.gpus_per_server
    round_s = DEFAULT_ROUND_S if args.round_s is None else args.round_s
    where = f"cluster {servers}" if isinstance(servers, str) else f"{servers} servers x {gps} GPUs"
    notes = [f"Our simulator's numbers. Workload `{spec}`, {seed_txt}, {where}, "
             + ("event-driven" if args.event else f"{round_s:g} s rounds")
             + f"; grid: schedulers {','.join(scheds)} x placements {','.join(places)} x admissions "
             f"{','.join(adms)} x loads {args.loads} (jobs/hour). Wall time of the sweep: {wall:.1f} s on "
             f"{result.executor}."]
    paths = write_sweep(result, args.out, args.name, title=f"Sweep on {spec} (our simulator)", notes=notes)
    if args.json:
        print(json.dumps({**result.to_dict(), "files": [str(p) for p in paths]}, indent=1, default=str))
    elif not args.quiet:
        print(markdown_table(result))
        print("written: " + ", ".join(str(p) for p in paths))
    if args.dask is not None and not args.quiet and result.stats is not None:
        _log.info("Dask: %s", result.stats.text())
    if len(failed):
        _log.warning("%d of %d runs failed (status and error in %s.csv); first: %s", len(failed), len(result.runs),
                     args.name, failed["error"].iloc[0])
    return 4 if args.strict and len(failed) else 0

