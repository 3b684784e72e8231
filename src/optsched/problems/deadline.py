"""Deadline-aware scheduling (paper 003, DRS): jobs with deadlines whose GPU count the scheduler chooses.

A [`DeadlineWorkload`][optsched.problems.deadline.DeadlineWorkload] is a cluster (nodes with GPUs, the intra-node
bandwidth B_intra and the inter-node
bandwidth B_inter, in GB/s) and [`DeadlineJob`][optsched.problems.deadline.DeadlineJob] s, each a model trained for some
epochs on a dataset with a
per-GPU batch, its parameter count and its profiled one-GPU step time, an arrival time and a priority
alpha in {0.5, 1, 1.5}. The user does not choose a GPU count: the scheduler does (digest 003, section 1).

The time model (digest 003, eqs. 1-11; [R] marks the digest's reconstructions, each resolved in
``docs/algorithms/drs.md``) is defined here because validation and the evaluator need it; the performance model
of the simulator, the plan enumeration and the scores are in [`optsched.perf.ring`][]:

* eq. (5) [R] ring all-reduce: ``T_comm(N) = 2 (N - 1) / N * params * bytes_per_param / B``, with B = B_intra
  when every GPU of the plan is on one node and B_inter otherwise (for the whole ring), 0 when N = 1;
* eq. (2) ``T_step = T_cal + T_comm``; eq. (4) [R] T_cal is the profiled one-GPU step time ``step_time_s``;
* eqs. (1), (3) [R] ``T_run = epochs * dataset_size / (batch * N) * T_step`` (real division: the last partial
  batch counts pro rata);
* eqs. (6), (7) [R] the deadline ``T_dl = arrival + alpha * T_run(1 GPU)``; eq. (9) a job meets it iff
  ``T_end <= T_dl`` (up to [`DEADLINE_TOL_S`][optsched.problems.deadline.DEADLINE_TOL_S], one tolerance used by every
  part of the package);
* eq. (11) [R] the speed-up filter: a plan with N >= 2 GPUs is kept iff ``T_comm < (N - 1) T_cal``.

Files: ``optsched/deadline-workload@1`` in JSON ([`to_dict`][optsched.problems.deadline.to_dict],
[`from_dict`][optsched.problems.deadline.from_dict]) and CSV
([`to_csv_text`][optsched.problems.deadline.to_csv_text], [`from_csv_text`][optsched.problems.deadline.from_csv_text]),
both read by [`read_deadline_workload`][optsched.problems.deadline.read_deadline_workload] and written by
[`write_deadline_workload`][optsched.problems.deadline.write_deadline_workload] (``docs/formats.md``). Every bad value
raises one
[`InstanceError`][optsched.errors.InstanceError] naming the field and the job: a non-positive epoch count, batch,
dataset size or parameter count, an unknown model, an alpha outside {0.5, 1, 1.5}, and a job no plan can ever
run (a dataset smaller than one batch: not even one GPU gets a full step of an epoch).

```pycon
>>> wl = DeadlineWorkload(paper_cluster(), (DeadlineJob("a", "ResNet-50", 0.0, 1.0, epochs=10),))
>>> j = wl.jobs[0]
>>> round(j.run_time_1gpu_s, 1), round(j.deadline_s, 1)
(1875.0, 1875.0)
>>> round(wl.run_time_s(j, 4, cross=False), 1) < round(wl.run_time_s(j, 4, cross=True), 1)
True
>>> DeadlineJob("b", "ResNet-51", 0.0, 1.0, epochs=1)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
optsched.errors.InstanceError: model (job 'b'): unknown model 'ResNet-51' (known: AlexNet, VGG-16, ResNet-50, ...)

```
"""

from __future__ import annotations

import csv
import io as _io
import math
import os
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..cluster import Cluster, Server
from ..errors import InstanceError
from ..io import Fields, atomic_open, check_format, csv_jobs, is_finite_number, read_json, read_text, write_json
from ..registry import Problem, register_problem

__all__ = ["ALPHAS", "BYTES_PER_PARAM", "COLUMNS", "DEADLINE_TOL_S", "FORMAT", "FORMAT_V2", "V2_COLUMNS",
           "HEAVY_MODELS", "MODELS", "WEIGHTS", "DeadlineJob", "DeadlineWorkload", "ModelProfile", "comm_time_s",
           "from_csv_text", "from_dict", "job_weight", "job_weight_int", "meets_deadline", "paper_cluster",
           "read_deadline_workload", "read_throughputs", "run_time_s", "speedup_ok", "step_time_s", "to_csv_text",
           "to_dict", "weight_scale", "write_deadline_workload"]

FORMAT = "optsched/deadline-workload@1"
#: format 2: explicit deadlines, best-effort jobs, measured throughput tables, allowed GPU counts (JSON only)
FORMAT_V2 = "optsched/deadline-workload@2"
#: the priority levels of the paper (section 1 of the digest; smaller is more urgent)
ALPHAS = (0.5, 1.0, 1.5)
#: bytes per parameter on the wire (fp32 gradients; the paper's factor is unknown, digest eq. 5)
BYTES_PER_PARAM = 4
#: a job meets its deadline iff completion <= deadline + DEADLINE_TOL_S (seconds): one tolerance for the
#: evaluator, the exact models, the simulator's metrics and the policies, so floating-point noise of a few ulps
#: never decides a deadline
DEADLINE_TOL_S = 1e-6
#: the paper's testbed: 4 nodes x 4 GPUs, 10 GB/s within a node (PCIe + QPI), 6 GB/s across (InfiniBand)
PAPER_NODES, PAPER_GPUS_PER_NODE, PAPER_B_INTRA, PAPER_B_INTER = 4, 4, 10.0, 6.0


def paper_cluster(nodes: int = PAPER_NODES, gpus_per_node: int = PAPER_GPUS_PER_NODE,
                  intra_bandwidth: float = PAPER_B_INTRA, inter_bandwidth: float = PAPER_B_INTER) -> Cluster:
    """The paper's cluster (digest 003, section 4): nodes ``n0..`` with GPUs, bandwidths in GB/s.

    ```pycon
    >>> c = paper_cluster(); c.total_gpus, c.intra_bandwidth, c.inter_bandwidth
    (16, 10.0, 6.0)

    ```
    """
    return Cluster(tuple(Server(f"n{i}", gpus_per_node) for i in range(nodes)), intra_bandwidth=intra_bandwidth,
                   inter_bandwidth=inter_bandwidth)


