"""``optsched solve INSTANCE [-a NAME] [-o SCHEDULE]`` (one instance), ``optsched solve DIR_OR_GLOB ...`` (a batch,
on a local process pool or Dask) and ``optsched solve --list``.

A batch is a folder of instance files, a quoted glob (``'runs/*.json'``), ``bundled:rar`` or several files; every
algorithm of ``-a`` (a comma list; ``all``: every algorithm of each file's problem; default: each problem's own)
runs on the files of its problem, once per seed of ``--seeds``, through [`optsched.experiments.solve_many`][].
It prints one line per run and the gap of each algorithm to the optimum or the best proven bound
([`optsched.plot.gap_summary`][]); ``--json`` prints the same as JSON, ``--table`` writes every run as CSV,
``--out-dir`` every schedule.

```pycon
>>> from optsched.cli import main
>>> main(["solve", "bundled:rar/rar-paper-j3-s2-seed0.json", "-a", "ff"])      # doctest: +ELLIPSIS
algorithm=ff status=feasible objective=... runtime=...
0

```
"""

from __future__ import annotations

import argparse
import glob
import json
import logging
import sys
from pathlib import Path
from typing import Any

from ._args import dask_address, output_dir, output_file, positive_float, positive_int, seed, seed_list
from ._output import clean, evaluation_dict, signal_exit

_log = logging.getLogger(__name__)  # diagnostics, not the command's output: one line each on stderr (optsched.cli)


def register(sub) -> None:
    p = sub.add_parser("solve", help="solve an instance (or a folder of them) and write the schedule",
                       description="Solve an instance file (any registered problem) with a registered "
                                   "algorithm; print a summary (objective, the evaluator's figures, runtime, and "
                                   "status/bound/gap for exact models) and write the schedule file. Given a "
                                   "folder, a quoted glob or several files, solve them all (in parallel; --dask "
                                   "for a Dask cluster) and print every run and each algorithm's gap to the "
                                   "optimum or best bound. Exit code 0 when every run found a schedule, 3 when "
                                   "an exact model stopped (time limit) without one; a run that fails or an "
                                   "algorithm that refuses an instance (brute force on more than 3 jobs) is a row "
                                   "with its reason, and only --strict makes it fail the batch (exit 4); Ctrl-C "
                                   "(130) or SIGTERM (143) stops an exact model at once, and its best schedule so far "
                                   "is printed and written with status 'interrupted'.",
                       epilog="Examples: optsched solve tiny.json; optsched solve tiny.json -a exact "
                              "--time-limit 30 -o tiny.schedule.json; optsched solve instances/ -a ff,sjf-bco,exact "
                              "--time-limit 10 --json; optsched solve --list")
    p.add_argument("instance", nargs="*", metavar="INSTANCE",
                   help="instance JSON file; or a folder, a quoted glob, bundled:rar, or several files (a batch)")
    p.add_argument("-a", "--algorithm", default=None,
                   help="algorithm name (default: the problem's own, e.g. sjf-bco for RAR-DDLS, "
                        "total-jct-bnb for total JCT, heavy-edge for placement); a batch takes a comma list or "
                        "'all'; --list shows them")
    p.add_argument("-o", "--output", type=output_file("-o"),
                   help="write the schedule JSON here (atomically; '-' for standard output); one instance only")
    p.add_argument("--seed", type=seed(), default=0, help="random seed (0 .. 2^31-1) of randomised algorithms "
                                                         "and of CP-SAT's search (default 0)")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--time-limit", type=positive_float("--time-limit"), default=None,
                       help="seconds of wall clock, for exact models (default: the model's own, 60 s for RAR-DDLS)")
    limit.add_argument("--deterministic-limit", type=positive_float("--deterministic-limit"), default=None,
                       help="CP-SAT deterministic time instead of seconds: a run stopped by it is reproducible "
                            "with the same seed (CP-SAT models only)")
    p.add_argument("--progress", action="store_true",
                   help="heartbeat lines on stderr while an exact model runs (default when stderr is a terminal)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON on standard output")
    p.add_argument("--list", action="store_true", help="list the registered algorithms and exact models and exit")
    b = p.add_argument_group("batch (a folder, a glob or several files)")
    b.add_argument("--seeds", type=seed_list("--seeds"), default=None, metavar="0-4|0,3,7",
                   help="run every algorithm once per seed (default: --seed)")
    b.add_argument("--out-dir", type=output_dir("--out-dir"), default=None,
                   help="write every schedule as OUT_DIR/<instance>.<algorithm>[.seed<k>].schedule.json")
    b.add_argument("--table", type=output_file("--table"), default=None,
                   help="write every run (instance, algorithm, seed, status, objective, bound, gap, ...) as CSV")
    b.add_argument("--workers", type=positive_int("--workers", 4096), default=None,
                   help="processes of the local pool, or of --dask local (default: the machine's cores)")
    b.add_argument("--dask", type=dask_address("--dask"), default=None, metavar="local|tcp://HOST:PORT",
                   help="solve on Dask: 'local' starts a LocalCluster, an address joins a running scheduler")
    b.add_argument("--threads", type=positive_int("--threads", 1024), default=None,
                   help="CP-SAT threads per run (default: the worker's cores / runs at once on it)")
    b.add_argument("--no-progress", action="store_true", help="no progress bar")
    b.add_argument("--strict", action="store_true",
                   help=f"exit {FAILED} if a run failed, or an algorithm named with -a refused an instance "
                        "(without it, failed and inapplicable runs are rows with their reason, and the exit code "
                        "says only whether every run that applied found a schedule)")
    p.set_defaults(func=run)


