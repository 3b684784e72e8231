"""Instance generators and the papers' evaluation presets."""

from __future__ import annotations

from .cluster import Cluster, Server
from .problems.rar import RarInstance, RarJob


def tiny_rar_example() -> RarInstance:
    """Two jobs on two 4-GPU servers: the smallest instance with contention worth looking at.

    >>> tiny_rar_example().max_job_gpus
    4
    """
    cluster = Cluster((Server("s0", 4), Server("s1", 4)), intra_bandwidth=50.0, inter_bandwidth=5.0)
    jobs = (
        RarJob("j0", gpus=4, iterations=120, gradient_size=0.05, batch_size=32,
               forward_time_per_sample=0.0005, backward_time=0.02),
        RarJob("j1", gpus=2, iterations=80, gradient_size=0.02, batch_size=16,
               forward_time_per_sample=0.0005, backward_time=0.015),
    )
    return RarInstance(cluster, horizon=60, jobs=jobs, reduce_speed=100.0, contention_xi=0.5,
                       overhead_xi=0.002, degradation_alpha=0.2, name="tiny-rar-example")
