"""``optsched generate KIND ...``: write a generated instance file (atomically) and print a summary.

Each kind is a registered problem ([`optsched.registry`][]) whose entry names its sub-command: ``generate_cli``
(``"module:function"``, a function ``register(kinds_subparsers)`` that adds its parser and sets ``build=`` to
``build(args) -> instance``) and ``summary`` (the one line printed); the instance is written with
[`optsched.save`][].

Kinds:

* ``rar``: RAR-DDLS (paper 000): ``optsched generate rar --jobs N --servers S --seed K -o FILE`` or
  ``optsched generate rar --preset mobihoc22 --seed K -o FILE``.
* ``total-jct``: paper 001's problem A (total completion time with placement choice) on tiny clusters, for
  the exact models: ``optsched generate total-jct --jobs N --servers M --gpus-per-server G --seed K -o FILE``.
* ``placement``: one catalogue job on random free GPUs (paper 001, IV-B):
  ``optsched generate placement --job VGG19:hybrid16 --servers 4 --seed K -o FILE``.
* ``contention``: a DeepShare job set (paper 004): ``optsched generate contention --mix normal --seed K -o FILE``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from ..registry import problems
from ._args import add_seed_and_output, positive_float, positive_int

MAX_TOTAL_JCT_JOBS = 10_000  # optsched.generators.total_jct.MAX_JOBS (not imported: it loads numpy)



def register_rar(kinds) -> None:
    p = kinds.add_parser("rar", help="RAR-DDLS instance (paper 000)",
                         description="A random RAR-DDLS instance where jobs queue and contention binds "
                                     "(optsched.generators.rar.contended_rar_instance: --load, --contention), "
                                     "or with --paper the literal section 7 rules (random_rar_instance: every "
                                     "small instance is then closed by the lower bound), or the paper's setting "
                                     "with --preset mobihoc22 (160 jobs, 20 servers, T = 1200).")
    p.add_argument("--preset", choices=["mobihoc22"], help="the paper's section 7 setting (ignores --jobs)")
    p.add_argument("--paper", action="store_true",
                   help="the literal section 7 rules (servers of 4-32 GPUs, xi_1 = xi_2) instead of queued jobs")
    p.add_argument("--load", type=positive_float("--load"), default=None,
                   help="GPUs the jobs ask for over the cluster's GPUs (default 2: jobs queue)")
    p.add_argument("--contention", type=positive_float("--contention"), default=None,
                   help="xi_1 in (0, 1] of k = max(1, xi_1 p) (default 1: two split jobs on a server contend)")
    p.add_argument("--jobs", type=positive_int("--jobs"), default=20, help="number of jobs (default 20)")
    p.add_argument("--servers", type=positive_int("--servers"), default=None,
                   help="number of servers (default 4; preset: 20)")
    p.add_argument("--horizon", type=positive_int("--horizon"), default=None, help="horizon T in slots (default 1200)")
    add_seed_and_output(p)
    p.set_defaults(build=_build_rar)


def _build_rar(args: argparse.Namespace):
    from ..cluster import SERVER_BYTES
    from ..errors import InstanceError
    from ..generators.rar import contended_rar_instance, mobihoc22_preset, random_rar_instance
    from ..limits import require_memory

    horizon = 1200 if args.horizon is None else args.horizon
    require_memory(args.jobs, JOB_BYTES, "jobs", field="--jobs")
    require_memory(args.servers or 0, SERVER_BYTES, "servers", field="--servers")
    if args.preset or args.paper:
        for flag, value in (("--load", args.load), ("--contention", args.contention)):
            if value is not None:
                raise InstanceError("applies to the default (queued) instances, not to --paper or --preset",
                                    field=flag)
    if args.contention is not None and args.contention > 1:
        raise InstanceError(f"must lie in (0, 1], got {args.contention:g}", field="--contention")
    if args.preset == "mobihoc22":
        return mobihoc22_preset(args.seed, servers=args.servers or 20, horizon=horizon)
    if args.paper:
        return random_rar_instance(args.jobs, args.servers or 4, args.seed, horizon=horizon)
    return contended_rar_instance(args.jobs, args.servers or 4, args.seed, horizon=horizon,
                                  load=2.0 if args.load is None else args.load,
                                  contention_xi=1.0 if args.contention is None else args.contention)


JOB_BYTES = 2_000  # a job in the instance, its file and the heuristics' per-job arrays (estimate)


def summary_rar(inst) -> str:
    sizes: dict[int, int] = {}
    for j in inst.jobs:
        sizes[j.gpus] = sizes.get(j.gpus, 0) + 1
    mix = ", ".join(f"{c}x{g}" for g, c in sorted(sizes.items()))
    return (f"{inst.name}: {inst.n_jobs} jobs ({mix} GPUs), {len(inst.cluster.servers)} servers, "
            f"{inst.cluster.total_gpus} GPUs, horizon {inst.horizon}")


def register_total_jct(kinds) -> None:
    p = kinds.add_parser("total-jct", help="total-JCT instance with placement choice (paper 001, tiny)",
                         description="Paper 001's problem A for the exact models: N jobs drawn from the Table I "
                                     "catalogue (estimated profiles, at most 4 GPUs each), releases in [0, 5] s, "
                                     "20-400 iterations; every placement shape is a mode with its exact "
                                     "per-iteration time (optsched.generators.total_jct.random_total_jct_instance). "
                                     "Solve it with 'optsched solve FILE' (branch and bound with CP-SAT beside it).")
    p.add_argument("--jobs", type=positive_int("--jobs", MAX_TOTAL_JCT_JOBS), default=5,
                   help=f"number of jobs (default 5, at most {MAX_TOTAL_JCT_JOBS:,}: the exact models prove "
                        "optima up to about a dozen)")
    p.add_argument("--servers", type=positive_int("--servers"), default=2, help="number of servers (default 2)")
    p.add_argument("--gpus-per-server", type=positive_int("--gpus-per-server"), default=4,
                   help="GPUs per server (default 4)")
    p.add_argument("--time-unit", type=positive_float("--time-unit"), default=0.01,
                   help="seconds per time unit (default 0.01)")
    p.add_argument("--nic-gbps", type=positive_float("--nic-gbps"), default=10.0,
                   help="NIC bandwidth in Gbps (default 10)")
    add_seed_and_output(p)
    p.set_defaults(build=_build_total_jct)


def _build_total_jct(args: argparse.Namespace):
    from ..errors import InstanceError
    from ..generators.total_jct import random_total_jct_instance

    if args.gpus_per_server * args.servers < 4:
        raise InstanceError("the catalogue's jobs need up to 4 GPUs: give at least 4 GPUs in total",
                            field="--gpus-per-server")
    return random_total_jct_instance(args.jobs, args.seed, args.servers, args.gpus_per_server,
                                     time_unit_s=args.time_unit, nic_gbps=args.nic_gbps)


def summary_total_jct(inst) -> str:
    modes = sum(len(j.modes) for j in inst.jobs)
    return (f"{inst.name}: {inst.n_jobs} jobs ({modes} placement shapes), {len(inst.cluster.servers)} servers, "
            f"{inst.cluster.total_gpus} GPUs, time unit {inst.time_unit_s} s")


def register_placement(kinds) -> None:
    p = kinds.add_parser("placement", help="one pipeline job on random free GPUs (paper 001, placement)",
                         description="A Table I catalogue job (estimated profile) on servers with random free "
                                     "GPUs that hold it with some room to spare "
                                     "(optsched.generators.placement.random_placement_instance). Solve it with "
                                     "'optsched solve FILE --algorithm heavy-edge|exact-time|exact-cut'.")
    p.add_argument("--job", default=None, metavar="MODEL:CONFIG",
                   help="catalogue job, e.g. VGG19:hybrid16 ('optsched place --list-models'); default: random")
    p.add_argument("--servers", type=positive_int("--servers"), default=4, help="number of servers (default 4)")
    p.add_argument("--gpus-per-server", type=positive_int("--gpus-per-server"), default=8,
                   help="GPUs per server, g (default 8)")
    p.add_argument("--nic-gbps", type=positive_float("--nic-gbps"), default=10.0, help="B_inter in Gbit/s (10)")
    p.add_argument("--intra-gbs", type=positive_float("--intra-gbs"), default=300.0, help="B_intra in GB/s (300)")
    add_seed_and_output(p)
    p.set_defaults(build=_build_placement)


def _build_placement(args: argparse.Namespace):
    from ..cluster import SERVER_BYTES
    from ..generators.placement import random_placement_instance
    from ..limits import require_memory

    require_memory(args.servers, SERVER_BYTES, "servers", field="--servers")
    return random_placement_instance(args.seed, servers=args.servers, gpus_per_server=args.gpus_per_server,
                                     nic_gbps=args.nic_gbps, intra_gbs=args.intra_gbs, job=args.job)


def summary_placement(inst) -> str:
    free = ",".join(f"{s}={n}" for s, n in inst.free.items())
    return (f"{inst.name}: job {inst.job.id} ({inst.job.gpus} GPUs, {inst.job.n_stages} stages) on free GPUs "
            f"{free}")


def register(sub) -> None:
    p = sub.add_parser("generate", help="generate an instance file",
                       description="Generate an instance file of the given kind (written atomically) and "
                                   "print a one-line summary. 'optsched generate KIND --help' for a kind's "
                                   "options.")
    kinds = p.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    # every registered problem with a generator brings its sub-parser (optsched.registry: Problem.generate_cli)
    for prob in problems().values():
        if prob.generate_cli:
            module, func = prob.generate_cli.split(":")
            getattr(importlib.import_module(module), func)(kinds)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..api import save
    from ..registry import problem_of

    instance = args.build(args)
    save(instance, args.output)
    summary = problem_of(instance).describe_instance(instance)
    if args.output == "-":
        print(summary, file=sys.stderr)
    else:
        print(f"{summary}\nwritten to {args.output}")
    return 0