NO_SCHEDULE = 3  # exit code: an exact model stopped before finding any schedule
FAILED = 4  # exit code of a batch with --strict: a run failed, or an algorithm named with -a refused an instance


def print_algorithms(problem: str | None = None) -> None:
    """One line per algorithm: name, problem, heuristic or exact, description (the default marked)."""
    from ..registry import list_algorithms

    for name, a in list_algorithms(problem).items():
        default = " (default)" if a.problem.default_algorithm == name else ""
        print(f"{name:<17} {a.problem.name:<10} {a.kind:<9} {a.description}{default}")


def is_batch(paths: list[str]) -> bool:
    """Several paths, a folder, a glob pattern or a bundled folder make a batch; one file does not."""
    if len(paths) != 1:
        return True
    p = paths[0]
    if p.startswith("bundled:"):
        return not p.endswith(".json")
    return Path(p).is_dir() or (not Path(p).exists() and glob.has_magic(p))


def run(args: argparse.Namespace) -> int:
    from ..errors import InstanceError

    if args.list:
        if args.json:
            from .list import print_sections

            print_sections(["algorithms", "exact"], as_json=True)
        else:
            print_algorithms()
        return 0
    if not args.instance:
        raise InstanceError("is required (or --list to see the algorithms)", field="INSTANCE")
    if is_batch(args.instance):
        return run_batch(args)
    for flag, value in (("--seeds", args.seeds), ("--out-dir", args.out_dir), ("--table", args.table),
                        ("--workers", args.workers), ("--dask", args.dask), ("--threads", args.threads),
                        ("--strict", args.strict or None)):
        if value is not None:
            raise InstanceError("applies to a batch (a folder, a glob or several files), not to one instance",
                                field=flag)
    return run_one(args)