# -- the model catalogue --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelProfile:
    """One model of the paper's workloads (Table 1 / Table 2 were lost in the text: every number here is OUR
    estimate, see ``docs/algorithms/drs.md``): dataset, its training-set size, the per-GPU batch, the parameter
    count (torchvision-style architecture with the dataset's class count), the one-GPU step time T_cal at
    that batch on the paper's RTX 2080 Ti (chosen so that the facts the text states about its Fig. 5 hold),
    and the range of epochs the generator draws from."""

    name: str
    dataset: str
    dataset_size: int
    batch: int
    params: int
    step_time_s: float
    epochs: tuple[int, int]

    @property
    def epoch_time_1gpu_s(self) -> float:
        """One epoch on one GPU: dataset_size / batch * T_cal."""
        return self.dataset_size / self.batch * self.step_time_s


_CIFAR, _UCF = ("CIFAR-100", 50_000), ("UCF-101", 9_537)
#: the models the text names: CIFAR-100 image classification (Table 1) and UCF-101 action recognition
MODELS: dict[str, ModelProfile] = {m.name: m for m in (
    ModelProfile("AlexNet", *_CIFAR, 16, 57_413_540, 0.010, (90, 270)),
    ModelProfile("VGG-16", *_CIFAR, 16, 134_670_244, 0.058, (30, 90)),
    ModelProfile("ResNet-50", *_CIFAR, 16, 23_712_932, 0.060, (60, 180)),
    ModelProfile("TSN", *_UCF, 16, 23_714_981, 0.32, (60, 180)),
    ModelProfile("TSM", *_UCF, 16, 23_714_981, 0.36, (45, 150)),
    ModelProfile("R(2+1)D", *_UCF, 16, 31_351_938, 0.45, (45, 135)),
    ModelProfile("Slow-Only", *_UCF, 16, 31_840_000, 0.50, (45, 120)),
)}
#: the parameter-heavy, compute-light models of Fig. 11's "restricted" queue
HEAVY_MODELS = ("AlexNet", "VGG-16")


# -- the time model (eqs. 1-11) -------------------------------------------------------------------------------
def comm_time_s(n_gpu: int, params: float, bandwidth_gbs: float, bytes_per_param: float = BYTES_PER_PARAM) -> float:
    """Eq. (5) [R]: ring all-reduce of ``params`` parameters over ``n_gpu`` GPUs at ``bandwidth_gbs`` GB/s.

    ```pycon
    >>> comm_time_s(1, 1e9, 10.0), comm_time_s(2, 2.5e9, 10.0)
    (0.0, 1.0)

    ```
    """
    if n_gpu <= 1:
        return 0.0
    return 2.0 * (n_gpu - 1) / n_gpu * params * bytes_per_param / (bandwidth_gbs * 1e9)


def step_time_s(step_1gpu_s: float, n_gpu: int, params: float, bandwidth_gbs: float,
                bytes_per_param: float = BYTES_PER_PARAM) -> float:
    """Eq. (2): one step (one batch per GPU) on ``n_gpu`` GPUs, T_cal + T_comm."""
    return step_1gpu_s + comm_time_s(n_gpu, params, bandwidth_gbs, bytes_per_param)


def run_time_s(work_batches: float, step_1gpu_s: float, n_gpu: int, params: float, bandwidth_gbs: float,
               bytes_per_param: float = BYTES_PER_PARAM) -> float:
    """Eqs. (1), (3): ``work_batches`` one-GPU batches (epochs x dataset / batch) on ``n_gpu`` GPUs, each step
    processing ``n_gpu`` batches in T_step.

    ```pycon
    >>> run_time_s(100, 0.5, 1, 1e6, 10.0), run_time_s(100, 0.5, 2, 0.0, 10.0)
    (50.0, 25.0)

    ```
    """
    return work_batches / n_gpu * step_time_s(step_1gpu_s, n_gpu, params, bandwidth_gbs, bytes_per_param)


def speedup_ok(step_1gpu_s: float, n_gpu: int, params: float, bandwidth_gbs: float,
               bytes_per_param: float = BYTES_PER_PARAM) -> bool:
    """Eq. (11) [R]: a multi-GPU plan is worth running iff T_comm < (N - 1) T_cal, i.e. one epoch on N GPUs is
    shorter than on one (eq. 10); always true for N = 1.

    ```pycon
    >>> speedup_ok(0.01, 2, 57e6, 10.0), speedup_ok(0.06, 2, 24e6, 6.0), speedup_ok(0.01, 1, 1e12, 1.0)
    (False, True, True)

    ```
    """
    if n_gpu <= 1:
        return True
    return comm_time_s(n_gpu, params, bandwidth_gbs, bytes_per_param) < (n_gpu - 1) * step_1gpu_s


def meets_deadline(completion_s: float, deadline_s: float) -> bool:
    """Eq. (9): T_end <= T_dl, up to [`DEADLINE_TOL_S`][optsched.problems.deadline.DEADLINE_TOL_S].

    ```pycon
    >>> meets_deadline(10.0, 10.0), meets_deadline(10.0000001, 10.0), meets_deadline(11.0, 10.0)
    (True, True, False)

    ```
    """
    return completion_s <= deadline_s + DEADLINE_TOL_S


#: how deadlines met are counted: ``count`` (R_trace's numerator, eq. 13) or ``urgency`` (each job weighs
#: 1 / alpha: an urgent job, alpha = 0.5, counts twice, a relaxed one, alpha = 1.5, two thirds)
WEIGHTS = ("count", "urgency")


