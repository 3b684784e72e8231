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

__all__ = ["DEFAULT_ALPHA_SHARES", "DEFAULT_HEAVY_SHARE", "EF_ASKS", "EF_BURSTS", "EF_PROFILES", "EF_SHAPE_V1",
           "EF_WORK_H", "deadline_workload", "elasticflow_shaped_workload", "profile_row", "tiny_deadline_workload"]

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


#: the models of [`elasticflow_shaped_workload`][optsched.generators.deadline.elasticflow_shaped_workload]: OUR
#: made-up profiles in the shape of measured tables (not anyone's measurements): name -> (iterations/s on one GPU
#: at the smaller global batch, scaling exponent, the count after which adding GPUs slows the job down, global
#: batches). Throughput on n <= peak GPUs is t1 x n ** exponent, beyond it falls as (peak / n) ** 0.3: rows that
#: do not grow with the count, as in measured tables (a model fastest on one GPU: peak 1).
EF_PROFILES: dict[str, tuple[float, float, int, tuple[int, int]]] = {
    "resnet-like": (0.30, 0.92, 64, (256, 512)),
    "vgg-like": (0.20, 0.75, 16, (128, 256)),
    "bert-like": (1.20, 0.85, 32, (64, 128)),
    "speech-like": (0.50, 0.80, 16, (64, 128)),
    "yolo-like": (0.45, 0.70, 4, (32, 64)),
    "recsys-like": (2.00, 0.50, 1, (8192, 16384)),
}
#: the GPU counts of the generated tables (ElasticFlow's tables list powers of two)
EF_COUNTS = (1, 2, 4, 8, 16, 32, 64)


def profile_row(model: str, batch_index: int = 0) -> tuple[tuple[int, float], ...]:
    """The throughput row (GPU count, iterations/s) of an [`EF_PROFILES`][optsched.generators.deadline.EF_PROFILES]
    model at its first (0) or second (1, twice the batch: half the iterations per second) global batch.

    ```pycon
    >>> [round(v, 3) for _, v in profile_row("recsys-like")][:3]      # fastest on one GPU
    [2.0, 1.625, 1.32]

    ```
    """
    t1, e, peak, _ = EF_PROFILES[model]
    t1 = t1 / (2 ** batch_index)
    row = []
    for n in EF_COUNTS:
        v = t1 * min(n, peak) ** e * (1.0 if n <= peak else (peak / n) ** 0.3)
        row.append((n, v))
    return tuple(row)


#: the measured work of the public Fig. 8a trace (pkusys/ElasticFlow, ``elasticVpollux_e.csv`` with its T4 tables):
#: there every job of a model and global batch has the same number of iterations, so its one-GPU run time is
#: fixed; in hours, at the smaller and the larger batch, for the T4 model each profile stands for (the same peak
#: count: ImageNet, CIFAR-10, BERT, DeepSpeech2, YOLOv3, NCF). Facts cited, not the trace copied.
EF_WORK_H: dict[str, tuple[float, float]] = {
    "resnet-like": (172.69, 196.54),
    "vgg-like": (1.239, 1.568),
    "bert-like": (3.875, 3.875),
    "speech-like": (6.388, 8.030),
    "yolo-like": (9.243, 9.243),
    "recsys-like": (0.00917, 0.00917),
}
#: requested GPU counts of the Fig. 8a trace (its ``num_gpu``: 118, 1, 45, 28 and 3 of its 195 jobs), drawn
#: whatever the model (its NCF jobs ask for 4 and 8 GPUs, on which they run slower than on one)
EF_ASKS: tuple[tuple[int, float], ...] = ((1, 118), (2, 1), (4, 45), (8, 28), (16, 3))
#: the Fig. 8a trace's gaps between arrivals, relative to their mean (887 s), fitted by EM as a mixture of two
#: exponentials: 53 % of them short, of mean 0.024 x the mean gap (bursts of submissions), the rest long (mean
#: 2.12 x); their coefficient of variation is 2.04 (1 for Poisson arrivals)
EF_BURSTS = (0.53, 0.024)
#: the first shape of the generator (before the Fig. 8a statistics were measured): run times log-normal on the
#: requested count (median 3 h, sigma 1.8), requested counts 1/4/8/16 at 60:23:14:3 capped at the model's peak,
#: Poisson arrivals. ``elasticflow_shaped_workload(n, seed=s, **EF_SHAPE_V1)`` is that workload, job for job.
EF_SHAPE_V1: dict = {"work": "lognormal", "asks": ((1, 60), (4, 23), (8, 14), (16, 3)), "asks_within_peak": True,
                     "bursts": None}