def run_one(args: argparse.Namespace) -> int:
    from ..api import evaluate, load_instance, solve
    from ..errors import InstanceError
    from ..exact._cpsat import heartbeat
    from ..io import check_output, save_schedule, writes_to_stdout
    from ..registry import get_algorithm, problem_of
    from ..result import SolveStatus

    to_stdout = writes_to_stdout(args.output)
    if args.json and to_stdout:
        raise InstanceError("--json and -o - both write to standard output: give -o a file", field="--json")
    if args.output is not None:
        check_output(args.output, "-o", inputs=args.instance)
    inst = load_instance(args.instance[0])
    name = args.algorithm or problem_of(inst).default_algorithm
    if name is None:
        raise InstanceError("this problem has no algorithms", field="--algorithm")
    alg = get_algorithm(name)
    options = {}
    for flag, value in (("--time-limit", args.time_limit), ("--deterministic-limit", args.deterministic_limit)):
        if value is not None and not alg.exact:
            raise InstanceError(f"applies to exact models only; {name} is a heuristic", field=flag)
    if args.deterministic_limit is not None:
        options["deterministic_limit"] = args.deterministic_limit
    every = 10.0 if (args.progress or sys.stderr.isatty()) and alg.exact else None
    with heartbeat(every, sys.stderr):
        try:
            res = solve(inst, name, seed=args.seed, time_limit=args.time_limit, **options)
        except TypeError as exc:
            if "deterministic_limit" not in str(exc):
                raise
            raise InstanceError(f"{name} is not a CP-SAT model", field="--deterministic-limit") from None
    # the summary goes to stdout unless the schedule itself does, or --json takes stdout
    out = sys.stderr if (to_stdout or args.json) else sys.stdout
    limit = res.info.get("limit")
    # which limit applied says something only when a limit stopped the run (not on a proven optimum)
    stopped = res.status in (SolveStatus.TIME_LIMIT, SolveStatus.UNKNOWN)
    print(res.summary() + (f" limit={limit}" if limit and alg.exact and stopped else ""), file=out)
    stopped_by = signal_exit(res.status, res.info)
    ev = None
    # a problem without an evaluator (the contention round model) is scored by its exact methods themselves
    scored = problem_of(inst).evaluator is not None or res.evaluation is not None
    if res.schedule is not None and scored:
        ev = res.evaluation if res.evaluation is not None else evaluate(inst, res.schedule)
    if args.json:
        doc: dict[str, Any] = {"instance": args.instance[0], **res.to_dict(schedule=False)}
        if ev is not None:
            doc["evaluation"] = evaluation_dict(ev)
        print(json.dumps(doc, indent=1, default=str))
    if res.schedule is None:
        print(f"no schedule found ({res.status}); nothing written", file=out)
        return stopped_by or NO_SCHEDULE
    if ev is not None:
        print(ev.summary(), file=out)
    if args.output and res.schedule is not None:
        extra: dict[str, Any] = {"objective": res.objective}
        makespan = getattr(ev, "makespan", None)
        save_schedule(res.schedule, args.output, makespan=makespan, status=str(res.status),
                      lower_bound=res.lower_bound, runtime_s=round(res.runtime_s, 6), seed=res.seed, **extra)
        if not to_stdout:
            print(f"schedule written to {args.output}"
                  + (" (status 'interrupted': the best schedule found before the signal)" if stopped_by else ""),
                  file=out)
    return stopped_by


def unique_stems(names: list[str]) -> dict[str, str]:
    """A file name stem per instance: its own stem, or, where two instances share one (``a.json`` and
    ``sub/a.json``), its path below their common folder with ``__`` for the separators.

    >>> unique_stems(["x/a.json", "x/sub/a.json", "x/b.json"])
    {'x/a.json': 'a', 'x/sub/a.json': 'sub__a', 'x/b.json': 'b'}
    """
    import os

    stems = {n: Path(n).stem for n in names}
    counts: dict[str, int] = {}
    for s in stems.values():
        counts[s] = counts.get(s, 0) + 1
    clash = [n for n in names if counts[stems[n]] > 1]
    if clash:
        base = os.path.commonpath([str(Path(n).parent) for n in clash]) if len(clash) > 1 else ""
        for n in clash:
            rel = Path(os.path.relpath(n, base) if base else n).with_suffix("")
            stems[n] = "__".join(p for p in rel.parts if p not in ("", ".", ".."))
    return stems