def job_weight(alpha: float, weights: str = "count") -> float:
    """The weight of a met deadline under ``weights`` ([`WEIGHTS`][optsched.problems.deadline.WEIGHTS]).

    ```pycon
    >>> job_weight(0.5, "count"), job_weight(0.5, "urgency"), job_weight(1.5, "urgency")
    (1.0, 2.0, 0.6666666666666666)

    ```
    """
    if weights == "count":
        return 1.0
    if weights == "urgency":
        return 1.0 / alpha
    raise InstanceError(f"must be one of {', '.join(WEIGHTS)}, got {weights!r}", field="weights")


def job_weight_int(alpha: float, weights: str = "count") -> int:
    """[`job_weight`][optsched.problems.deadline.job_weight] times 3 (``urgency``) as an integer, for the exact models:
    6, 3, 2 for alpha = 0.5,
    1, 1.5; 1 for ``count``. Divide a total by [`weight_scale`][optsched.problems.deadline.weight_scale] to get
    [`job_weight`][optsched.problems.deadline.job_weight] units."""
    w = job_weight(alpha, weights)
    return 1 if weights == "count" else int(round(3 * w))


def weight_scale(weights: str = "count") -> int:
    """The factor between [`job_weight_int`][optsched.problems.deadline.job_weight_int] and
    [`job_weight`][optsched.problems.deadline.job_weight]."""
    job_weight(1.0, weights)  # validates the name
    return 1 if weights == "count" else 3


