"""RAR-DDLS (paper 000, MobiHoc '22, section 4.1): ring-all-reduce jobs under communication contention.

Units: time in slots (a slot is the unit of time; per-iteration times are fractions of a slot); data and
bandwidth in any consistent unit (data per slot). See ``docs/formats.md`` for the JSON form and
``optsched.perf.rar`` for the per-iteration time model.

>>> from optsched.cluster import Cluster, Server
>>> inst = RarInstance(Cluster((Server("s0", 4),), intra_bandwidth=100.0, inter_bandwidth=10.0),
...                    horizon=50, jobs=(RarJob("j0", gpus=2, iterations=100, gradient_size=0.1,
...                                             batch_size=32, forward_time_per_sample=0.0005,
...                                             backward_time=0.01),))
>>> inst.n_jobs, inst.max_job_gpus
(1, 2)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..cluster import Cluster, _is_number
from ..errors import InstanceError

FORMAT = "optsched/rar-ddls@1"


@dataclass(frozen=True)
class RarJob:
    """A ring-all-reduce training job (paper 000's G_j, F_j, m_j, M_j, Delta^f_j, Delta^b_j, lambda_j)."""

    id: str
    gpus: int
    iterations: int
    gradient_size: float
    batch_size: float
    forward_time_per_sample: float
    backward_time: float
    lam: float = 1.0  # lambda_j >= 1 of Algorithm 3: LBSGF may use servers holding lambda_j * G_j GPUs

    @property
    def compute_time(self) -> float:
        """Delta^f_j * M_j + Delta^b_j: the per-iteration time with no communication (slots)."""
        return self.forward_time_per_sample * self.batch_size + self.backward_time


@dataclass(frozen=True)
class RarInstance:
    """A RAR-DDLS instance: the cluster, the model's constants, the horizon T and the jobs."""

    cluster: Cluster
    horizon: int
    jobs: tuple[RarJob, ...]
    reduce_speed: float = 1e9          # C: a GPU's gradient-reduction speed (data per slot)
    contention_xi: float = 1.0         # xi_1 in (0, 1]: k = max(1, xi_1 * p)
    overhead_xi: float = 0.0           # xi_2 in [0, 1]: overhead gamma = xi_2 * (#servers used)
    degradation_alpha: float = 0.0     # alpha >= 0 in f(k) = k + alpha (k - 1)
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        self._validate()

    # -- convenience -------------------------------------------------------------------------------------
    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    @property
    def max_job_gpus(self) -> int:
        """n_g = max_j G_j."""
        return max(j.gpus for j in self.jobs)

    def job(self, job_id: str) -> RarJob:
        for j in self.jobs:
            if j.id == job_id:
                return j
        raise KeyError(job_id)

    # -- validation ----------------------------------------------------------------------------------------
    def _validate(self) -> None:
        def positive(value, fld, job=None, integer=False, allow_zero=False):
            ok = (isinstance(value, int) and not isinstance(value, bool)) if integer else _is_number(value)
            if not ok or value < 0 or (value == 0 and not allow_zero):
                kind = "integer" if integer else "number"
                sign = "non-negative" if allow_zero else "positive"
                raise InstanceError(f"must be a {sign} {kind}, got {value!r}", field=fld, job=job)

        positive(self.horizon, "horizon", integer=True)
        positive(self.reduce_speed, "cluster.reduce_speed")
        positive(self.degradation_alpha, "cluster.degradation_alpha", allow_zero=True)
        if not _is_number(self.contention_xi) or not 0 < self.contention_xi <= 1:
            raise InstanceError(f"must lie in (0, 1], got {self.contention_xi!r}", field="cluster.contention_xi")
        if not _is_number(self.overhead_xi) or not 0 <= self.overhead_xi <= 1:
            raise InstanceError(f"must lie in [0, 1], got {self.overhead_xi!r}", field="cluster.overhead_xi")
        if not self.jobs:
            raise InstanceError("must list at least one job", field="jobs")
        seen: set[str] = set()
        for i, j in enumerate(self.jobs):
            where = f"jobs[{i}]"
            if not isinstance(j.id, str) or not j.id:
                raise InstanceError(f"must be a non-empty string, got {j.id!r}", field=f"{where}.id")
            if j.id in seen:
                raise InstanceError("duplicate job id", field=f"{where}.id", job=j.id)
            seen.add(j.id)
            positive(j.gpus, f"{where}.gpus", j.id, integer=True)
            positive(j.iterations, f"{where}.iterations", j.id, integer=True)
            positive(j.gradient_size, f"{where}.gradient_size", j.id, allow_zero=True)
            positive(j.batch_size, f"{where}.batch_size", j.id)
            positive(j.forward_time_per_sample, f"{where}.forward_time_per_sample", j.id, allow_zero=True)
            positive(j.backward_time, f"{where}.backward_time", j.id, allow_zero=True)
            if not _is_number(j.lam) or j.lam < 1:
                raise InstanceError(f"must be a number >= 1, got {j.lam!r}", field=f"{where}.lambda", job=j.id)
            if j.gpus > self.cluster.total_gpus:
                raise InstanceError(f"needs {j.gpus} GPUs but the cluster has {self.cluster.total_gpus}",
                                    field=f"{where}.gpus", job=j.id)
        # Paper 000 [D]: phi = floor(1/tau) must be >= 1 under every placement, or the job may never finish.
        from ..perf.rar import tau_bounds

        for i, j in enumerate(self.jobs):
            _, worst, why = tau_bounds(self, j, explain=True)
            if worst >= 1.0:
                raise InstanceError(
                    f"per-iteration time reaches {worst:.4g} slots ({why}), so floor(1/tau) = 0 and the job "
                    "would never progress; lower the compute/communication times or the overheads",
                    field=f"jobs[{i}]", job=j.id)
