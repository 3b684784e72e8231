"""Deadline workloads (paper 003, section 4): Poisson arrivals over an acceptance window, the named models with
our estimated profiles, priorities alpha in {0.5, 1, 1.5}; and tiny instances for the exact models.

Defaults are the paper's (digest 003, section 4): 4 nodes x 4 GPUs, B_intra 10 GB/s, B_inter 6 GB/s,
lambda = 4 jobs/hour accepted over 0-24 h, alpha shares 10/30/60 %. The model mix: AlexNet and VGG-16 make up
1/5 of the jobs (the text: "AlexNet and VGG-16 ... from 1/5 in Table 2 to 1/3" for Fig. 11), the five other
models share the rest evenly. Epochs are drawn uniformly from each model's range
([`MODELS`][optsched.problems.deadline.MODELS], our
estimates).

Each random quantity has its own stream (arrivals, model, epochs, priority), and the priority and model draws
are coupled across parameter values: a job urgent at a 10 % urgent share stays urgent at 30 %, and a job drawn
heavy at 1/5 stays heavy at 1/3, so a sweep over the urgent share changes the priorities of the same jobs
(Fig. 9: FIFO and Themis, which ignore deadlines, then see exactly the same jobs).

```pycon
>>> wl = deadline_workload(seed=1)
>>> wl.capacities, wl.cluster.intra_bandwidth, len(wl) > 60, all(j.arrival_s < 24 * 3600 for j in wl.jobs)
((4, 4, 4, 4), 10.0, True, True)
>>> a, b = deadline_workload(seed=1, urgent_share=0.1), deadline_workload(seed=1, urgent_share=0.5)
>>> [j.arrival_s for j in a.jobs] == [j.arrival_s for j in b.jobs]
True
>>> {j.id for j in a.jobs if j.alpha == 0.5} <= {j.id for j in b.jobs if j.alpha == 0.5}
True

```
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..errors import InstanceError
from ..limits import require_memory
from ..problems.deadline import ALPHAS, HEAVY_MODELS, MODELS, DeadlineJob, DeadlineWorkload, paper_cluster

__all__ = ["DEFAULT_ALPHA_SHARES", "DEFAULT_HEAVY_SHARE", "deadline_workload", "tiny_deadline_workload"]

DEFAULT_ALPHA_SHARES = (0.1, 0.3, 0.6)
DEFAULT_HEAVY_SHARE = 0.2


# a workload of a million deadline jobs is 40x the paper's largest trace; beyond it a typo ('--lam 1e9') would run
# for minutes or hours before failing
MAX_EXPECTED_JOBS = 1_000_000
JOB_BYTES = 400  # measured: about 330 bytes per DeadlineJob (tracemalloc, 2,366 jobs)


def _share(v: float, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
        raise InstanceError(f"must be a number in [0, 1], got {v!r}", field=name)
    return float(v)


def _positive(v: float, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (v > 0 and math.isfinite(v)):
        raise InstanceError(f"must be a positive number, got {v!r}", field=name)
    return float(v)


def _count(v: int, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise InstanceError(f"must be a positive integer, got {v!r}", field=name)
    return v


def _streams(seed: int) -> list[np.random.Generator]:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InstanceError(f"must be an integer >= 0, got {seed!r}", field="seed")
    return [np.random.default_rng([seed, k]) for k in range(5)]


def deadline_workload(lam: float = 4.0, window_h: float = 24.0, *, nodes: int = 4, gpus_per_node: int = 4,
                      intra_bandwidth: float = 10.0, inter_bandwidth: float = 6.0,
                      alpha_shares: Sequence[float] = DEFAULT_ALPHA_SHARES, urgent_share: float | None = None,
                      heavy_share: float = DEFAULT_HEAVY_SHARE, seed: int = 0, name: str | None = None,
                      time_unit_s: float = 60.0) -> DeadlineWorkload:
    """A Poisson trace: ``lam`` jobs/hour arriving in [0, ``window_h``) hours on ``nodes`` x ``gpus_per_node``.

    ``alpha_shares``: shares of alpha = 0.5, 1, 1.5; ``urgent_share`` (Fig. 9) sets the share of alpha = 0.5
    and keeps the 1 : 2 ratio of the two others. ``heavy_share``: share of AlexNet + VGG-16 jobs (1/5 by
    default, Fig. 11's restricted queue: 1/3).
    """
    lam, window_h = _positive(lam, "lam"), _positive(window_h, "window_h")
    nodes, gpus_per_node = _count(nodes, "nodes"), _count(gpus_per_node, "gpus_per_node")
    expected = lam * window_h
    if expected > MAX_EXPECTED_JOBS:
        # checked before the draw: lam=1e9 would loop over billions of arrivals before any memory error
        raise InstanceError(f"lam x window_h = {expected:.3g} expected jobs, more than {MAX_EXPECTED_JOBS:,} "
                            "(lower lam or window_h)", field="lam" if lam >= window_h else "window_h")
    require_memory(round(expected), JOB_BYTES, "jobs", field="lam")
    require_memory(nodes * gpus_per_node, 64, "GPUs", field="nodes")
    heavy_share = _share(heavy_share, "heavy_share")
    shares = [_share(s, "alpha_shares") for s in alpha_shares]
    if len(shares) != len(ALPHAS) or abs(sum(shares) - 1) > 1e-9:
        raise InstanceError(f"must be {len(ALPHAS)} shares summing to 1, got {list(alpha_shares)!r}",
                            field="alpha_shares")
    if urgent_share is not None:
        p = _share(urgent_share, "urgent_share")
        rest = shares[1] + shares[2]
        shares = [p, (1 - p) * shares[1] / rest, (1 - p) * shares[2] / rest] if rest > 0 else [p, 1 - p, 0.0]
    cluster = paper_cluster(nodes, gpus_per_node, intra_bandwidth, inter_bandwidth)
    r_arr, r_model, r_epochs, r_alpha, r_pick = _streams(seed)
    heavy = list(HEAVY_MODELS)
    light = [m for m in MODELS if m not in HEAVY_MODELS]
    cum = np.cumsum(shares)
    jobs: list[DeadlineJob] = []
    t = 0.0
    window_s = window_h * 3600.0
    while True:
        t += float(r_arr.exponential(3600.0 / lam))
        if t >= window_s:
            break
        i = len(jobs)
        u_model, u_pick = float(r_model.random()), float(r_pick.random())
        pool = heavy if u_model < heavy_share else light
        model = MODELS[pool[min(int(u_pick * len(pool)), len(pool) - 1)]]
        lo, hi = model.epochs
        epochs = int(r_epochs.integers(lo, hi + 1))
        u = float(r_alpha.random())
        alpha = ALPHAS[min(int(np.searchsorted(cum, u, side="right")), len(ALPHAS) - 1)]
        jobs.append(DeadlineJob(f"j{i:04d}", model.name, round(t, 3), alpha, epochs))
    label = name or f"deadline-lam{lam:g}-w{window_h:g}-{nodes}x{gpus_per_node}-s{seed}"
    meta = {"generator": "deadline_workload", "lam_per_h": lam, "window_h": window_h,
            "alpha_shares": [round(s, 6) for s in shares], "heavy_share": heavy_share,
            "profiles": "our estimates (docs/algorithms/drs.md)"}
    return DeadlineWorkload(cluster, tuple(jobs), label, seed, time_unit_s, meta=meta)


def tiny_deadline_workload(n_jobs: int = 4, *, nodes: int = 2, gpus_per_node: int = 2, seed: int = 0,
                           time_unit_s: float = 60.0, max_release_units: int = 6,
                           run_units: tuple[int, int] = (3, 16), intra_bandwidth: float = 10.0,
                           inter_bandwidth: float = 6.0) -> DeadlineWorkload:
    """A tiny instance for the exact models: ``n_jobs`` catalogue jobs whose one-GPU run time is
    ``run_units`` (uniform integer range) grid units of ``time_unit_s``, released at whole grid units in
    ``[0, max_release_units]``, alpha uniform over {0.5, 1, 1.5}.

    ```pycon
    >>> wl = tiny_deadline_workload(4, seed=3)
    >>> len(wl), wl.capacities, all((j.arrival_s / 60).is_integer() for j in wl.jobs)
    (4, (2, 2), True)

    ```
    """
    n_jobs = _count(n_jobs, "n_jobs")
    nodes, gpus_per_node = _count(nodes, "nodes"), _count(gpus_per_node, "gpus_per_node")
    time_unit_s = _positive(time_unit_s, "time_unit_s")
    lo, hi = run_units
    if not (isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi):
        raise InstanceError(f"must be integers 1 <= lo <= hi, got {run_units!r}", field="run_units")
    r_arr, r_model, r_len, r_alpha, _ = _streams(seed)
    names = list(MODELS)
    jobs = []
    for i in range(n_jobs):
        model = MODELS[names[int(r_model.integers(len(names)))]]
        t1 = int(r_len.integers(lo, hi + 1)) * time_unit_s
        release = int(r_arr.integers(0, max_release_units + 1)) * time_unit_s
        alpha = ALPHAS[int(r_alpha.integers(len(ALPHAS)))]
        jobs.append(DeadlineJob(f"t{i}", model.name, float(release), alpha, t1 / model.epoch_time_1gpu_s))
    cluster = paper_cluster(nodes, gpus_per_node, intra_bandwidth, inter_bandwidth)
    meta = {"generator": "tiny_deadline_workload", "run_units": [lo, hi], "max_release_units": max_release_units}
    return DeadlineWorkload(cluster, tuple(jobs), f"tiny-{n_jobs}j-{nodes}x{gpus_per_node}-s{seed}", seed,
                            time_unit_s, meta=meta)