# -- jobs ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DeadlineJob:
    """One job: ``model`` (a [`MODELS`][optsched.problems.deadline.MODELS] name), ``arrival_s``, priority ``alpha``,
    ``epochs`` to train,
    and the profile: ``dataset_size`` (samples), per-GPU ``batch``, ``params`` (parameter count),
    ``step_time_s`` (T_cal, one batch on one GPU). Profile fields left as None take the catalogue's values.

    Format 2 ([`FORMAT_V2`][optsched.problems.deadline.FORMAT_V2]) adds, all optional:

    * ``deadline_at_s``: an explicit absolute deadline (seconds, >= the arrival) instead of eqs. (6)-(7);
    * ``best_effort``: a job without a deadline (its ``deadline_s`` is inf; reported apart from the ratio);
    * ``throughput``: a measured row ((GPU count, iterations per second), ...) at the job's global ``batch``
      (ElasticFlow's tables: rows need not grow with the count); the job's work is then ``iterations`` of that
      batch and its time on n GPUs ``iterations / throughput(n)`` (n not in the row: the largest listed count
      below it, the rest idle). ``model`` is then any name;
    * ``iterations``: the work in iterations (table jobs), or in one-GPU batches instead of ``epochs``;
    * ``gpu_counts``: the GPU counts a job may take (default: every count up to its maximum, or the row's);
    * ``gpus``: the GPU count the user asked for (ElasticFlow's ``num_gpu``), given to the policies that do not
      choose counts.

    ```pycon
    >>> j = DeadlineJob("a", "VGG-16", 60.0, 0.5, epochs=2)
    >>> j.batch, j.work_batches, round(j.run_time_1gpu_s, 2), round(j.deadline_s, 2)
    (16, 6250.0, 362.5, 241.25)
    >>> t = DeadlineJob("b", "bert", 0.0, deadline_at_s=900.0, iterations=1000, batch=64,
    ...                 throughput=((1, 2.0), (2, 3.0), (4, 2.5)))
    >>> t.run_time_1gpu_s, t.deadline_s, t.iteration_time_s(4), t.iteration_time_s(3), t.counts
    (500.0, 900.0, 0.4, 0.3333333333333333, (1, 2, 4))

    ```
    """

    id: str
    model: str
    arrival_s: float
    alpha: float = 1.0
    epochs: float | None = None
    dataset_size: int | None = None
    batch: int | None = None
    params: int | None = None
    step_time_s: float | None = None
    deadline_at_s: float | None = None
    best_effort: bool = False
    iterations: float | None = None
    throughput: tuple[tuple[int, float], ...] | None = None
    gpu_counts: tuple[int, ...] | None = None
    gpus: int | None = None

    def __post_init__(self) -> None:
        jid = self.id
        if not isinstance(jid, str) or not jid:
            raise InstanceError(f"must be a non-empty string, got {jid!r}", field="id",
                                job=jid if isinstance(jid, str) else None)

        def bad(name: str, msg: str):
            raise InstanceError(f"{msg}, got {getattr(self, name)!r}", field=name, job=jid)

        table = self.throughput is not None
        if table:
            self._check_row()
            if not isinstance(self.model, str) or not self.model:
                bad("model", "must be a non-empty string")
            if self.iterations is None:
                raise InstanceError("a job with a throughput table needs its work in iterations", field="iterations",
                                    job=jid)
            if self.batch is None:
                raise InstanceError("a job with a throughput table needs its global batch (the table's row)",
                                    field="batch", job=jid)
        else:
            if not isinstance(self.model, str) or self.model not in MODELS:
                raise InstanceError(f"unknown model {self.model!r} (known: {', '.join(MODELS)})", field="model",
                                    job=jid)
            prof = MODELS[self.model]
            for name in ("dataset_size", "batch", "params", "step_time_s"):
                if getattr(self, name) is None:
                    object.__setattr__(self, name, getattr(prof, name))
        if not is_finite_number(self.arrival_s) or self.arrival_s < 0:
            bad("arrival_s", "must be a finite number >= 0")
        if not is_finite_number(self.alpha) or float(self.alpha) not in ALPHAS:
            bad("alpha", f"must be one of {', '.join(f'{a:g}' for a in ALPHAS)}")
        if self.epochs is None and self.iterations is None:
            raise InstanceError("must be given (or iterations)", field="epochs", job=jid)
        for name in ("epochs", "iterations"):
            work = getattr(self, name)
            if work is not None and (not is_finite_number(work) or work <= 0):
                bad(name, "must be a positive number")
        if not isinstance(self.best_effort, bool):
            if self.best_effort in (0, 1) and not isinstance(self.best_effort, float):
                object.__setattr__(self, "best_effort", bool(self.best_effort))
            else:
                bad("best_effort", "must be true or false")
        if self.deadline_at_s is not None:
            if not is_finite_number(self.deadline_at_s) or self.deadline_at_s < self.arrival_s:
                bad("deadline_at_s", f"must be a finite time >= the arrival ({self.arrival_s!r})")
            object.__setattr__(self, "deadline_at_s", float(self.deadline_at_s))
        ints: dict[str, int] = {}
        for name in ("dataset_size", "batch", "params", "gpus"):
            v: Any = getattr(self, name)
            if v is None:
                continue
            if isinstance(v, float) and v.is_integer():
                v = int(v)
                object.__setattr__(self, name, v)
            elif isinstance(v, bool) or not isinstance(v, int):
                bad(name, "must be a positive integer")
            if v < 1:
                bad(name, "must be a positive integer")
            ints[name] = v
        if self.gpu_counts is not None:
            try:
                counts = tuple(sorted({int(c) for c in self.gpu_counts if float(c) == int(c) and int(c) >= 1}))
            except (TypeError, ValueError):
                counts = ()
            if not counts or len(counts) != len(set(self.gpu_counts)):
                bad("gpu_counts", "must list distinct positive integers")
            object.__setattr__(self, "gpu_counts", counts)
        if not table:
            step: Any = self.step_time_s
            if not is_finite_number(step) or step <= 0:
                bad("step_time_s", "must be a positive number (seconds)")
            if ints["dataset_size"] < ints["batch"]:
                raise InstanceError(f"{self.dataset_size} samples are fewer than one batch of {self.batch}: no plan "
                                    "can ever run a step of an epoch", field="dataset_size", job=jid)
            object.__setattr__(self, "step_time_s", float(step))
        for name in ("arrival_s", "alpha"):
            object.__setattr__(self, name, float(getattr(self, name)))
        for name in ("epochs", "iterations"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, float(getattr(self, name)))

    def _check_row(self) -> None:
        row: Any = self.throughput
        out = []
        try:
            items = list(row.items()) if isinstance(row, Mapping) else [tuple(p) for p in row]
        except TypeError:
            items = None
        if not items:
            raise InstanceError(f"must map GPU counts to iterations per second, got {row!r}", field="throughput",
                                job=self.id)
        for n, v in items:
            try:
                n_i = int(n)
                ok = float(n) == n_i and n_i >= 1
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise InstanceError(f"GPU count {n!r} must be a positive integer", field="throughput", job=self.id)
            if isinstance(v, bool) or not is_finite_number(v) or v <= 0:
                raise InstanceError(f"throughput on {n_i} GPUs must be a positive number (iterations/s), got {v!r}",
                                    field="throughput", job=self.id)
            out.append((n_i, float(v)))
        if len({n for n, _ in out}) != len(out):
            raise InstanceError("a GPU count appears twice", field="throughput", job=self.id)
        object.__setattr__(self, "throughput", tuple(sorted(out)))

    # the fields are set by __post_init__; these typed views keep mypy honest
    @property
    def n_samples(self) -> int:
        assert self.dataset_size is not None
        return self.dataset_size

    @property
    def t_cal(self) -> float:
        """T_cal: one batch on one GPU (s); a table job: one iteration on its row's smallest count."""
        if self.throughput is not None:
            return 1.0 / self.throughput[0][1]
        assert self.step_time_s is not None
        return self.step_time_s

    @property
    def n_params(self) -> int:
        assert self.params is not None
        return self.params

    @property
    def per_gpu_batch(self) -> int:
        assert self.batch is not None
        return self.batch

    @property
    def work_batches(self) -> float:
        """The work in one-GPU batches: epochs x dataset_size / batch (or ``iterations`` when given; a table
        job's unit of work is one iteration of its global batch)."""
        if self.iterations is not None:
            return self.iterations
        assert self.epochs is not None
        return self.epochs * self.n_samples / self.per_gpu_batch

    @property
    def counts(self) -> tuple[int, ...]:
        """The GPU counts the job may take: ``gpu_counts``, else the counts of its throughput row, else
        1..``max_gpus``."""
        if self.gpu_counts is not None:
            return tuple(c for c in self.gpu_counts if c <= self.max_gpus) or (min(self.gpu_counts),)
        if self.throughput is not None:
            return tuple(n for n, _ in self.throughput)
        return tuple(range(1, self.max_gpus + 1))

    @property
    def max_gpus(self) -> int:
        """The most GPUs a plan may give the job: each GPU gets at least one batch per epoch (N_step >= 1); a table
        job: its row's largest count (and ``gpu_counts``' largest)."""
        if self.throughput is not None:
            m = self.throughput[-1][0]
        else:
            m = self.n_samples // self.per_gpu_batch
        if self.gpu_counts is not None:
            m = min(m, max(self.gpu_counts))
        return m

    def iteration_time_s(self, n: int) -> float:
        """A table job: seconds per iteration on ``n`` GPUs (the largest count of its row not above ``n``; inf if
        ``n`` is below the row's smallest count)."""
        assert self.throughput is not None
        best = None
        for c, v in self.throughput:
            if c > n:
                break
            best = v
        return math.inf if best is None else 1.0 / best

    @property
    def run_time_1gpu_s(self) -> float:
        """T_run on one GPU (the job's "maximum run time"; a table job: on its row's smallest count)."""
        if self.throughput is not None:
            return self.work_batches / self.throughput[0][1]
        return self.work_batches * self.t_cal

    @property
    def deadline_s(self) -> float:
        """Eqs. (6)-(7): T_dl = T_arr + alpha * T_run(1 GPU); ``deadline_at_s`` when given; inf for a best-effort
        job."""
        if self.best_effort:
            return math.inf
        if self.deadline_at_s is not None:
            return self.deadline_at_s
        return self.arrival_s + self.alpha * self.run_time_1gpu_s

    @property
    def is_v1(self) -> bool:
        """The job uses only format 1's fields."""
        return (all(getattr(self, f) is None for f in V2_COLUMNS if f != "best_effort") and not self.best_effort
                and self.epochs is not None)

    def to_record(self) -> dict[str, Any]:
        if self.is_v1:
            return {c: getattr(self, c) for c in COLUMNS}
        out = {c: getattr(self, c) for c in COLUMNS if getattr(self, c) is not None}
        if self.deadline_at_s is not None:
            out["deadline_s"] = self.deadline_at_s
        if self.best_effort:
            out["best_effort"] = True
        if self.iterations is not None:
            out["iterations"] = self.iterations
        if self.gpu_counts is not None:
            out["gpu_counts"] = list(self.gpu_counts)
        if self.gpus is not None:
            out["gpus"] = self.gpus
        return out