def elasticflow_shaped_workload(n_jobs: int = 200, *, nodes: int = 16, gpus_per_node: int = 4, seed: int = 0,
                                load: float = 3.0, slack: tuple[float, float] = (0.5, 1.5),
                                best_effort_share: float = 0.0, work: str = "per-model", work_sigma: float = 0.0,
                                asks: Sequence[tuple[int, float]] = EF_ASKS, asks_within_peak: bool = False,
                                bursts: tuple[float, float] | None = EF_BURSTS, name: str = "") -> DeadlineWorkload:
    """A format-2 workload of ElasticFlow's kind (its Fig. 8a setting: about 200 jobs on 16 x 4 GPUs):
    throughput rows in the shape of measured tables ([`EF_PROFILES`][optsched.generators.deadline.EF_PROFILES],
    OUR made-up numbers, some rows non-monotone), explicit deadlines, a requested count per job.

    The defaults are the statistics measured on the public Fig. 8a trace (docs/results/elasticflow.md, "shape"):

    * each job draws a model uniformly and one of its two global batches;
    * ``work="per-model"``: its one-GPU run time is its model's ([`EF_WORK_H`][optsched.generators.deadline.EF_WORK_H],
      times a log-normal factor of sigma ``work_sigma``, 0 as measured); ``"lognormal"``: the first shape, a
      run time on the requested count of median 3 h, sigma 1.8, clipped to [36 s, 200 h];
    * a requested count drawn with the weights ``asks`` ((count, weight), ...; counts above the cluster are
      dropped, and above the model's peak too if ``asks_within_peak``);
    * a deadline at its arrival plus ``slack`` (uniform range) times its run time on the requested count;
    * arrivals at the rate that offers ``load`` x the cluster's GPU-seconds (requested counts), the gaps a
      mixture of exponentials: a share ``bursts[0]`` of mean ``bursts[1]`` x the mean gap, the rest longer so
      that the mean is kept (``None``: Poisson);
    * a ``best_effort_share`` of the jobs without a deadline (none in the trace).

    ``**EF_SHAPE_V1`` gives the generator's first shape ([`EF_SHAPE_V1`][optsched.generators.deadline.EF_SHAPE_V1]).

    ```pycon
    >>> wl = elasticflow_shaped_workload(20, seed=1)
    >>> len(wl), wl.total_gpus, all(j.throughput is not None and j.deadline_s > j.arrival_s for j in wl.jobs)
    (20, 64, True)
    >>> old = elasticflow_shaped_workload(20, seed=1, **EF_SHAPE_V1)
    >>> old.meta["work"], wl.meta["work"]
    ('lognormal', 'per-model')

    ```
    """
    n_jobs = _count(n_jobs, "n_jobs")
    nodes, gpus_per_node = _count(nodes, "nodes"), _count(gpus_per_node, "gpus_per_node")
    load = _positive(load, "load")
    be_share = _share(best_effort_share, "best_effort_share")
    lo, hi = slack
    if not (0 < lo <= hi and math.isfinite(hi)):
        raise InstanceError(f"must be 0 < lo <= hi, got {slack!r}", field="slack")
    if work not in ("per-model", "lognormal"):
        raise InstanceError(f"must be 'per-model' or 'lognormal', got {work!r}", field="work")
    if isinstance(work_sigma, bool) or not isinstance(work_sigma, (int, float)) or not 0 <= work_sigma < 10:
        raise InstanceError(f"must be a number in [0, 10), got {work_sigma!r}", field="work_sigma")
    try:
        ask_table = [(int(c), float(w)) for c, w in asks]
    except (TypeError, ValueError):
        raise InstanceError(f"must be (GPU count, weight) pairs, got {asks!r}", field="asks") from None
    if not ask_table or any(c < 1 or not (w >= 0 and math.isfinite(w)) for c, w in ask_table) \
            or sum(w for _, w in ask_table) <= 0:
        raise InstanceError(f"must be (count >= 1, weight >= 0) pairs with a positive weight, got {asks!r}",
                            field="asks")
    if bursts is not None:
        p_short, m_short = (_share(bursts[0], "bursts"), _positive(bursts[1], "bursts"))
        if p_short * m_short >= 1 or p_short >= 1:
            raise InstanceError(f"the short gaps must leave room for the mean (share x mean < 1, share < 1), "
                                f"got {bursts!r}", field="bursts")
        m_long = (1 - p_short * m_short) / (1 - p_short)
    rng = np.random.default_rng(seed)
    names = list(EF_PROFILES)
    total = nodes * gpus_per_node
    drafts = []
    for i in range(n_jobs):
        model = names[int(rng.integers(len(names)))]
        bi = int(rng.integers(2))
        row = profile_row(model, bi)
        cap = min(EF_PROFILES[model][2], total) if asks_within_peak else total
        allowed = [(c, w) for c, w in ask_table if c <= cap] or [(1, 1.0)]
        w = np.array([w for _, w in allowed], dtype=float)
        if w.sum() <= 0:
            w = np.ones(len(allowed))
        ask = allowed[int(rng.choice(len(allowed), p=w / w.sum()))][0]
        speed = dict(row)
        thr = speed[ask] if ask in speed else speed[max(c for c in speed if c <= ask)]
        if work == "lognormal":
            hours = float(min(max(rng.lognormal(np.log(3.0), 1.8), 0.01), 200.0))
            iters = max(1.0, round(hours * 3600.0 * thr))
        else:
            one_gpu_h = EF_WORK_H[model][bi] * (float(rng.lognormal(0.0, work_sigma)) if work_sigma > 0 else 1.0)
            iters = max(1.0, round(one_gpu_h * 3600.0 * speed[1]))
        drafts.append((f"e{i:04d}", model, bi, row, ask, iters, iters / thr, float(rng.uniform(lo, hi)),
                       bool(rng.random() < be_share)))
    mean_gpu_s = float(np.mean([d[4] * d[6] for d in drafts]))
    rate = load * total / mean_gpu_s  # arrivals per second
    t = 0.0
    jobs = []
    for jid, model, bi, row, ask, iters, run_s, f, be in drafts:
        if bursts is None:
            t += float(rng.exponential(1.0 / rate))
        else:
            t += float(rng.exponential((m_short if rng.random() < p_short else m_long) / rate))
        arr = round(t, 3)
        jobs.append(DeadlineJob(jid, model, arr, deadline_at_s=None if be else round(arr + f * run_s, 3),
                                best_effort=be, iterations=iters, batch=EF_PROFILES[model][3][bi], gpus=ask,
                                throughput=row))
    cluster = paper_cluster(nodes, gpus_per_node)
    meta = {"generator": "elasticflow_shaped_workload", "load": load, "slack": [lo, hi],
            "best_effort_share": be_share, "work": work, "work_sigma": work_sigma,
            "asks": [list(a) for a in ask_table], "asks_within_peak": asks_within_peak,
            "bursts": None if bursts is None else list(bursts), "profiles": "our made-up measured-style tables"}
    return DeadlineWorkload(cluster, tuple(jobs), name or f"ef-shaped-{n_jobs}j-{nodes}x{gpus_per_node}-s{seed}",
                            seed, meta=meta)