def run_batch(args: argparse.Namespace) -> int:
    import pandas as pd

    from ..errors import InstanceError
    from ..experiments import available_cores, executor, find_instances, solve_many
    from ..io import atomic_open, save_schedule
    from ..plot import gap_summary, gap_table

    if args.output:
        raise InstanceError("a batch writes its schedules to --out-dir, its table to --table", field="-o")
    if args.dask is not None and args.dask != "local" and args.workers is not None:
        raise InstanceError("sets the size of a local pool or of --dask local; a running scheduler has its own "
                            "workers", field="--workers")
    files = find_instances(args.instance)
    algs = None if args.algorithm == "all" else (
        [a.strip() for a in args.algorithm.split(",") if a.strip()] if args.algorithm else "default")
    if algs == "default":
        from ..io import BUNDLED_PREFIX, bundled_path, check_format, read_json
        from ..registry import problem_for_format

        algs = sorted({problem_for_format(check_format(read_json(bundled_path(f) if f.startswith(BUNDLED_PREFIX)
                                                                 else f))).default_algorithm or ""
                       for f in files} - {""})
    if not algs and algs is not None:
        raise InstanceError("give at least one algorithm", field="--algorithm")
    seeds = args.seeds if args.seeds is not None else [args.seed]
    progress = not args.no_progress and not args.json
    workers = args.workers if args.workers is not None or args.dask else min(len(files), available_cores())
    with executor(args.dask, workers, dashboard=sys.stderr if progress else None) as ex:
        runs = solve_many(files, algs, args.time_limit, ex, seeds=seeds, threads=args.threads,
                          deterministic_limit=args.deterministic_limit, keep_results=args.out_dir is not None,
                          progress=progress)
    if args.dask is not None and not args.json:
        _log.info("Dask: %s", runs.attrs["tasks"].text())
    gaps = gap_table(runs)
    summary = gap_summary(gaps)
    written = []
    if args.out_dir is not None:
        d = Path(args.out_dir)
        d.mkdir(parents=True, exist_ok=True)
        stems = unique_stems([str(i) for i in dict.fromkeys(runs["instance"])])
        for _, r in runs.iterrows():
            res = r["result"]
            if res is None or res.schedule is None:
                continue
            stem = stems[str(r["instance"])]
            suffix = f".seed{r['seed']}" if len(seeds) > 1 else ""
            path = d / f"{stem}.{r['algorithm']}{suffix}.schedule.json"
            save_schedule(res.schedule, path, status=str(res.status), lower_bound=res.lower_bound,
                          runtime_s=round(res.runtime_s, 6), seed=res.seed, objective=res.objective)
            written.append(str(path))
    cols = [c for c in gaps.columns if c != "result"]
    if args.table:
        with atomic_open(args.table, "w", encoding="utf-8", newline="") as fh:
            gaps[cols].to_csv(fh, index=False)
    out = sys.stderr if args.table == "-" else sys.stdout
    if args.json:
        doc = {"instances": len(files), "runs": [{k: clean(v) for k, v in r.items()} for r in
                                                 gaps[cols].to_dict(orient="records")],
               "summary": [{k: clean(v) for k, v in r.items()} for r in summary.to_dict(orient="records")],
               "schedules": written}
        print(json.dumps(doc, indent=1), file=out)
    else:
        with pd.option_context("display.max_rows", 500, "display.width", 160):
            show = gaps[["instance", "algorithm", "seed", "status", "objective", "lower_bound", "reference_kind",
                         "gap", "runtime_s"]]
            print(show.to_string(index=False, float_format=lambda x: f"{x:.4g}"), file=out)
            print(f"\ngap to the optimum or best proven bound over {len(files)} instance(s), our solvers:", file=out)
            print(summary.to_string(index=False, float_format=lambda x: f"{x:.4g}"), file=out)
        if written:
            print(f"{len(written)} schedules written to {args.out_dir}", file=out)
        if args.table and args.table != "-":
            print(f"table written to {args.table}", file=out)
    failed = runs[runs["status"] == "error"]
    refused = runs[runs["status"] == "inapplicable"]
    for kind, rows in (("failed", failed), ("did not apply", refused)):
        if len(rows):
            _log.warning("%d of %d runs %s; first: %s %s: %s", len(rows), len(runs), kind, rows["instance"].iloc[0],
                         rows["algorithm"].iloc[0], rows["error"].iloc[0])
    if args.strict and (len(failed) or (algs is not None and len(refused))):
        return FAILED
    applied = runs[~runs["status"].isin(["error", "inapplicable"])]
    return 0 if applied["objective"].notna().all() else NO_SCHEDULE