COLUMNS = ("id", "model", "arrival_s", "alpha", "epochs", "dataset_size", "batch", "params", "step_time_s")
_REQUIRED = ("id", "model", "arrival_s", "alpha", "epochs")
#: the job fields format 2 adds (``throughput`` is carried by the document's ``throughputs`` table)
V2_COLUMNS = ("deadline_at_s", "best_effort", "iterations", "throughput", "gpu_counts", "gpus")
# format 2's JSON job keys beyond COLUMNS (``deadline_s`` is the explicit deadline), and its required ones
_V2_KEYS = ("deadline_s", "best_effort", "iterations", "throughput", "gpu_counts", "gpus")
_REQUIRED_V2 = ("id", "model", "arrival_s")


# -- the workload ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DeadlineWorkload:
    """A cluster and deadline jobs; validated at construction. ``time_unit_s`` is the time grid of the exact
    model ([`optsched.exact.deadline`][]) and of the round-mode runs compared with it; the policies and the
    evaluator work in continuous time. ``bytes_per_param`` is the gradient size per parameter on the wire.

    ```pycon
    >>> DeadlineWorkload(paper_cluster(), (DeadlineJob("a", "TSN", 0, 1, 1), DeadlineJob("a", "TSN", 5, 1, 1)))
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: jobs[1].id (job 'a'): duplicate job id (first at jobs[0])

    ```
    """

    cluster: Cluster
    jobs: tuple[DeadlineJob, ...]
    name: str = ""
    seed: int | None = None
    time_unit_s: float = 60.0
    bytes_per_param: float = BYTES_PER_PARAM
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        object.__setattr__(self, "meta", dict(self.meta or {}))
        if not isinstance(self.cluster, Cluster):
            raise InstanceError(f"must be a Cluster, got {type(self.cluster).__name__}", field="cluster")
        seen: dict[str, int] = {}
        for i, j in enumerate(self.jobs):
            if not isinstance(j, DeadlineJob):
                raise InstanceError(f"must be a DeadlineJob, got {type(j).__name__}", field=f"jobs[{i}]")
            if j.id in seen:
                raise InstanceError(f"duplicate job id (first at jobs[{seen[j.id]}])", field=f"jobs[{i}].id",
                                    job=j.id)
            seen[j.id] = i
        for name in ("time_unit_s", "bytes_per_param"):
            v = getattr(self, name)
            if not is_finite_number(v) or v <= 0:
                raise InstanceError(f"must be a positive number, got {v!r}", field=name)
            object.__setattr__(self, name, float(v))
        if not isinstance(self.name, str):
            raise InstanceError(f"must be a string, got {self.name!r}", field="name")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise InstanceError(f"must be an integer or absent, got {self.seed!r}", field="seed")

    # -- derived ----------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.jobs)

    def csv_text(self) -> str:
        """This workload in CSV ([`to_csv_text`][optsched.problems.deadline.to_csv_text]; format 1 only)."""
        return to_csv_text(self)

    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    @property
    def total_gpus(self) -> int:
        return self.cluster.total_gpus

    @cached_property
    def capacities(self) -> tuple[int, ...]:
        """GPUs per node, in node order (computed once: the workload is frozen and the policies read it per job)."""
        return tuple(s.gpus for s in self.cluster.servers)

    def job(self, job_id: str) -> DeadlineJob:
        for j in self.jobs:
            if j.id == job_id:
                return j
        raise KeyError(job_id)

    def bandwidth(self, cross: bool) -> float:
        """B of a plan: B_inter if it spans several nodes, B_intra otherwise (GB/s)."""
        return self.cluster.inter_bandwidth if cross else self.cluster.intra_bandwidth

    def step_time_s(self, job: DeadlineJob, n_gpu: int, cross: bool) -> float:
        """Eq. (2) for ``job`` on ``n_gpu`` GPUs, on one node (``cross=False``) or several (a table job: one
        iteration, the same on one node or several)."""
        if job.throughput is not None:
            return job.iteration_time_s(n_gpu)
        return step_time_s(job.t_cal, n_gpu, job.n_params, self.bandwidth(cross), self.bytes_per_param)

    def run_time_s(self, job: DeadlineJob, n_gpu: int, cross: bool, work_batches: float | None = None) -> float:
        """Eq. (1): the job's run time (or that of ``work_batches`` of its batches) on a plan."""
        w = job.work_batches if work_batches is None else work_batches
        if job.throughput is not None:
            return w * job.iteration_time_s(n_gpu)
        return run_time_s(w, job.t_cal, n_gpu, job.n_params, self.bandwidth(cross), self.bytes_per_param)

    def best_run_time_s(self, job: DeadlineJob) -> float:
        """The shortest T_run over every plan the cluster admits (one node when it fits, else across nodes)."""
        big = max(self.capacities)
        best = math.inf
        for n in range(1, min(self.total_gpus, job.max_gpus) + 1):
            best = min(best, self.run_time_s(job, n, cross=n > big))
        return best

    def unreachable(self) -> list[str]:
        """Ids of the jobs no plan meets the deadline of, even alone on the empty cluster at arrival (valid
        jobs: a scheduler simply cannot satisfy them; every count of deadlines met leaves them out).

        ```pycon
        >>> DeadlineWorkload(paper_cluster(), (DeadlineJob("a", "AlexNet", 0, 0.5, 1),)).unreachable()
        ['a']

        ```
        """
        return [j.id for j in self.jobs if not meets_deadline(j.arrival_s + self.best_run_time_s(j), j.deadline_s)]

    def with_jobs(self, jobs: Iterable[DeadlineJob], **changes: Any) -> DeadlineWorkload:
        """A copy with other jobs (and optionally other fields)."""
        return replace(self, jobs=tuple(jobs), **changes)

    def to_frame(self):
        """The jobs as a pandas DataFrame: the [`COLUMNS`][optsched.problems.deadline.COLUMNS] plus ``run_time_1gpu_s``
        and ``deadline_s``."""
        import pandas as pd

        rows = [{**j.to_record(), "run_time_1gpu_s": j.run_time_1gpu_s, "deadline_s": j.deadline_s} for j in self.jobs]
        return pd.DataFrame(rows, columns=[*COLUMNS, "run_time_1gpu_s", "deadline_s"])


