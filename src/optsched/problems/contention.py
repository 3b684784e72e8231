"""Paper 004's problem: DeepShare job sets on a small cluster under network contention, scheduled in rounds.

A [`ContentionInstance`][optsched.problems.contention.ContentionInstance] is a job set (each job: one of the six
profiled models, a GPU demand, a number of
samples to train, an arrival time) on ``nodes`` x ``gpus_per_node`` GPUs, with the parameters of the
repository's round semantics: round length ``round_s`` (300 s), ratio floor (0.35) and preemption threshold
(0.6). The simulator runs it as a workload ([`optsched.generators.contention.to_workload`][]), the exact
model of [`optsched.exact.contention`][] solves it on small sizes. The file format ``optsched/contention@1``
is in ``docs/formats.md``; every bad value is one [`InstanceError`][optsched.errors.InstanceError] naming the field
and the job.

```pycon
>>> inst = ContentionInstance((ContentionJob("j0", "MoE", 4, 61432.2), ContentionJob("j1", "DLRM", 2, 4.1e7)))
>>> inst.n_jobs, inst.total_gpus, inst.job("j1").model
(2, 32, 'DLRM')
>>> from_dict(to_dict(inst)) == inst
True
>>> ContentionJob("x", "ResNet", 4, 10.0)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
optsched.errors.InstanceError: model (job 'x'): must be one of MobileNetV3, GraphSage, ..., got 'ResNet'

```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import InstanceError
from ..io import Fields, check_format, is_finite_number
from ..registry import Problem, register_problem

FORMAT = "optsched/contention@1"

# the six profiled models, in the repository's order (``rl_training/config.py``): type ids follow it
MODELS: tuple[str, ...] = ("MobileNetV3", "GraphSage", "FSDP", "Transformer-XL", "DLRM", "MoE")
# the repository's GPU demands; 16 and 32 are the paper's "up to 32" (extrapolated, never measured)
DEMANDS: tuple[int, ...] = (2, 4, 8)
ALL_DEMANDS: tuple[int, ...] = (2, 4, 8, 16, 32)
# (servers, GPUs per server) of each demand: the repository's ``placement_rule`` (j 2^i GPUs over 2^i nodes) ...
LEGAL_SPLITS: dict[int, tuple[tuple[int, int], ...]] = {
    2: ((1, 2), (2, 1)), 4: ((1, 4), (2, 2), (4, 1)), 8: ((1, 8), (2, 4), (4, 2)),
    16: ((2, 8), (4, 4)), 32: ((4, 8),)}
# ... and the multi-server ones, the only ones measured (the table has no single-server row)
MULTI_SPLITS: dict[int, tuple[tuple[int, int], ...]] = {g: tuple(s for s in v if s[0] > 1)
                                                        for g, v in LEGAL_SPLITS.items()}


@dataclass(frozen=True)
class ContentionJob:
    """One DeepShare job: ``model`` (one of [`MODELS`][optsched.problems.contention.MODELS]), ``gpus`` (2, 4, 8; 16 or
    32 extrapolated),
    ``samples`` to train, ``arrival_s`` (0 for the repository's job sets).

    ```pycon
    >>> ContentionJob("a", "FSDP", 8, 153831.11).arrival_s
    0.0

    ```
    """

    id: str
    model: str
    gpus: int
    samples: float
    arrival_s: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InstanceError(f"must be a non-empty string, got {self.id!r}", field="id")
        if self.model not in MODELS:
            raise InstanceError(f"must be one of {', '.join(MODELS)}, got {self.model!r}", field="model",
                                job=self.id)
        if isinstance(self.gpus, bool) or not isinstance(self.gpus, int) or self.gpus not in ALL_DEMANDS:
            raise InstanceError(f"must be one of {', '.join(map(str, ALL_DEMANDS))}, got {self.gpus!r}",
                                field="gpus", job=self.id)
        if not is_finite_number(self.samples) or self.samples <= 0:
            raise InstanceError(f"must be a finite number > 0, got {self.samples!r}", field="samples", job=self.id)
        if not is_finite_number(self.arrival_s) or self.arrival_s < 0:
            raise InstanceError(f"must be a finite number >= 0, got {self.arrival_s!r}", field="arrival_s",
                                job=self.id)
        object.__setattr__(self, "samples", float(self.samples))
        object.__setattr__(self, "arrival_s", float(self.arrival_s))


@dataclass(frozen=True)
class ContentionInstance:
    """A job set on ``nodes`` x ``gpus_per_node`` GPUs with the round model's parameters (module docstring)."""

    jobs: tuple[ContentionJob, ...]
    nodes: int = 4
    gpus_per_node: int = 8
    round_s: float = 300.0
    floor: float = 0.35
    threshold: float = 0.6
    name: str = ""
    seed: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        object.__setattr__(self, "meta", dict(self.meta or {}))
        for name in ("nodes", "gpus_per_node"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InstanceError(f"must be a positive integer, got {v!r}", field=name)
        if not is_finite_number(self.round_s) or self.round_s <= 0:
            raise InstanceError(f"must be a positive number of seconds, got {self.round_s!r}", field="round_s")
        for name in ("floor", "threshold"):
            v = getattr(self, name)
            if not is_finite_number(v) or not 0 <= v <= 1:
                raise InstanceError(f"must be a number in [0, 1], got {v!r}", field=name)
        seen: set[str] = set()
        for i, j in enumerate(self.jobs):
            if not isinstance(j, ContentionJob):
                raise InstanceError(f"must be a ContentionJob, got {type(j).__name__}", field=f"jobs[{i}]")
            if j.id in seen:
                raise InstanceError("duplicate job id", field=f"jobs[{i}].id", job=j.id)
            seen.add(j.id)
            if not any(n <= self.nodes and g <= self.gpus_per_node for n, g in MULTI_SPLITS[j.gpus]):
                raise InstanceError(f"{j.gpus} GPUs fit no multi-node split on {self.nodes} x {self.gpus_per_node} "
                                    "GPUs", field=f"jobs[{i}].gpus", job=j.id)

    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    @property
    def total_gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    def job(self, job_id: str) -> ContentionJob:
        for j in self.jobs:
            if j.id == job_id:
                return j
        raise KeyError(job_id)

    def splits(self, gpus: int) -> tuple[tuple[int, int], ...]:
        """The multi-node splits (servers, GPUs per server) of a demand that fit this cluster."""
        return tuple((n, g) for n, g in MULTI_SPLITS[gpus] if n <= self.nodes and g <= self.gpus_per_node)


# -- file format -----------------------------------------------------------------------------------------------
def to_dict(inst: ContentionInstance) -> dict[str, Any]:
    """The ``optsched/contention@1`` JSON document."""
    out: dict[str, Any] = {"format": FORMAT}
    if inst.name:
        out["name"] = inst.name
    if inst.seed is not None:
        out["seed"] = inst.seed
    out.update({"nodes": inst.nodes, "gpus_per_node": inst.gpus_per_node, "round_s": inst.round_s,
                "floor": inst.floor, "threshold": inst.threshold})
    if inst.meta:
        out["meta"] = dict(inst.meta)
    out["jobs"] = [{"id": j.id, "model": j.model, "gpus": j.gpus, "samples": j.samples,
                    **({"arrival_s": j.arrival_s} if j.arrival_s else {})} for j in inst.jobs]
    return out


def from_dict(data: Mapping[str, Any], name: str = "") -> ContentionInstance:
    """Validate a parsed ``optsched/contention@1`` document (unknown keys refused, errors name field and job)."""
    check_format(data, FORMAT)
    f = Fields(data, "").only("format", "name", "seed", "nodes", "gpus_per_node", "round_s", "floor", "threshold",
                              "meta", "jobs")
    jobs = []
    for i, rec in enumerate(f.array("jobs")):
        jid = rec.get("id") if isinstance(rec, Mapping) and isinstance(rec.get("id"), str) else None
        jf = Fields(rec, f"jobs[{i}]", jid).only("id", "model", "gpus", "samples", "arrival_s")
        try:
            jobs.append(ContentionJob(jf.string("id"), jf.string("model"), jf.integer("gpus"), jf.number("samples"),
                                      jf.number("arrival_s", 0.0)))
        except InstanceError as exc:
            if exc.field and not exc.field.startswith("jobs["):
                raise InstanceError(exc.reason, field=f"jobs[{i}].{exc.field}", job=exc.job) from None
            raise
    meta = f.raw("meta", {})
    if not isinstance(meta, Mapping):
        raise InstanceError(f"must be an object, got {type(meta).__name__}", field="meta")
    seed = f.raw("seed", None)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise InstanceError(f"must be an integer or absent, got {seed!r}", field="seed")
    return ContentionInstance(tuple(jobs), nodes=f.integer("nodes", 4), gpus_per_node=f.integer("gpus_per_node", 8),
                              round_s=f.number("round_s", 300.0), floor=f.number("floor", 0.35),
                              threshold=f.number("threshold", 0.6), name=f.raw("name", name) or name, seed=seed,
                              meta=meta)


__all__ = ["ALL_DEMANDS", "DEMANDS", "FORMAT", "LEGAL_SPLITS", "MODELS", "MULTI_SPLITS", "ContentionInstance",
           "ContentionJob", "from_dict", "to_dict"]


PROBLEM = register_problem(Problem(
    name="contention",
    title="paper 004: DeepShare job sets under measured network contention, in 300 s rounds (min total JCT)",
    classes=(ContentionInstance,), format=FORMAT, reader=from_dict, writer=to_dict,
    generator="optsched.generators.contention:random_contention_instance",
    generate_cli="optsched.commands._generate_contention:register",
    summary="optsched.commands._generate_contention:summary",
    default_algorithm="contention-dp",
    algorithms={"contention-dp": "optsched.exact.contention", "contention-bb": "optsched.exact.contention",
                "contention-brute": "optsched.exact.contention"},
))
