"""Paper 003's resource-time model (eqs. 1-11, ring all-reduce with B_intra / B_inter) for the simulator and the
policies: the performance model [`RingPerf`][optsched.perf.ring.RingPerf], the plans of a job on free GPUs
([`candidate_plans`][optsched.perf.ring.candidate_plans]) and
the pluggable resource-performance score of eq. (12) ([`SCORES`][optsched.perf.ring.SCORES]).

The scalar equations are defined with the problem in [`optsched.problems.deadline`][] (validation and the
evaluator need them) and re-exported here. Work is counted in *one-GPU batches* (epochs x dataset / batch): on
N GPUs a step processes N batches in T_step(N) = T_cal + T_comm(N), so the simulator's "iteration time" of a job
on a placement is T_step(N) / N seconds per batch, and a job paused, resumed or moved keeps its progress exactly.

```pycon
>>> from types import SimpleNamespace as NS
>>> from optsched.problems.deadline import DeadlineJob
>>> m = RingPerf(10.0, 6.0)
>>> job = NS(id="a", gpus=1, iteration_time_s=0.06, model="ResNet-50",
...          spec=DeadlineJob("a", "ResNet-50", 0.0, 1.0, epochs=1))
>>> m.alone_time_s(job, NS(servers=(0,), counts=(1,), stages=None))
0.06
>>> one, two = (m.alone_time_s(job, NS(servers=s, counts=c, stages=None)) for s, c in (((0,), (2,)), ((0, 1), (1, 1))))
>>> round(one, 6), round(two, 6), one < two < 0.06
(0.034743, 0.037904, True)

```
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..errors import InstanceError
from ..problems.deadline import (
    BYTES_PER_PARAM,
    DeadlineJob,
    DeadlineWorkload,
    comm_time_s,
    meets_deadline,
    run_time_s,
    speedup_ok,
    step_time_s,
)
from .base import JobLike, PerfModel, PlacementLike

__all__ = ["SCORES", "Plan", "RingPerf", "Score", "candidate_plans", "comm_time_s", "get_score", "job_profile",
           "meets_deadline", "run_time_s", "slack", "slack_per_gpu", "speedup_ok", "step_time_s"]


def job_profile(spec: Any, job_id: str = "") -> tuple[float, float]:
    """``(T_cal, params)`` of a job's spec: a [`DeadlineJob`][optsched.problems.deadline.DeadlineJob], or a mapping with
    ``step_time_s`` and
    ``params`` (a spec read back from a workload file)."""
    if isinstance(spec, DeadlineJob):
        return spec.t_cal, float(spec.n_params)
    if isinstance(spec, Mapping) and "step_time_s" in spec and "params" in spec:
        return float(spec["step_time_s"]), float(spec["params"])
    raise InstanceError("the ring model needs a deadline job (step_time_s and params) as the job's spec",
                        field="spec", job=job_id or None)


class RingPerf(PerfModel):
    """Seconds per one-GPU batch of a job on a placement: T_step(N, B) / N with N the GPUs *held* and
    B = B_intra on one node, B_inter across nodes (eqs. 2, 5). No co-location effect (the paper models none).
    Bandwidths in GB/s; ``bytes_per_param`` converts parameters to bytes."""

    name = "ring"

    def __init__(self, intra_bandwidth: float = 10.0, inter_bandwidth: float = 6.0,
                 bytes_per_param: float = BYTES_PER_PARAM):
        for n, v in (("intra_bandwidth", intra_bandwidth), ("inter_bandwidth", inter_bandwidth),
                     ("bytes_per_param", bytes_per_param)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (v > 0 and math.isfinite(v)):
                raise InstanceError(f"must be a positive number, got {v!r}", field=n)
        self.intra_bandwidth, self.inter_bandwidth = float(intra_bandwidth), float(inter_bandwidth)
        self.bytes_per_param = float(bytes_per_param)

    @classmethod
    def for_workload(cls, wl: DeadlineWorkload) -> RingPerf:
        """The model of a deadline workload's cluster."""
        return cls(wl.cluster.intra_bandwidth, wl.cluster.inter_bandwidth, wl.bytes_per_param)

    def bandwidth(self, cross: bool) -> float:
        return self.inter_bandwidth if cross else self.intra_bandwidth

    def batch_time_s(self, t_cal: float, params: float, n_gpu: int, cross: bool) -> float:
        """Seconds per one-GPU batch of work on ``n_gpu`` GPUs: T_step / N."""
        return step_time_s(t_cal, n_gpu, params, self.bandwidth(cross), self.bytes_per_param) / n_gpu

    def run_time_s(self, t_cal: float, params: float, work_batches: float, n_gpu: int, cross: bool) -> float:
        """Eq. (1) for ``work_batches`` batches."""
        return work_batches * self.batch_time_s(t_cal, params, n_gpu, cross)

    def useful(self, t_cal: float, params: float, n_gpu: int, cross: bool) -> bool:
        """Eq. (11): the plan passes the speed-up filter."""
        return speedup_ok(t_cal, n_gpu, params, self.bandwidth(cross), self.bytes_per_param)

    def alone_time_s(self, job: JobLike, placement: PlacementLike) -> float:
        t_cal, params = job_profile(job.spec, job.id)
        n = sum(placement.counts)
        return self.batch_time_s(t_cal, params, n, len(placement.servers) > 1)

    def describe(self) -> dict:
        return {"name": self.name, "intra_bandwidth": self.intra_bandwidth, "inter_bandwidth": self.inter_bandwidth,
                "bytes_per_param": self.bytes_per_param}


