"""Jobs with mixed parallelism (paper 001, section III-A): pipeline stages, each data-parallel over k_s replicas.

A job trains a DNN cut into S consecutive stages; stage s runs on ``replicas`` = k_s GPUs (one replica each),
so the job needs g_i = sum_s k_s GPUs. Special cases: a single-GPU job (S = 1, k = 1), pure data parallelism
(S = 1, k > 1), pure model parallelism (every k_s = 1).

**Units (one system for the whole pipeline model):** data in MB (10^6 bytes), time in ms, bandwidth in GB/s,
which is numerically MB/ms, so ``size_mb / bandwidth_gbs`` is a time in ms with no conversion factor.

Per stage (paper symbols): ``forward_ms`` p^f_s and ``backward_ms`` p^b_s (one mini-batch on one replica),
``d_in_mb`` d^in_s and ``d_out_mb`` d^out_s (activations in / out per iteration per replica; the gradients of
the backward pass have the same size, hence the paper's factor 2), ``params_mb`` h_s (trainable parameters,
the all-reduce payload). ``allreduce`` is ``"ring"`` (RAR) or ``"tree"`` (TAR, double binary tree).

Consistency (digest resolution 4): the data leaving stage s-1 is the data entering stage s,
k_{s-1} d^out_{s-1} = k_s d^in_s; the first stage has no input (d^in_1 = 0) and the last none to send
(d^out_S = 0). [`pipeline_job`][optsched.problems.pipeline.pipeline_job] derives ``d_in_mb`` from ``d_out_mb`` so that
this always holds.

```pycon
>>> job = pipeline_job("j0", replicas=[2, 1], forward_ms=[1.0, 2.0], backward_ms=[2.0, 4.0],
...                    d_out_mb=[3.0, 0.0], params_mb=[10.0, 5.0])
>>> job.gpus, job.stages[1].d_in_mb
(3, 6.0)

```
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..errors import InstanceError
from ..io import Fields, check_format
from ..registry import Problem, register_problem

FORMAT = "optsched/pipeline-job@1"
ALLREDUCE_KINDS = ("ring", "tree")
_REL_TOL = 1e-9


@dataclass(frozen=True)
class Stage:
    """One pipeline stage: k_s replicas with per-replica times (ms) and sizes (MB)."""

    replicas: int
    forward_ms: float
    backward_ms: float
    d_in_mb: float
    d_out_mb: float
    params_mb: float

    @property
    def compute_ms(self) -> float:
        """p^f_s + p^b_s: eq. (4) for a replica that is placed."""
        return self.forward_ms + self.backward_ms


@dataclass(frozen=True)
class PipelineJob:
    """A mixed-parallelism training job, validated at construction.

    ``model`` and ``config`` are optional labels (the catalogue in [`optsched.models`][] sets them).
    """

    id: str
    stages: tuple[Stage, ...]
    allreduce: str = "ring"
    model: str = field(default="", compare=False)
    config: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "stages", tuple(self.stages))
        self._validate()

    # -- derived -----------------------------------------------------------------------------------------
    @property
    def gpus(self) -> int:
        """g_i = sum_s k_s."""
        return sum(s.replicas for s in self.stages)

    @property
    def n_stages(self) -> int:
        return len(self.stages)

    @property
    def replicas(self) -> tuple[int, ...]:
        return tuple(s.replicas for s in self.stages)

    @property
    def kind(self) -> str:
        """``"single-gpu"``, ``"data-parallel"``, ``"model-parallel"`` or ``"pipeline"`` (paper III-A)."""
        if len(self.stages) == 1:
            return "single-gpu" if self.stages[0].replicas == 1 else "data-parallel"
        return "model-parallel" if all(s.replicas == 1 for s in self.stages) else "pipeline"

    # -- validation --------------------------------------------------------------------------------------
    def _validate(self) -> None:
        jid = self.id if isinstance(self.id, str) else None
        if not isinstance(self.id, str) or not self.id:
            raise InstanceError(f"must be a non-empty string, got {self.id!r}", field="id")
        if self.allreduce not in ALLREDUCE_KINDS:
            raise InstanceError(f"must be 'ring' or 'tree', got {self.allreduce!r}", field="allreduce", job=jid)
        if not self.stages:
            raise InstanceError("must list at least one stage", field="stages", job=jid)
        for i, st in enumerate(self.stages):
            where = f"stages[{i}]"
            if not isinstance(st, Stage):
                raise InstanceError(f"must be a Stage, got {type(st).__name__}", field=where, job=jid)
            k = st.replicas
            if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
                raise InstanceError(f"must be a positive integer, got {k!r}", field=f"{where}.replicas", job=jid)
            for name in ("forward_ms", "backward_ms", "d_in_mb", "d_out_mb", "params_mb"):
                v = getattr(st, name)
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                    raise InstanceError(f"must be a finite number >= 0, got {v!r}", field=f"{where}.{name}",
                                        job=jid)
        if self.stages[0].d_in_mb != 0:
            raise InstanceError("the first stage has no upstream stage, so d_in_mb must be 0, got "
                                f"{self.stages[0].d_in_mb!r}", field="stages[0].d_in_mb", job=jid)
        last = len(self.stages) - 1
        if self.stages[last].d_out_mb != 0:
            raise InstanceError("the last stage has no downstream stage, so d_out_mb must be 0, got "
                                f"{self.stages[last].d_out_mb!r}", field=f"stages[{last}].d_out_mb", job=jid)
        for i in range(1, len(self.stages)):
            a, b = self.stages[i - 1], self.stages[i]
            sent, received = a.replicas * a.d_out_mb, b.replicas * b.d_in_mb
            if not math.isclose(sent, received, rel_tol=_REL_TOL, abs_tol=1e-12):
                raise InstanceError(
                    f"inconsistent inter-stage data: k[{i - 1}]*d_out_mb[{i - 1}] = {a.replicas}*{a.d_out_mb:g}"
                    f" = {sent:g} but k[{i}]*d_in_mb[{i}] = {b.replicas}*{b.d_in_mb:g} = {received:g}",
                    field=f"stages[{i}].d_in_mb", job=jid)

    def check_fits(self, free_gpus: int, *, field: str = "free") -> None:
        """Raise [`InstanceError`][optsched.errors.InstanceError] unless ``free_gpus`` >= g_i."""
        if free_gpus < self.gpus:
            raise InstanceError(f"job needs {self.gpus} GPUs but only {free_gpus} are free", field=field,
                                job=self.id)


@dataclass(frozen=True)
class PipelineJobSet:
    """Several pipeline jobs in one file (``{"format": ..., "jobs": [...]}``); ids must be unique."""

    jobs: tuple[PipelineJob, ...]
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        seen: set[str] = set()
        for i, j in enumerate(self.jobs):
            if j.id in seen:
                raise InstanceError(f"duplicate job id {j.id!r}", field=f"jobs[{i}].id", job=j.id)
            seen.add(j.id)

    def __getitem__(self, job_id: str) -> PipelineJob:
        for j in self.jobs:
            if j.id == job_id:
                return j
        raise KeyError(job_id)


def pipeline_job(id: str, *, replicas: Sequence[int], forward_ms: Sequence[float], backward_ms: Sequence[float],
                 d_out_mb: Sequence[float], params_mb: Sequence[float], allreduce: str = "ring",
                 model: str = "", config: str = "") -> PipelineJob:
    """Build a job from per-stage lists, deriving d^in_s = k_{s-1} d^out_{s-1} / k_s (resolution 4).

    The last entry of ``d_out_mb`` must be 0 (the last stage sends nothing downstream).
    """
    n = len(replicas)
    for name, seq in (("forward_ms", forward_ms), ("backward_ms", backward_ms), ("d_out_mb", d_out_mb),
                      ("params_mb", params_mb)):
        if len(seq) != n:
            raise InstanceError(f"has {len(seq)} entries but there are {n} stages", field=name, job=id)
    stages: list[Stage] = []
    for s in range(n):
        if s == 0:
            d_in = 0.0
        else:
            k = replicas[s]
            d_in = replicas[s - 1] * d_out_mb[s - 1] / k if isinstance(k, int) and k > 0 else 0.0
        stages.append(Stage(replicas[s], forward_ms[s], backward_ms[s], d_in, d_out_mb[s], params_mb[s]))
    return PipelineJob(id, tuple(stages), allreduce, model, config)


# -- the network ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Network:
    """g GPUs per server, the NIC bandwidth B_inter and the intra-server bandwidth B_intra (GB/s = MB/ms).

    The paper's simulation (section V-B): 8 GPUs, 10 Gbps NIC = 1.25 GB/s, 300 GB/s NVLink.
    """

    gpus_per_server: int = 8
    inter_bandwidth_gbs: float = 1.25
    intra_bandwidth_gbs: float = 300.0

    def __post_init__(self) -> None:
        g = self.gpus_per_server
        if isinstance(g, bool) or not isinstance(g, int) or g <= 0:
            raise InstanceError(f"must be a positive integer, got {g!r}", field="network.gpus_per_server")
        for name in ("inter_bandwidth_gbs", "intra_bandwidth_gbs"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise InstanceError(f"must be a positive number, got {v!r}", field=f"network.{name}")

    @classmethod
    def paper_simulation(cls) -> Network:
        """250 x 8 V100 cluster of section V-B: 10 Gbps NIC (1.25 GB/s), 300 GB/s NVLink."""
        return cls(8, 10.0 / 8.0, 300.0)

    @classmethod
    def from_gbps(cls, gpus_per_server: int, nic_gbps: float, intra_gbs: float) -> Network:
        """NIC given in Gbit/s (as papers quote it), intra-server bandwidth in GB/s."""
        return cls(gpus_per_server, nic_gbps / 8.0, intra_gbs)

    @property
    def precondition_holds(self) -> bool:
        """B_intra >= B_inter / g: the condition under which alpha(x) <= alpha_max for every x (digest 1.10)."""
        return bandwidth_precondition(self)


def bandwidth_precondition(net: Network) -> bool:
    """True iff B_intra >= B_inter / g, under which every placement has alpha(x) <= alpha_max.

    ```pycon
    >>> bandwidth_precondition(Network(8, 1.25, 300.0)), bandwidth_precondition(Network(8, 16.0, 1.0))
    (True, False)

    ```
    """
    return net.intra_bandwidth_gbs >= net.inter_bandwidth_gbs / net.gpus_per_server


def require_bandwidth_precondition(net: Network) -> None:
    """Raise [`InstanceError`][optsched.errors.InstanceError] unless B_intra >= B_inter / g."""
    if not bandwidth_precondition(net):
        raise InstanceError(f"B_intra = {net.intra_bandwidth_gbs:g} GB/s is below B_inter / g = "
                            f"{net.inter_bandwidth_gbs:g}/{net.gpus_per_server} GB/s; alpha(x) <= alpha_max "
                            "does not hold", field="network.intra_bandwidth_gbs")


# -- JSON --------------------------------------------------------------------------------------------------
STAGE_KEYS = ("replicas", "forward_ms", "backward_ms", "d_in_mb", "d_out_mb", "params_mb")


def job_from_fields(jf: Fields, jid: str | None = None, extra_keys: tuple[str, ...] = ()) -> PipelineJob:
    """Parse one job from an [`optsched.io.Fields`][] view (``d_in_mb`` optional: derived when absent);
    keys other than a job's (and ``extra_keys``, e.g. a file's ``format``) are refused."""
    jf.only("id", "allreduce", "model", "config", "stages", *extra_keys)
    job_id = jf.string("id")
    allreduce = jf.string("allreduce", "ring")
    rows = jf.array("stages")
    stages: list[Stage] = []
    for i, row in enumerate(rows):
        sf = type(jf)(row, jf.path(f"stages[{i}]"), job_id).only(*STAGE_KEYS)
        k = sf.integer("replicas")
        d_out = sf.number("d_out_mb", 0.0)
        if "d_in_mb" in sf.data:
            d_in = sf.number("d_in_mb")
        elif i == 0:
            d_in = 0.0
        else:
            prev = stages[-1]
            d_in = prev.replicas * prev.d_out_mb / k if k > 0 else 0.0
        stages.append(Stage(k, sf.number("forward_ms"), sf.number("backward_ms"), d_in, d_out,
                            sf.number("params_mb", 0.0)))
    try:
        return PipelineJob(job_id, tuple(stages), allreduce, str(jf.data.get("model", "")),
                           str(jf.data.get("config", "")))
    except InstanceError as exc:  # prefix the file path of this job (e.g. "jobs[2].")
        prefix = jf.where + "." if jf.where else ""
        raise InstanceError(exc.reason, field=prefix + (exc.field or ""), job=exc.job or job_id) from None


def job_to_json(job: PipelineJob) -> dict[str, Any]:
    out: dict[str, Any] = {"id": job.id, "allreduce": job.allreduce}
    if job.model:
        out["model"] = job.model
    if job.config:
        out["config"] = job.config
    out["stages"] = [{"replicas": s.replicas, "forward_ms": s.forward_ms, "backward_ms": s.backward_ms,
                      "d_in_mb": s.d_in_mb, "d_out_mb": s.d_out_mb, "params_mb": s.params_mb}
                     for s in job.stages]
    return out


def from_dict(data: Mapping[str, Any], name: str = "") -> PipelineJob | PipelineJobSet:
    """Read ``optsched/pipeline-job@1``: one job (top-level ``stages``) or a set (top-level ``jobs``)."""
    check_format(data, FORMAT)
    top = Fields(data, "")
    if "jobs" in data:
        top.only("format", "name", "jobs")
        jobs = []
        for i, j in enumerate(top.array("jobs")):
            jid = j.get("id") if isinstance(j, Mapping) else None
            jobs.append(job_from_fields(Fields(j, f"jobs[{i}]", jid if isinstance(jid, str) else None)))
        return PipelineJobSet(tuple(jobs), name=str(data.get("name", name) or name))
    jid = data.get("id")
    return job_from_fields(Fields(data, "", jid if isinstance(jid, str) else None), extra_keys=("format", "name"))


def to_dict(problem: PipelineJob | PipelineJobSet) -> dict[str, Any]:
    """JSON-ready dict of a job or a job set (inverse of [`from_dict`][optsched.problems.pipeline.from_dict])."""
    if isinstance(problem, PipelineJobSet):
        out: dict[str, Any] = {"format": FORMAT}
        if problem.name:
            out["name"] = problem.name
        out["jobs"] = [job_to_json(j) for j in problem.jobs]
        return out
    return {"format": FORMAT, **job_to_json(problem)}


PROBLEM = register_problem(Problem(
    name="pipeline-job",
    title="mixed-parallelism training jobs (paper 001): the input of placement and of the simulator's jobs",
    classes=(PipelineJob, PipelineJobSet), format=FORMAT, reader=from_dict, writer=to_dict,
))