# -- JSON -----------------------------------------------------------------------------------------------------
def to_dict(wl: DeadlineWorkload) -> dict[str, Any]:
    """The JSON document (every job field written, catalogue defaults included): format 1 when every job uses
    only its fields, else format 2 with the jobs' throughput rows gathered in one ``throughputs`` table
    (model -> global batch -> GPU count -> iterations/s; a row that differs from its model's and batch's is
    written on the job)."""
    v1 = all(j.is_v1 for j in wl.jobs)
    out: dict[str, Any] = {"format": FORMAT if v1 else FORMAT_V2}
    if wl.name:
        out["name"] = wl.name
    if wl.seed is not None:
        out["seed"] = wl.seed
    out["time_unit_s"] = wl.time_unit_s
    out["bytes_per_param"] = wl.bytes_per_param
    out["cluster"] = {"servers": [{"id": s.id, "gpus": s.gpus} for s in wl.cluster.servers],
                      "intra_bandwidth": wl.cluster.intra_bandwidth, "inter_bandwidth": wl.cluster.inter_bandwidth}
    if wl.meta:
        out["meta"] = _plain(wl.meta)
    jobs = [j.to_record() for j in wl.jobs]
    if not v1:
        table: dict[str, dict[str, dict[str, float]]] = {}
        for j, rec in zip(wl.jobs, jobs):
            if j.throughput is None:
                continue
            row = {str(n): v for n, v in j.throughput}
            have = table.setdefault(j.model, {}).setdefault(str(j.batch), row)
            if have != row:
                rec["throughput"] = row
        if table:
            out["throughputs"] = table
    out["jobs"] = jobs
    return out


def _plain(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (str, bool, int, float)) or x is None:
        return x
    try:  # numpy scalars
        return x.item()
    except AttributeError:
        return str(x)


def _job(rec: Mapping[str, Any], where: str, v2: bool = False,
         table: Mapping[str, Mapping[int, Mapping[int, float]]] | None = None) -> DeadlineJob:
    jid = rec.get("id") if isinstance(rec, Mapping) else None
    jf = Fields(rec, where, jid if isinstance(jid, str) else None).only(*COLUMNS, *(_V2_KEYS if v2 else ()))
    for name in (_REQUIRED if not v2 else _REQUIRED_V2):
        jf.raw(name)
    kw = {k: rec[k] for k in COLUMNS if k in rec}
    if v2:
        if "deadline_s" in rec:
            kw["deadline_at_s"] = jf.number("deadline_s")
        if "best_effort" in rec:
            be = rec["best_effort"]
            if not isinstance(be, bool):
                raise InstanceError(f"must be true or false, got {be!r}", field=f"{where}.best_effort",
                                    job=kw.get("id"))
            kw["best_effort"] = be
        for k in ("iterations", "gpus"):
            if k in rec:
                kw[k] = rec[k]
        if "gpu_counts" in rec:
            kw["gpu_counts"] = tuple(jf.array("gpu_counts"))
        if "throughput" in rec:
            row = jf.obj("throughput").data
            kw["throughput"] = tuple(row.items())
        elif table is not None and rec.get("model") in table:
            rows = table[rec["model"]]
            b = rec.get("batch")
            if not isinstance(b, (int, float)) or isinstance(b, bool) or int(b) not in rows:
                raise InstanceError(f"the throughput table of {rec['model']!r} has no row for batch {b!r} "
                                    f"(rows: {', '.join(str(k) for k in sorted(rows))})", field=f"{where}.batch",
                                    job=kw.get("id"))
            kw["throughput"] = tuple(rows[int(b)].items())
    try:
        return DeadlineJob(**kw)
    except InstanceError as exc:
        raise InstanceError(exc.reason, field=f"{where}.{exc.field}" if exc.field else where, job=exc.job) from None


def _number(text: str | None, where: str, job: str | None = None, integer: bool = False) -> float:
    try:
        v = float(text) if text is not None else math.nan
    except ValueError:
        v = math.nan
    if not math.isfinite(v) or (integer and not float(v).is_integer()):
        raise InstanceError(f"must be {'an integer' if integer else 'a number'}, got {text!r}", field=where, job=job)
    return v


def read_throughputs(folder: str | os.PathLike) -> dict[str, dict[int, dict[int, float]]]:
    """ElasticFlow's throughput folder: one ``<model>.csv`` per model, header ``global_batch_size,1,2,4,...``,
    one row per global batch with iterations per second on each GPU count (empty or ``nan``: not measured);
    returns model -> global batch -> GPU count -> iterations/s. Errors name the file, the row and the column
    ([`optsched.problems.elasticflow`][] reads the trace that goes with it)."""
    d = Path(folder)
    if not d.is_dir():
        raise InstanceError(f"no such folder: {d}", field="throughputs")
    out: dict[str, dict[int, dict[int, float]]] = {}
    files = sorted(p for p in d.iterdir() if p.suffix.lower() == ".csv" and p.is_file())
    if not files:
        raise InstanceError(f"{d} holds no <model>.csv throughput table", field="throughputs")
    for p in files:
        with open(p, encoding="utf-8-sig", newline="") as fh:
            rows = list(csv.reader(fh))
        if not rows or not rows[0] or rows[0][0].strip() != "global_batch_size":
            raise InstanceError("the header must start with global_batch_size, then GPU counts", field=f"{p} row 0")
        counts = [int(_number(h.strip(), f"{p} row 0 column {h.strip()!r}", integer=True)) for h in rows[0][1:]]
        if any(c < 1 for c in counts):
            raise InstanceError("GPU counts must be positive integers", field=f"{p} row 0")
        table: dict[int, dict[int, float]] = {}
        for i, row in enumerate(rows[1:], start=1):
            if not any(c.strip() for c in row):
                continue
            b = int(_number(row[0].strip(), f"{p} row {i} column global_batch_size", integer=True))
            cells: dict[int, float] = {}
            for c, text in zip(counts, row[1:]):
                if not text.strip() or text.strip().lower() == "nan":
                    continue
                v = _number(text.strip(), f"{p} row {i} column {c}")
                if v <= 0:
                    raise InstanceError(f"must be a positive number of iterations per second, got {text!r}",
                                        field=f"{p} row {i} column {c}")
                cells[c] = v
            if not cells:
                raise InstanceError("no measured throughput", field=f"{p} row {i}")
            table[b] = cells
        out[p.stem] = table
    return out


