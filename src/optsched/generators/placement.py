"""Random placement instances (paper 001, section IV-B): a Table I catalogue job on random free GPUs.

>>> inst = random_placement_instance(seed=0)
>>> inst.free_gpus >= inst.job.gpus, inst.network.gpus_per_server
(True, 8)
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InstanceError
from ..models import CATALOGUE, catalogue_job
from ..problems.pipeline import Network
from ..problems.placement import PlacementInstance

__all__ = ["random_placement_instance"]


def random_placement_instance(seed: int = 0, *, servers: int = 4, gpus_per_server: int = 8,
                              nic_gbps: float = 10.0, intra_gbs: float = 300.0, job: str | None = None,
                              configs: Sequence[str] | None = None, slack: float = 0.5) -> PlacementInstance:
    """A catalogue job (``job``, e.g. ``"VGG19:hybrid16"``, or drawn from ``configs`` among those that fit) on
    ``servers`` servers whose free GPUs are drawn so that they hold the job plus about ``slack`` of it more.
    """
    if isinstance(servers, bool) or not isinstance(servers, int) or servers < 1:
        raise InstanceError(f"must be a positive integer, got {servers!r}", field="servers")
    rng = np.random.default_rng([seed, servers, gpus_per_server])
    capacity = servers * gpus_per_server
    if job is None:
        every = [f"{m}:{c.name}" for m, spec in CATALOGUE.items() for c in spec.configs]
        names = [c for c in (configs or every) if catalogue_job(c).gpus <= capacity]
        if not names:
            raise InstanceError(f"no catalogue job fits {capacity} GPUs", field="servers")
        job = names[int(rng.integers(len(names)))]
    spec = catalogue_job(job)
    if spec.gpus > capacity:
        raise InstanceError(f"{job!r} needs {spec.gpus} GPUs, the servers hold {capacity}", field="job")
    want = min(capacity, max(spec.gpus, int(round(spec.gpus * (1 + slack)))))
    free = np.zeros(servers, dtype=int)
    while free.sum() < want:  # one GPU at a time on a random server with room: uneven, like a busy cluster
        s = int(rng.choice(np.flatnonzero(free < gpus_per_server)))
        free[s] += 1
    return PlacementInstance(spec, {f"s{i}": int(n) for i, n in enumerate(free)},
                             Network.from_gbps(gpus_per_server, nic_gbps, intra_gbs),
                             name=f"placement-{job.replace(':', '-')}-s{servers}-seed{seed}")
