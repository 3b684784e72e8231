"""Random placement instances (paper 001, section IV-B): a Table I catalogue job on random free GPUs.

```pycon
>>> inst = random_placement_instance(seed=0)
>>> inst.free_gpus >= inst.job.gpus, inst.network.gpus_per_server
(True, 8)

```
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..errors import InstanceError
from ..limits import require_memory
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
    for name, v, low in (("servers", servers, 1), ("gpus_per_server", gpus_per_server, 1), ("seed", seed, 0)):
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise InstanceError(f"must be an integer >= {low}, got {v!r:.60}", field=name)
    require_memory(servers * gpus_per_server, 64, "GPUs", field="servers")
    if isinstance(slack, bool) or not isinstance(slack, (int, float)) or not (math.isfinite(slack) and slack >= 0):
        raise InstanceError(f"must be a finite number >= 0 (the free GPUs beyond the job's, as a share of it), "
                            f"got {slack!r:.60}", field="slack")
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