# -- plans and scores ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    """A resource plan R_t of a job at ``start_s``: ``n_gpu`` GPUs on one node or across nodes (``cross``),
    its run time and end (eqs. 1, 8), and the job's deadline."""

    n_gpu: int
    cross: bool
    run_time_s: float
    start_s: float
    deadline_s: float

    @property
    def end_s(self) -> float:
        return self.start_s + self.run_time_s

    @property
    def slack_s(self) -> float:
        """T_dl - T_end (negative: the plan misses the deadline)."""
        return self.deadline_s - self.end_s

    @property
    def expected(self) -> bool:
        """The plan meets the deadline (eq. 9): an "expected" plan in the paper's words."""
        return meets_deadline(self.end_s, self.deadline_s)


#: a score ranks the expected plans of one list (higher is better)
Score = Callable[[Plan], float]


def slack_per_gpu(plan: Plan) -> float:
    """Eq. (12) as the digest reconstructs it [R]: P = (T_dl - T_end) / N_GPU (fewer GPUs and an earlier end
    score higher; P >= 0 iff the plan meets the deadline).

    ```pycon
    >>> slack_per_gpu(Plan(2, False, 30.0, 0.0, 100.0))
    35.0

    ```
    """
    return plan.slack_s / plan.n_gpu


def slack(plan: Plan) -> float:
    """An alternative score: the slack T_dl - T_end alone (the earliest end wins, whatever it costs in GPUs)."""
    return plan.slack_s


def fewest_gpus(plan: Plan) -> float:
    """An alternative score: the fewest GPUs that meet the deadline (ElasticFlow's minimum share), ties by slack
    (a large constant per GPU keeps the GPU count first)."""
    return -plan.n_gpu * 1e12 + plan.slack_s


SCORES: dict[str, Score] = {"slack-per-gpu": slack_per_gpu, "slack": slack, "fewest-gpus": fewest_gpus}


def get_score(score: str | Score) -> Score:
    """A score by name ([`SCORES`][optsched.perf.ring.SCORES]) or a callable as is.

    ```pycon
    >>> get_score("slack-per-gpu") is slack_per_gpu
    True

    ```
    """
    if callable(score):
        return score
    if score not in SCORES:
        raise InstanceError(f"unknown score {score!r} (known: {', '.join(SCORES)})", field="score")
    return SCORES[score]


def candidate_plans(run_time: Callable[[int, bool], float], deadline_s: float, now: float,
                    free: Sequence[int] | np.ndarray, max_gpus: int | None = None,
                    useful: Callable[[int, bool], bool] | None = None) -> tuple[list[Plan], list[Plan]]:
    """Section 3.1, steps 1-2: the single-node plans ``ls`` (N = 1..max(c_free)) and, if more than one node has
    free GPUs, the cross-node plans ``lm`` (N = 2..sum(c_free)), each starting at ``now`` with run time
    ``run_time(N, cross)`` (eq. 1 with B_intra / B_inter for the ring model), minus those ``useful(N, cross)``
    rejects (eq. 11; None keeps all). ``max_gpus`` caps N (each GPU needs a batch per epoch). A one-GPU plan is
    single-node only: it is the same plan in both lists (T_comm = 0).

    ```pycon
    >>> perf = RingPerf(10.0, 6.0)
    >>> rt = lambda n, cross: perf.run_time_s(0.06, 23.7e6, 1000, n, cross)
    >>> ok = lambda n, cross: perf.useful(0.06, 23.7e6, n, cross)
    >>> ls, lm = candidate_plans(rt, 100.0, 0.0, [1, 3], useful=ok)
    >>> [p.n_gpu for p in ls], [p.n_gpu for p in lm]
    ([1, 2, 3], [2, 3, 4])

    ```
    """
    cap = math.inf if max_gpus is None else max_gpus
    busy = [int(c) for c in free if c > 0]
    ls: list[Plan] = []
    lm: list[Plan] = []
    if not busy:
        return ls, lm
    for n in range(1, int(min(max(busy), cap)) + 1):
        if useful is None or useful(n, False):
            ls.append(Plan(n, False, run_time(n, False), now, deadline_s))
    if len(busy) > 1:
        for n in range(2, int(min(sum(busy), cap)) + 1):
            if useful is None or useful(n, True):
                lm.append(Plan(n, True, run_time(n, True), now, deadline_s))
    return ls, lm
