"""Total-JCT instances (paper 001's problem A) from pipeline jobs, and the random generator of the benchmarks.

[`from_pipeline_jobs`][optsched.generators.total_jct.from_pipeline_jobs] turns paper 001's pipeline jobs into a
[`TotalJctInstance`][optsched.problems.total_jct.TotalJctInstance]: every shape of g_i GPUs on the cluster's servers,
alpha per shape exact (min over count matrices of that shape, eq. 7) or Heavy-Edge's, durations n_i * alpha
rounded up (an upper bound on the continuous optimum) or down (a lower bound).
[`random_total_jct_instance`][optsched.generators.total_jct.random_total_jct_instance]
is the generator the registry names.
"""

from __future__ import annotations

import math
import warnings
from typing import Mapping, Sequence

import numpy as np

from ..algorithms.heavy_edge import alpha_tilde_min, heavy_edge
from ..cluster import Cluster, as_cluster
from ..errors import InstanceError
from ..limits import require_memory
from ..models import catalogue_job
from ..perf.pipeline import Network, alpha_max, min_alpha_enumerate
from ..perf.pipeline import alpha as alpha_of
from ..problems.pipeline import PipelineJob
from ..problems.total_jct import Mode, TotalJctInstance, TotalJctJob, _is_int, _is_real, shapes_of

__all__ = ["TINY_SPECS", "from_pipeline_jobs", "random_pipeline_jobs", "random_total_jct_instance"]


def from_pipeline_jobs(jobs: Sequence, cluster: Cluster | tuple[int, int] = (2, 4), *, nic_gbps: float = 10.0,
                       intra_gbs: float = 300.0, time_unit_s: float = 1.0, alpha: str = "exact",
                       rounding: str = "up", weights: Mapping[str, int] | None = None, seed: int = 0,
                       name: str = "") -> TotalJctInstance:
    """Problem A of paper 001 from pipeline jobs, as a
    [`TotalJctInstance`][optsched.problems.total_jct.TotalJctInstance].

    ``jobs``: tuples ``(id, release_s, PipelineJob, iterations[, predicted])`` (the format of
    [`optsched.sim.asrpt.run_asrpt`][]). Every shape of g_i GPUs on the (homogeneous) servers is a mode, with
    per-iteration time (ms, eq. 7) ``alpha="exact"`` (the minimum over count matrices of that shape, by
    enumeration, [`optsched.perf.pipeline.min_alpha_enumerate`][]) or ``"heavy-edge"`` (Heavy-Edge's mapping
    on that shape, seeded). Duration = n_i * alpha / 1000 s in units of ``time_unit_s``, release = r_i in those
    units, both rounded ``"up"`` (every schedule of the rounded instance is feasible for the continuous one:
    its optimum is an upper bound on the continuous optimum) or ``"down"`` (a lower bound). Each job also
    carries alpha_i^max (closed form) and alpha~_i^min (Heavy-Edge on the fewest servers), both in ms.

    ```pycon
    >>> from optsched.models import catalogue_job
    >>> inst = from_pipeline_jobs([("a", 0.0, catalogue_job("VGG19:dp4"), 100)], (2, 4), time_unit_s=0.5)
    >>> [m.shape for m in inst.jobs[0].modes]
    [(4,), (3, 1), (2, 2)]
    >>> [m.duration for m in inst.jobs[0].modes]     # 0.5 s units: the ring all-reduce crosses the NIC
    [15, 566, 290]

    ```
    """
    if alpha not in ("exact", "heavy-edge"):
        raise InstanceError(f"must be 'exact' or 'heavy-edge', got {alpha!r}", field="alpha")
    if rounding not in ("up", "down"):
        raise InstanceError(f"must be 'up' or 'down', got {rounding!r}", field="rounding")
    if not _is_real(time_unit_s) or time_unit_s <= 0:
        raise InstanceError(f"must be a positive number, got {time_unit_s!r}", field="time_unit_s")
    cl = as_cluster(cluster, homogeneous="paper 001's model")
    net = Network.from_gbps(cl.max_server_gpus, nic_gbps, intra_gbs)
    rnd = (lambda x: int(math.ceil(x - 1e-9))) if rounding == "up" else (lambda x: int(math.floor(x + 1e-9)))
    out = []
    for idx, row in enumerate(jobs):
        try:
            jid, release_s, spec, iters, *_ = row
        except (TypeError, ValueError):
            raise InstanceError("each job must be (id, release_s, PipelineJob, iterations[, predicted])",
                                field=f"jobs[{idx}]") from None
        if not isinstance(spec, PipelineJob):
            raise InstanceError(f"must be a PipelineJob, got {type(spec).__name__}", field=f"jobs[{idx}].spec",
                                job=str(jid))
        if not _is_real(iters) or iters < 0:
            raise InstanceError(f"must be a number >= 0, got {iters!r}", field=f"jobs[{idx}].iterations",
                                job=str(jid))
        if not _is_real(release_s) or release_s < 0:
            raise InstanceError(f"must be a number >= 0, got {release_s!r}", field=f"jobs[{idx}].release_s",
                                job=str(jid))
        modes = []
        for shape in shapes_of(spec.gpus, [s.gpus for s in cl.servers]):
            if alpha == "exact":
                a_ms, cols = min_alpha_enumerate(spec, net, list(shape), exact_sizes=True)
                cols = [tuple(c) for c in cols]
            else:
                res = heavy_edge(spec, [(f"m{k}", v) for k, v in enumerate(shape)], rng=seed)
                cols = [tuple(res.counts[f"m{k}"]) for k in range(len(shape))]
                a_ms = alpha_of(spec, net, cols, check=False)
            modes.append(Mode(shape, rnd(iters * a_ms / 1000.0 / time_unit_s), a_ms, tuple(cols)))
        out.append(TotalJctJob(str(jid), rnd(release_s / time_unit_s), spec.gpus, tuple(modes),
                               1 if weights is None else weights.get(str(jid), 1), iters, alpha_max(spec, net),
                               alpha_tilde_min(spec, net, seed=seed)))
    return TotalJctInstance(cl, tuple(out), float(time_unit_s), name)