def _table(data: Any, base: Path | None) -> dict[str, dict[int, dict[int, float]]]:
    """The ``throughputs`` of a format-2 document: an object (model -> batch -> GPU count -> iterations/s) or a
    path (relative to the document's folder) of a JSON file holding one or of a folder of ElasticFlow's
    per-model CSVs ([`read_throughputs`][optsched.problems.deadline.read_throughputs])."""
    if isinstance(data, str):
        p = Path(data)
        if not p.is_absolute() and base is not None:
            p = base / p
        if p.is_dir():
            return read_throughputs(p)
        if not p.is_file():
            raise InstanceError(f"no such file or folder: {p}", field="throughputs")
        data = read_json(p)
    if not isinstance(data, Mapping):
        raise InstanceError(f"must be an object or a path, got {type(data).__name__}", field="throughputs")
    out: dict[str, dict[int, dict[int, float]]] = {}
    for model, rows in data.items():
        if not isinstance(rows, Mapping):
            raise InstanceError("must map global batch sizes to rows", field=f"throughputs.{model}")
        out[str(model)] = {}
        for b, row in rows.items():
            where = f"throughputs.{model}.{b}"
            try:
                bi = int(b)
            except (TypeError, ValueError):
                raise InstanceError(f"batch size {b!r} must be an integer", field=where) from None
            if not isinstance(row, Mapping):
                raise InstanceError("must map GPU counts to iterations per second", field=where)
            cells: dict[int, float] = {}
            for n, v in row.items():
                try:
                    ni = int(n)
                except (TypeError, ValueError):
                    raise InstanceError(f"GPU count {n!r} must be an integer", field=where) from None
                if isinstance(v, bool) or not is_finite_number(v) or v <= 0 or ni < 1:
                    raise InstanceError(f"throughput on {n} GPUs must be a positive number, got {v!r}", field=where)
                cells[ni] = float(v)
            out[str(model)][bi] = cells
    return out


def from_dict(data: Mapping[str, Any], name: str = "", base: str | os.PathLike | None = None) -> DeadlineWorkload:
    """Validate a parsed ``optsched/deadline-workload@1`` or ``@2`` JSON document (errors name the field path and
    job). ``base``: the folder a format-2 ``throughputs`` path is relative to (default: the working folder).

    ```pycon
    >>> from_dict({"format": FORMAT, "jobs": [{"id": "a", "model": "TSN", "arrival_s": 0, "alpha": 2,
    ...                                         "epochs": 3}]})
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: jobs[0].alpha (job 'a'): must be one of 0.5, 1, 1.5, got 2
    >>> wl = from_dict({"format": FORMAT_V2, "throughputs": {"bert": {"64": {"1": 2.0, "2": 3.5}}},
    ...                 "jobs": [{"id": "a", "model": "bert", "arrival_s": 0, "deadline_s": 600, "batch": 64,
    ...                           "iterations": 1000}, {"id": "b", "model": "TSN", "arrival_s": 5, "epochs": 1,
    ...                           "best_effort": True}]})
    >>> wl.jobs[0].throughput, wl.jobs[0].deadline_s, wl.jobs[1].deadline_s
    (((1, 2.0), (2, 3.5)), 600.0, inf)

    ```
    """
    v2 = isinstance(data, Mapping) and data.get("format") == FORMAT_V2
    top = Fields(data, "").only("format", "name", "seed", "time_unit_s", "bytes_per_param", "cluster", "meta",
                                "jobs", *(("throughputs",) if v2 else ()))
    check_format(data, FORMAT_V2 if v2 else FORMAT)
    table = _table(data["throughputs"], Path(base) if base is not None else None) \
        if v2 and "throughputs" in data else None
    cluster = paper_cluster()
    if "cluster" in data:
        cf = top.obj("cluster").only("servers", "intra_bandwidth", "inter_bandwidth")
        servers = []
        for i, s in enumerate(cf.array("servers")):
            sf = Fields(s, f"cluster.servers[{i}]").only("id", "gpus")
            servers.append(Server(sf.string("id"), sf.integer("gpus")))
        cluster = Cluster(tuple(servers), intra_bandwidth=cf.number("intra_bandwidth", PAPER_B_INTRA),
                          inter_bandwidth=cf.number("inter_bandwidth", PAPER_B_INTER))
    meta = data.get("meta", {})
    if not isinstance(meta, Mapping):
        raise InstanceError(f"must be an object, got {type(meta).__name__}", field="meta")
    seed = top.integer("seed") if "seed" in data else None
    jobs = tuple(_job(j, f"jobs[{i}]", v2, table) for i, j in enumerate(top.array("jobs")))
    try:
        return DeadlineWorkload(cluster, jobs, str(data.get("name", name) or name), seed,
                                top.number("time_unit_s", 60.0), top.number("bytes_per_param", BYTES_PER_PARAM),
                                meta)
    except InstanceError:
        raise
    except TypeError as exc:  # pragma: no cover - defensive
        raise InstanceError(str(exc)) from None


# -- CSV ------------------------------------------------------------------------------------------------------
# instance-level fields of the CSV flavour, on "# key: value" lines before the header
_CSV_KEYS = ("format", "name", "seed", "servers", "intra_bandwidth", "inter_bandwidth", "time_unit_s",
             "bytes_per_param")


