"""``optsched generate deadline ...``: a deadline workload of paper 003 (DRS), or a tiny one for the exact models.

``optsched generate deadline --lam 4 --window-h 24 --seed 0 -o trace.json`` writes the paper's default trace
(4 nodes x 4 GPUs, 10 / 6 GB/s, alpha shares 10/30/60 %); ``--tiny N`` writes N jobs on a small cluster with
one-GPU run times of 3-16 grid units (solve it with ``optsched solve FILE -a deadline-cpsat`` or
``deadline-brute``); ``--elasticflow N`` writes a format-2 workload of ElasticFlow's kind (16 x 4 GPUs,
measured-style tables, explicit deadlines).
"""

from __future__ import annotations

import argparse

from ._args import add_seed_and_output, positive_float, positive_int


def register(kinds) -> None:
    p = kinds.add_parser("deadline", help="deadline workload (paper 003, DRS)",
                         description="Poisson arrivals over an acceptance window, the paper's models with our "
                                     "estimated profiles, priorities alpha in {0.5, 1, 1.5} "
                                     "(optsched.generators.deadline.deadline_workload); with --tiny N, a tiny "
                                     "instance for the exact models (tiny_deadline_workload). Simulate it with "
                                     "'optsched simulate FILE --scheduler drs'; solve a tiny one with "
                                     "'optsched solve FILE -a deadline-cpsat'.")
    p.add_argument("--lam", type=positive_float("--lam"), default=4.0, help="arrivals per hour (default 4)")
    p.add_argument("--window-h", type=positive_float("--window-h"), default=24.0,
                   help="jobs arrive in [0, window) hours (default 24)")
    p.add_argument("--nodes", type=positive_int("--nodes"), default=None, help="nodes (default 4; tiny: 2)")
    p.add_argument("--gpus-per-node", type=positive_int("--gpus-per-node"), default=None,
                   help="GPUs per node (default 4; tiny: 2)")
    p.add_argument("--b-intra", type=positive_float("--b-intra"), default=10.0, help="B_intra, GB/s (default 10)")
    p.add_argument("--b-inter", type=positive_float("--b-inter"), default=6.0, help="B_inter, GB/s (default 6)")
    p.add_argument("--urgent-share", type=float, default=None,
                   help="share of alpha = 0.5 jobs (default 0.1; the others keep 1:2)")
    p.add_argument("--heavy-share", type=float, default=0.2, help="share of AlexNet + VGG-16 jobs (default 0.2)")
    p.add_argument("--tiny", type=positive_int("--tiny"), default=None, metavar="N",
                   help="a tiny instance of N jobs instead (for the exact models)")
    p.add_argument("--elasticflow", type=positive_int("--elasticflow"), default=None, metavar="N",
                   help="a format-2 workload of ElasticFlow's kind instead: N jobs (about 200 in its Fig. 8a) on "
                        "16 x 4 GPUs unless --nodes / --gpus-per-node, our made-up measured-style throughput "
                        "tables, explicit deadlines (elasticflow_shaped_workload); --load sets its offered load")
    p.add_argument("--load", type=positive_float("--load"), default=3.0,
                   help="with --elasticflow: offered GPU-seconds over the cluster's (default 3)")
    p.add_argument("--time-unit", type=positive_float("--time-unit"), default=60.0,
                   help="time grid of the exact models, seconds (default 60)")
    add_seed_and_output(p)
    p.set_defaults(build=build)


def build(args: argparse.Namespace):
    from ..generators.deadline import deadline_workload, elasticflow_shaped_workload, tiny_deadline_workload

    if args.elasticflow is not None:
        if args.tiny is not None:
            from ..errors import InstanceError

            raise InstanceError("give --tiny or --elasticflow, not both", field="--elasticflow")
        return elasticflow_shaped_workload(args.elasticflow, nodes=args.nodes or 16,
                                           gpus_per_node=args.gpus_per_node or 4, seed=args.seed, load=args.load)
    if args.tiny is not None:
        return tiny_deadline_workload(args.tiny, nodes=args.nodes or 2, gpus_per_node=args.gpus_per_node or 2,
                                      seed=args.seed, time_unit_s=args.time_unit, intra_bandwidth=args.b_intra,
                                      inter_bandwidth=args.b_inter)
    return deadline_workload(args.lam, args.window_h, nodes=args.nodes or 4, gpus_per_node=args.gpus_per_node or 4,
                             intra_bandwidth=args.b_intra, inter_bandwidth=args.b_inter,
                             urgent_share=args.urgent_share, heavy_share=args.heavy_share, seed=args.seed,
                             time_unit_s=args.time_unit)


def summary(wl) -> str:
    """One line: jobs, cluster, bandwidths, the priority mix and the jobs no plan can finish in time."""
    if any(j.throughput is not None for j in wl.jobs):
        caps = wl.capacities
        return (f"{wl.name}: {len(wl.jobs)} jobs with measured-style throughput tables and explicit deadlines, "
                f"{len(caps)} x {caps[0]} GPUs, {len(wl.unreachable())} unreachable deadlines")
    mix = "/".join(str(sum(j.alpha == a for j in wl.jobs)) for a in (0.5, 1.0, 1.5))
    caps = wl.capacities
    shape = f"{len(caps)} x {caps[0]}" if len(set(caps)) == 1 else "+".join(map(str, caps))
    return (f"{wl.name}: {len(wl.jobs)} jobs (alpha 0.5/1/1.5: {mix}), {shape} GPUs, "
            f"B_intra {wl.cluster.intra_bandwidth:g} / B_inter {wl.cluster.inter_bandwidth:g} GB/s, "
            f"{len(wl.unreachable())} unreachable deadlines")