# paper 001's Table I catalogue entries with at most 4 GPUs (optsched.models, ESTIMATED profiles): jobs that fit
# the tiny clusters on which the exact model is tractable
TINY_SPECS = ("VGG19:1gpu", "VGG19:dp4", "VGG19:pp4", "ResNet152:1gpu", "Inception-V3:1gpu", "Inception-V3:dp4",
              "Inception-V3:pp2x2", "BERT-large:1gpu", "BERT-large:dp4", "T5:pp3", "GPT-6.7B:pp3")


# the exact modes of every job take about a millisecond each; the exact models prove optima for tens of jobs
MAX_JOBS = 10_000


def random_pipeline_jobs(n: int, seed: int, specs: Sequence[str] = TINY_SPECS) -> list[tuple]:
    """``n`` jobs ``(id, release_s, PipelineJob, iterations, predicted)`` drawn with ``default_rng([seed, n])``:
    a catalogue entry from ``specs``, 20-400 iterations, release uniform in [0, 5] s (so that jobs contend),
    predicted iterations = true +- up to 50 %. The input of
    [`from_pipeline_jobs`][optsched.generators.total_jct.from_pipeline_jobs] and of
    [`optsched.sim.asrpt.run_asrpt`][].

    ```pycon
    >>> [(j[0], j[2].gpus, j[3]) for j in random_pipeline_jobs(2, 0)]
    [('j0', 3, 50), ('j1', 3, 75)]

    ```
    """
    if not _is_int(n) or n < 1:
        raise InstanceError(f"must be a positive integer, got {n!r}", field="jobs")
    rng = np.random.default_rng([seed, n])
    jobs = []
    for i in range(n):
        spec = catalogue_job(specs[int(rng.integers(len(specs)))], f"j{i}")
        iters = int(rng.integers(20, 401))
        pred = max(0, int(round(iters * rng.uniform(0.5, 1.5))))
        jobs.append((f"j{i}", float(np.round(rng.uniform(0, 5), 2)), spec, iters, pred))
    return jobs


def random_total_jct_instance(jobs: int | None = None, seed: int = 0, servers: int = 2, gpus_per_server: int = 4,
                              *, time_unit_s: float = 0.01, nic_gbps: float = 10.0, intra_gbs: float = 300.0,
                              n: int | None = None) -> TotalJctInstance:
    """Problem A of paper 001 on [`random_pipeline_jobs`][optsched.generators.total_jct.random_pipeline_jobs] (exact
    alpha per shape, durations rounded up);
    the instances of ``benchmarks/total_jct.py`` with the defaults (2 x 4 GPUs, 10 ms units). ``jobs`` (at most
    [`MAX_JOBS`][optsched.generators.total_jct.MAX_JOBS]) is the number of jobs, as in every generator; ``n`` is its
    former name (deprecated).

    ```pycon
    >>> inst = random_total_jct_instance(3, 0)
    >>> inst.n_jobs, inst.cluster.total_gpus, inst.name
    (3, 8, 'total-jct-j3-s2x4-seed0')

    ```
    """
    if n is not None:
        if jobs is not None:
            raise InstanceError("give jobs= only (n= is its former name)", field="n")
        warnings.warn("random_total_jct_instance(n=...) is deprecated: use jobs=", DeprecationWarning, stacklevel=2)
        jobs = n
    if jobs is None:
        raise InstanceError("the number of jobs is required", field="jobs")
    if not _is_int(jobs) or jobs < 1:
        raise InstanceError(f"must be a positive integer, got {jobs!r:.60}", field="jobs")
    if jobs > MAX_JOBS:
        raise InstanceError(f"must be at most {MAX_JOBS:,} (each job's modes are computed exactly), got {jobs:,}",
                            field="jobs")
    for name, v, low in (("seed", seed, 0), ("servers", servers, 1), ("gpus_per_server", gpus_per_server, 1)):
        if not _is_int(v) or v < low:
            raise InstanceError(f"must be an integer >= {low}, got {v!r:.60}", field=name)
    require_memory(servers * gpus_per_server, 64, "GPUs", field="servers")
    return from_pipeline_jobs(random_pipeline_jobs(jobs, seed), (servers, gpus_per_server), nic_gbps=nic_gbps,
                              intra_gbs=intra_gbs, time_unit_s=time_unit_s, seed=seed,
                              name=f"total-jct-j{jobs}-s{servers}x{gpus_per_server}-seed{seed}")
