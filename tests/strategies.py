"""Hypothesis strategies shared by the tests: random valid problem instances."""

from __future__ import annotations

from hypothesis import strategies as st

from optsched.cluster import Cluster, Server
from optsched.problems.rar import RarInstance, RarJob


@st.composite
def rar_instances(draw, max_jobs: int = 6, max_servers: int = 3, max_server_gpus: int = 8,
                  max_iterations: int = 400, horizon: int = 400) -> RarInstance:
    """Random valid RAR-DDLS instances; per-iteration times stay well under one slot by construction."""
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
    return RarInstance(cluster, horizon=horizon, jobs=tuple(jobs), reduce_speed=100.0,
                       contention_xi=draw(st.sampled_from([0.25, 0.5, 1.0])),
                       overhead_xi=draw(st.sampled_from([0.0, 0.001, 0.005])),
                       degradation_alpha=draw(st.sampled_from([0.0, 0.2, 0.5])))
