"""Hypothesis strategies shared by the tests: random valid problem instances."""

from __future__ import annotations

from hypothesis import reject
from hypothesis import strategies as st

from optsched.cluster import Cluster, Server
from optsched.errors import InstanceError
from optsched.problems.rar import RarInstance, RarJob


@st.composite
def rar_instances(draw, max_jobs: int = 6, max_servers: int = 3, max_server_gpus: int = 8,
                  max_iterations: int = 400, horizon: int = 400) -> RarInstance:
    """Random valid RAR-DDLS instances. Per-iteration times stay under one slot but for rare draws (slow links,
    large gradients, many jobs sharing a link: contention p = 8 reached 1.01 slots), which are rejected."""
    n_servers = draw(st.integers(1, max_servers))
    servers = tuple(Server(f"s{i}", draw(st.integers(1, max_server_gpus))) for i in range(n_servers))
    cluster = Cluster(servers, intra_bandwidth=draw(st.sampled_from([20.0, 50.0, 100.0])),
                      inter_bandwidth=draw(st.sampled_from([2.0, 5.0, 10.0])))
    total = cluster.total_gpus
    n_jobs = draw(st.integers(1, max_jobs))
    jobs = []
    for i in range(n_jobs):
        jobs.append(RarJob(
            f"j{i}", gpus=draw(st.integers(1, min(total, 8))), iterations=draw(st.integers(1, max_iterations)),
            gradient_size=draw(st.sampled_from([0.0, 0.01, 0.05, 0.1])), batch_size=draw(st.sampled_from([8, 16, 32])),
            forward_time_per_sample=draw(st.sampled_from([0.0, 0.0002, 0.0005])),
            backward_time=draw(st.sampled_from([0.005, 0.01, 0.02, 0.05])),
            lam=draw(st.sampled_from([1.0, 1.0, 2.0]))))
    try:
        return RarInstance(cluster, horizon=horizon, jobs=tuple(jobs), reduce_speed=100.0,
                           contention_xi=draw(st.sampled_from([0.25, 0.5, 1.0])),
                           overhead_xi=draw(st.sampled_from([0.0, 0.001, 0.005])),
                           degradation_alpha=draw(st.sampled_from([0.0, 0.2, 0.5])))
    except InstanceError as exc:
        if "never progress" not in str(exc):
            raise
        reject()


@st.composite
def micro_rar_instances(draw, max_jobs: int = 3, max_servers: int = 2, max_server_gpus: int = 4,
                        max_iterations: int = 120) -> RarInstance:
    """Tiny RAR-DDLS instances where contention matters (xi_1 = 1, alpha >= 0.5, large gradients): durations of
    a few slots, so that exhaustive enumeration and CP-SAT both finish in well under a second."""
    n_servers = draw(st.integers(1, max_servers))
    cluster = Cluster(tuple(Server(f"s{i}", draw(st.integers(1, max_server_gpus))) for i in range(n_servers)),
                      intra_bandwidth=50.0, inter_bandwidth=draw(st.sampled_from([4.0, 8.0, 20.0])))
    jobs = tuple(
        RarJob(f"j{i}", gpus=draw(st.integers(1, min(cluster.total_gpus, 6))),
               iterations=draw(st.integers(5, max_iterations)),
               gradient_size=draw(st.sampled_from([0.02, 0.05, 0.1])), batch_size=16,
               forward_time_per_sample=0.0005, backward_time=draw(st.sampled_from([0.01, 0.03])))
        for i in range(draw(st.integers(1, max_jobs))))
    return RarInstance(cluster, horizon=60, jobs=jobs, reduce_speed=100.0, contention_xi=1.0,
                       overhead_xi=draw(st.sampled_from([0.0, 0.003])),
                       degradation_alpha=draw(st.sampled_from([0.5, 1.0])))


@st.composite
def exact_rate_rar_instances(draw, max_jobs: int = 6, max_server_gpus: int = 4) -> RarInstance:
    """One server, no communication (gradient 0), per-iteration time exactly 1/k slots and F_j a multiple of k:
    every job runs exactly F_j / k slots whatever happens, so SJF-BCO's estimates are exact (u = l = 1) and
    phi = 1. On these, Theorem 5's ratio is n_g: the paper's guarantee is at its tightest."""
    gpus = draw(st.integers(1, max_server_gpus))
    k = draw(st.sampled_from([2, 4]))
    jobs = tuple(RarJob(f"j{i}", gpus=draw(st.integers(1, gpus)), iterations=k * draw(st.integers(1, 4)),
                        gradient_size=0.0, batch_size=1, forward_time_per_sample=0.0, backward_time=1.0 / k)
                 for i in range(draw(st.integers(1, max_jobs))))
    return RarInstance(Cluster((Server("s0", gpus),), intra_bandwidth=1.0, inter_bandwidth=1.0), horizon=50,
                       jobs=jobs, overhead_xi=0.0)