def to_csv_text(wl: DeadlineWorkload) -> str:
    """The CSV flavour: ``# key: value`` lines (format, name, seed, servers as GPUs per node, bandwidths, time
    unit, bytes per parameter), then a header with the [`COLUMNS`][optsched.problems.deadline.COLUMNS] and one job per
    line. ``meta`` is not
    carried (JSON only), nor format 2 (a job using its fields raises an error naming it)."""
    for j in wl.jobs:
        if not j.is_v1:
            raise InstanceError("uses format 2's fields (explicit deadline, best effort, throughput table, GPU "
                                "counts), which only the JSON form carries", field="format", job=j.id)
    buf = _io.StringIO()
    buf.write(f"# format: {FORMAT}\n")
    if wl.name:
        buf.write(f"# name: {wl.name}\n")
    if wl.seed is not None:
        buf.write(f"# seed: {wl.seed}\n")
    buf.write(f"# servers: {','.join(str(c) for c in wl.capacities)}\n")
    buf.write(f"# intra_bandwidth: {wl.cluster.intra_bandwidth!r}\n# inter_bandwidth: {wl.cluster.inter_bandwidth!r}\n")
    buf.write(f"# time_unit_s: {wl.time_unit_s!r}\n# bytes_per_param: {wl.bytes_per_param!r}\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for j in wl.jobs:
        w.writerow([repr(v) if isinstance(v, float) else v for v in (getattr(j, c) for c in COLUMNS)])
    return buf.getvalue()


def _csv_number(text: str, where: str, job: str | None = None) -> float:
    try:
        v = float(text)
    except ValueError:
        raise InstanceError(f"must be a number, got {text!r}", field=where, job=job) from None
    if not math.isfinite(v):
        raise InstanceError(f"must be a finite number, got {text!r}", field=where, job=job)
    return v


def from_csv_text(text: str, name: str = "") -> DeadlineWorkload:
    """Read the CSV flavour; cluster fields absent from the ``#`` lines default to the paper's testbed.

    ```pycon
    >>> wl = from_csv_text("# servers: 2,2\\nid,model,arrival_s,alpha,epochs\\na,ResNet-50,0,1.5,2\\n")
    >>> wl.capacities, wl.jobs[0].params
    ((2, 2), 23712932)

    ```
    """
    header_opts: dict[str, str] = {}
    lines = text.splitlines()
    body_start = 0
    for k, line in enumerate(lines):
        s = line.strip()
        if not s:
            continue
        if not s.startswith("#"):
            body_start = k
            break
        key, sep, value = s[1:].partition(":")
        key = key.strip()
        if not sep or key not in _CSV_KEYS:
            raise InstanceError(f"unknown header line {s!r} (known keys: {', '.join(_CSV_KEYS)})", field="header")
        header_opts[key] = value.strip()
    else:
        body_start = len(lines)
    if "format" in header_opts and header_opts["format"] != FORMAT:
        raise InstanceError(f"expected {FORMAT!r}, got {header_opts['format']!r}", field="format")
    jobs = [_job({col: cell if col in ("id", "model") else _csv_number(cell, f"{where}.{col}", jid)
                  for col, cell in cells.items()}, where)
            for where, jid, cells in csv_jobs("\n".join(lines[body_start:]), COLUMNS, _REQUIRED)]
    caps = [PAPER_GPUS_PER_NODE] * PAPER_NODES
    if "servers" in header_opts:
        try:
            caps = [int(x) for x in header_opts["servers"].split(",")]
        except ValueError:
            raise InstanceError(f"must list GPUs per node like 4,4,4,4, got {header_opts['servers']!r}",
                                field="servers") from None
    servers = tuple(Server(f"n{i}", c) for i, c in enumerate(caps))
    cluster = Cluster(servers, intra_bandwidth=_csv_number(header_opts.get("intra_bandwidth", str(PAPER_B_INTRA)),
                                                           "intra_bandwidth"),
                      inter_bandwidth=_csv_number(header_opts.get("inter_bandwidth", str(PAPER_B_INTER)),
                                                  "inter_bandwidth"))
    seed = None
    if "seed" in header_opts:
        try:
            seed = int(header_opts["seed"])
        except ValueError:
            raise InstanceError(f"must be an integer, got {header_opts['seed']!r}", field="seed") from None
    return DeadlineWorkload(cluster, tuple(jobs), header_opts.get("name", name) or name, seed,
                            _csv_number(header_opts.get("time_unit_s", "60"), "time_unit_s"),
                            _csv_number(header_opts.get("bytes_per_param", str(BYTES_PER_PARAM)), "bytes_per_param"))


def read_deadline_workload(path: str | os.PathLike) -> DeadlineWorkload:
    """Read a deadline workload: CSV if the name ends in ``.csv``, JSON otherwise."""
    p = Path(path)
    if p.suffix.lower() == ".csv":
        return from_csv_text(read_text(p, encoding="utf-8-sig"), name=p.stem)
    return from_dict(read_json(p), name=p.stem, base=p.parent)


def write_deadline_workload(wl: DeadlineWorkload, path: str | os.PathLike) -> None:
    """Write atomically: CSV if the name ends in ``.csv``, JSON otherwise."""
    p = Path(path)
    if p.suffix.lower() == ".csv":
        with atomic_open(p, encoding="utf-8", newline="") as fh:
            fh.write(to_csv_text(wl))
    else:
        write_json(p, to_dict(wl))


PROBLEM = register_problem(Problem(
    name="deadline",
    title="deadline-aware scheduling (paper 003, DRS): the scheduler picks GPU counts; maximise deadlines met",
    classes=(DeadlineWorkload,), format=FORMAT, reader=from_dict, writer=to_dict,
    evaluator="optsched.evaluators.deadline:evaluate",
    generator="optsched.generators.deadline:deadline_workload",
    generate_cli="optsched.commands._generate_deadline:register",
    summary="optsched.commands._generate_deadline:summary",
    default_algorithm="deadline-cpsat", other_formats=(FORMAT_V2,),
    algorithms={"deadline-cpsat": "optsched.exact.deadline", "deadline-brute": "optsched.exact.deadline",
                "deadline-sgs": "optsched.algorithms.deadline_sgs"},
))
