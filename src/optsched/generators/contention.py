"""DeepShare job sets (paper 004, section V; digest 004, section 4): the four mixes, seeded.

* models and mixes: ``normal`` 1:1:1:1:1:1, ``heavy`` 1:1:1:1:4:4, ``medium`` 1:1:4:4:1:1, ``low`` 4:4:1:1:1:1
  over GNN:IMG:DLRM:LM:FSDP:MoE (the paper's 4:1 ratios); ``variant="repo"`` uses the repository's 2:1 ratios
  (``generate_traces.py``'s commented mixes);
* counts: ``draw="exact"`` (default) gives every model its share of the jobs (largest remainders), shuffled,
  as the paper's "shuffled jobs"; ``draw="multinomial"`` draws each job's model independently, as the
  repository does;
* demand: uniform over {2, 4, 8} GPUs (the repository's); ``max_gpus=32`` draws over {2, 4, 8, 16, 32} (the
  paper's "up to 32"; 16 and 32 are extrapolated from the 8-GPU rows, see [`optsched.perf.measured`][]);
* samples: one isolated hour (``total_samples_trained.csv``: 3600 s x the mean throughput of the multi-node
  splits), times ``hours``;
* arrivals: all at t = 0 (the repository's job sets) or ``arrival="poisson"`` at ``rate_per_h`` jobs per hour
  (default: the rate that offers ``load`` x the cluster's GPU-hours).

```pycon
>>> inst = random_contention_instance(jobs=12, mix="heavy", seed=3)
>>> sorted({j.model for j in inst.jobs}) == sorted(MIX_MODELS), inst.meta["mix"], len(inst.jobs)
(True, 'heavy', 12)
>>> [sum(j.model == m for j in inst.jobs) for m in MIX_MODELS]   # 1:1:1:1:4:4 of 12 jobs
[1, 1, 1, 1, 4, 4]
>>> wl = to_workload(inst)
>>> round(wl.jobs[0].duration_alone_s)                            # one isolated hour at the mean split speed
3600

```
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InstanceError
from ..limits import require_memory
from ..perf.measured import hour_samples
from ..problems.contention import ALL_DEMANDS, DEMANDS, ContentionInstance, ContentionJob
from ..problems.workload import Workload, WorkloadJob

# these doctests read the shared DeepShare tables: skipped when they are absent (conftest.py at the root)
__doctest_requires__ = {"*": "deepshare-contention"}

# the paper's order of the mix ratios: GNN : IMG : DLRM : LM : FSDP : MoE
MIX_MODELS: tuple[str, ...] = ("GraphSage", "MobileNetV3", "DLRM", "Transformer-XL", "FSDP", "MoE")
MIXES: dict[str, tuple[int, ...]] = {"normal": (1, 1, 1, 1, 1, 1), "heavy": (1, 1, 1, 1, 4, 4),
                                     "medium": (1, 1, 4, 4, 1, 1), "low": (4, 4, 1, 1, 1, 1)}
VARIANTS = ("paper", "repo")


def mix_weights(mix: str, variant: str = "paper") -> dict[str, float]:
    """Probability of each model in a mix (``variant="repo"``: the 2:1 ratios).

    ```pycon
    >>> mix_weights("heavy", "repo")["MoE"]
    0.25

    ```
    """
    if mix not in MIXES:
        raise InstanceError(f"must be one of {', '.join(MIXES)}, got {mix!r}", field="mix")
    if variant not in VARIANTS:
        raise InstanceError(f"must be one of {', '.join(VARIANTS)}, got {variant!r}", field="variant")
    w = [(2 if x == 4 else x) if variant == "repo" else x for x in MIXES[mix]]
    return {m: x / sum(w) for m, x in zip(MIX_MODELS, w)}


def _exact_counts(n: int, probs: list[float]) -> list[int]:
    raw = [n * p for p in probs]
    counts = [int(np.floor(r)) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: (-(raw[i] - counts[i]), i))
    for i in order[:n - sum(counts)]:
        counts[i] += 1
    return counts


MAX_JOB_HOURS = 10**6  # as optsched rl's: the paper's job sets hold 256 jobs of about an hour


def random_contention_instance(jobs: int = 256, mix: str = "normal", seed: int = 0, *, variant: str = "paper",
                               draw: str = "exact", max_gpus: int = 8, hours: float = 1.0, arrival: str = "zero",
                               rate_per_h: float | None = None, load: float = 0.8, nodes: int = 4,
                               gpus_per_node: int = 8, round_s: float = 300.0, floor: float = 0.35,
                               threshold: float = 0.6, name: str | None = None) -> ContentionInstance:
    """A seeded DeepShare job set (module docstring); the same arguments give the same instance."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InstanceError(f"must be a positive integer, got {jobs!r}", field="jobs")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InstanceError(f"must be an integer >= 0, got {seed!r}", field="seed")
    if draw not in ("exact", "multinomial"):
        raise InstanceError(f"must be 'exact' or 'multinomial', got {draw!r}", field="draw")
    if max_gpus not in (8, 32):
        raise InstanceError(f"must be 8 (the repository's demands) or 32 (the paper's), got {max_gpus!r}",
                            field="max_gpus")
    if not isinstance(hours, (int, float)) or isinstance(hours, bool) or not (hours > 0 and math.isfinite(hours)):
        raise InstanceError(f"must be a positive number, got {hours!r}", field="hours")
    if jobs * hours > MAX_JOB_HOURS:
        # each job runs hours x 12 rounds of 5 minutes in the simulator: refused before a run that would not end
        raise InstanceError(f"{jobs} jobs x {hours:g} h is more than {MAX_JOB_HOURS:,} job-hours", field="hours")
    require_memory(jobs, 1_000, "jobs", field="jobs")
    if arrival not in ("zero", "poisson"):
        raise InstanceError(f"must be 'zero' or 'poisson', got {arrival!r}", field="arrival")
    probs = mix_weights(mix, variant)
    rng = np.random.default_rng(seed)
    p = [probs[m] for m in MIX_MODELS]
    if draw == "exact":
        models = [m for m, c in zip(MIX_MODELS, _exact_counts(jobs, p)) for _ in range(c)]
        rng.shuffle(models)
    else:
        models = [MIX_MODELS[i] for i in rng.choice(len(MIX_MODELS), size=jobs, p=p)]
    demands = [d for d in (DEMANDS if max_gpus == 8 else ALL_DEMANDS) if d <= nodes * gpus_per_node]
    gpus = [int(demands[i]) for i in rng.integers(0, len(demands), size=jobs)]
    if arrival == "poisson":
        if rate_per_h is None:
            if not load > 0:
                raise InstanceError(f"must be a positive number, got {load!r}", field="load")
            rate_per_h = load * nodes * gpus_per_node / (float(np.mean(demands)) * hours)
        if not rate_per_h > 0:
            raise InstanceError(f"must be a positive number, got {rate_per_h!r}", field="rate_per_h")
        arrivals = np.cumsum(rng.exponential(3600.0 / rate_per_h, size=jobs))
        arrivals -= arrivals[0]
    else:
        arrivals = np.zeros(jobs)
    out = tuple(ContentionJob(f"j{i:03d}", m, g, hour_samples(m, g) * hours, float(a))
                for i, (m, g, a) in enumerate(zip(models, gpus, arrivals)))
    meta = {"generator": "deepshare", "mix": mix, "variant": variant, "draw": draw, "max_gpus": max_gpus,
            "hours": hours, "arrival": arrival}
    if arrival == "poisson":
        meta["rate_per_h"] = float(rate_per_h)  # type: ignore[arg-type]
    return ContentionInstance(out, nodes=nodes, gpus_per_node=gpus_per_node, round_s=round_s, floor=floor,
                              threshold=threshold, name=name or f"deepshare-{mix}-n{jobs}-seed{seed}", seed=seed,
                              meta=meta)


def to_workload(inst: ContentionInstance) -> Workload:
    """The instance as a simulator workload: ``iterations`` = samples, ``iteration_time_s`` = seconds per sample
    at the mean multi-node throughput (so ``duration_alone_s`` is the isolated time the generator set), the
    model name for [`MeasuredPerf`][optsched.perf.measured.MeasuredPerf]."""
    jobs = tuple(WorkloadJob(j.id, j.arrival_s, j.gpus, j.samples, 3600.0 / hour_samples(j.model, j.gpus),
                             model=j.model) for j in inst.jobs)
    return Workload(jobs, name=inst.name, seed=inst.seed,
                    meta={**inst.meta, "nodes": inst.nodes, "gpus_per_node": inst.gpus_per_node})


__all__ = ["MIXES", "MIX_MODELS", "VARIANTS", "mix_weights", "random_contention_instance", "to_workload"]
