"""``optsched place JOB --free s0=8,s1=3 --algorithm {heavy-edge,exact-time,exact-cut}``."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from ._args import positive_float, positive_int, seed
from ._output import signal_exit
from .solve import NO_SCHEDULE


def register(sub) -> None:
    p = sub.add_parser("place", help="place one mixed-parallelism job on free GPUs (Heavy-Edge or exact)",
                       description="Map a pipeline job's stage replicas onto servers' free GPUs and print the "
                                   "GPUs per server per stage, the per-iteration time alpha (eq. 7, ms) and "
                                   "the cut weight of the replica graph (MB). JOB is a file in format "
                                   "optsched/pipeline-job@1 or a catalogue entry 'model:NAME[:CONFIG]' "
                                   "(see 'optsched place --list-models'). Exit code 3 when an exact model stopped "
                                   "without a placement; Ctrl-C (130) or SIGTERM (143) stops an exact model within "
                                   "about a second, and the best placement found so far is printed with status "
                                   "'interrupted'.")
    p.add_argument("job", nargs="?", help="job file, or model:NAME[:CONFIG] from the Table I catalogue")
    p.add_argument("--free", help="free GPUs per server, e.g. s0=8,s1=3,s2=1")
    p.add_argument("-a", "--algorithm", default="heavy-edge", choices=("heavy-edge", "exact-time", "exact-cut"))
    p.add_argument("--job-id", help="which job of a file holding several")
    p.add_argument("--select", default="most", choices=("most", "least"),
                   help="server selection when more GPUs are free than the job needs (A-SRPT's SelectMost "
                        "or SelectLeast; default most)")
    p.add_argument("--form", choices=("mapping", "selection"),
                   help="exact-time only: mapping (on the selected servers) or selection (any free GPUs; "
                        "the default)")
    p.add_argument("--solver", default=None, choices=("cpsat", "cbc", "highs"),
                   help="exact models' solver (default cpsat)")
    p.add_argument("--gpus-per-server", type=positive_int("--gpus-per-server"), default=8, help="g (default 8)")
    p.add_argument("--nic-gbps", type=positive_float("--nic-gbps"), default=10.0, help="B_inter in Gbit/s (default 10)")
    p.add_argument("--intra-gbs", type=positive_float("--intra-gbs"), default=300.0,
                   help="B_intra in GB/s (default 300)")
    p.add_argument("--seed", type=seed(), default=0, help="Heavy-Edge's random seed and CP-SAT's (default 0)")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--time-limit", type=positive_float("--time-limit"), default=None,
                       help="seconds, for exact models (default 30)")
    limit.add_argument("--deterministic-limit", type=positive_float("--deterministic-limit"), default=None,
                       help="CP-SAT deterministic time instead of seconds (reproducible runs)")
    p.add_argument("--progress", action="store_true",
                   help="a line on stderr when an exact model starts, then every 10 s (default when stderr is a "
                        "terminal)")
    p.add_argument("--list-models", action="store_true", help="list the catalogue's models and exit")
    p.set_defaults(func=run)


def parse_free(text: str | None) -> dict[str, int]:
    """``"s0=8,s1=3"`` -> ``{"s0": 8, "s1": 3}``; anything else raises InstanceError (exit 2)."""
    from ..errors import InstanceError

    if not text:
        raise InstanceError("is required, e.g. --free s0=8,s1=3", field="--free")
    out: dict[str, int] = {}
    for part in text.split(","):
        sid, sep, n = part.strip().partition("=")
        sid, n = sid.strip(), n.strip()
        if not sep or not sid or not (n.isascii() and n.isdigit()):
            raise InstanceError(f"expected SERVER=GPUS[,SERVER=GPUS...], got {part.strip()!r}", field="--free")
        if sid in out:
            raise InstanceError(f"server {sid!r} listed twice", field="--free")
        out[sid] = int(n)
    return out


def load_job(spec: str, job_id: str | None = None):
    from ..api import load
    from ..errors import InstanceError
    from ..problems.pipeline import PipelineJob, PipelineJobSet

    if spec.startswith("model:") and not os.path.exists(spec):
        from ..models import catalogue_job

        return catalogue_job(spec[len("model:"):])
    obj = load(spec)
    if isinstance(obj, PipelineJobSet):
        if job_id is None:
            if len(obj.jobs) == 1:
                return obj.jobs[0]
            raise InstanceError(f"the file holds {len(obj.jobs)} jobs; choose one with --job-id", field="jobs")
        try:
            return obj[job_id]
        except KeyError:
            raise InstanceError(f"no job {job_id!r} in the file", field="--job-id") from None
    if not isinstance(obj, PipelineJob):
        raise InstanceError(f"expected a pipeline job file, got {type(obj).__name__}", field="format")
    if job_id is not None and job_id != obj.id:
        raise InstanceError(f"the file holds one job, {obj.id!r}, not {job_id!r}", field="--job-id")
    return obj


def run(args: argparse.Namespace) -> int:
    from ..errors import InstanceError
    from ..exact._cpsat import heartbeat
    from ..perf.pipeline import Network, alpha_max, compute_lower_bound
    from ..placement import place
    from ..problems.placement import PlacementInstance

    if args.list_models:
        from ..models import CATALOGUE

        for m in CATALOGUE.values():
            cfgs = ", ".join(f"{c.name} ({c.gpus} GPUs)" for c in m.configs)
            print(f"{m.name:<14} {m.params_m:>9g}M params  batch {m.batch_size:<3} configs: {cfgs}")
        return 0
    if not args.job:
        raise InstanceError("is required (a job file or model:NAME[:CONFIG])", field="JOB")
    free = parse_free(args.free)
    job = load_job(args.job, args.job_id)
    net = Network.from_gbps(args.gpus_per_server, args.nic_gbps, args.intra_gbs)
    inst = PlacementInstance(job, free, net)  # checks every free count against g and the job's GPUs
    time_limit = args.time_limit
    if args.algorithm != "heavy-edge" and time_limit is None and args.deterministic_limit is None:
        time_limit = 30.0
    flags = {"solver": "--solver", "time_limit": "--time-limit", "form": "--form",
             "deterministic_limit": "--deterministic-limit"}
    every = 10.0 if (args.progress or sys.stderr.isatty()) and args.algorithm != "heavy-edge" else None
    try:
        with heartbeat(every, sys.stderr):
            p = place(job, dict(inst.free), args.algorithm, network=net, select=args.select, form=args.form,
                      solver=args.solver, seed=args.seed, time_limit=time_limit,
                      deterministic_limit=args.deterministic_limit)
    except InstanceError as exc:  # name the flag the user typed, not the library's keyword
        if exc.field in flags:
            raise InstanceError(exc.reason, field=flags[exc.field], job=exc.job) from None
        raise
    print(f"job {job.id}: {job.gpus} GPUs, {job.n_stages} stages, replicas {list(job.replicas)}, "
          f"{job.allreduce} all-reduce")
    print(f"algorithm={p.algorithm} status={p.status} runtime={p.runtime_s * 1e3:.2f} ms"
          + (f" form={p.info.get('form')} solver={p.info.get('solver')}" if p.algorithm != "heavy-edge" else ""))
    stopped_by = signal_exit(p.status, p.info)  # 130 or 143 when Ctrl-C or SIGTERM stopped the exact model
    if not p.x:
        logging.getLogger(__name__).warning("no placement found (%s)", p.status)
        return stopped_by or NO_SCHEDULE
    if stopped_by:
        logging.getLogger(__name__).warning("status 'interrupted': the best placement found before the signal")
    width = max([6, *(len(s) for s in p.x)])
    print(f"{'server':<{width}}  GPUs  per-stage counts")
    for sid, col in p.x.items():
        print(f"{sid:<{width}}  {sum(col):>4}  {list(col)}")
    print(f"alpha={p.alpha:.4f} ms  cut_weight={p.cut_weight:.4f} MB  "
          f"(alpha_max={alpha_max(job, net):.4f} ms, compute bound={compute_lower_bound(job):.4f} ms)")
    return stopped_by
