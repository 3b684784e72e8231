"""RAR-DDLS (paper 000, MobiHoc '22, section 4.1): ring-all-reduce jobs under communication contention.

Units: time in slots (a slot is the unit of time; per-iteration times are fractions of a slot); data and
bandwidth in any consistent unit (data per slot). See ``docs/formats.md`` for the JSON form.

The problem is defined together with its per-iteration time model (section 4.1, eqs. 6-9), so the scalar part
of that model lives here, where validation needs it: [`iteration_time`][optsched.problems.rar.iteration_time] (tau, eq.
8),
[`iterations_per_slot`][optsched.problems.rar.iterations_per_slot] (phi = floor(1/tau), eq. 9),
[`tau_bounds`][optsched.problems.rar.tau_bounds]. [`optsched.perf.rar`][] adds the
per-slot contention of a set of active jobs (eq. 6) on top. Resolutions of the digest's open points
(``docs/algorithms/sjf-bco.md``): k = max(1, xi_1 * p) so that a job alone on its links keeps its full
bandwidth (f(alpha, 1) = 1); floor(1/tau) is taken with a 1e-9 slack so that tau = 1/n computed in floating
point still gives n.

```pycon
>>> from optsched.cluster import Cluster, Server
>>> inst = RarInstance(Cluster((Server("s0", 4),), intra_bandwidth=100.0, inter_bandwidth=10.0),
...                    horizon=50, jobs=(RarJob("j0", gpus=2, iterations=100, gradient_size=0.1,
...                                             batch_size=32, forward_time_per_sample=0.0005,
...                                             backward_time=0.01),))
>>> inst.n_jobs, inst.max_job_gpus
(1, 2)

```
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping

from ..cluster import Cluster, Server, _is_number
from ..errors import InstanceError
from ..io import Fields, check_format
from ..registry import Problem, register_problem

FORMAT = "optsched/rar-ddls@1"

# floor(1/tau) is taken with this slack so that tau = 1/n computed in floating point still gives n.
_FLOOR_EPS = 1e-9


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

    @cached_property
    def max_contention(self) -> int:
        """Largest p any job can see: split jobs sharing one server, at most one per GPU of the largest
        server (computed once per instance)."""
        split_capable = sum(1 for j in self.jobs if j.gpus >= 2)
        return max(1, min(self.cluster.max_server_gpus, split_capable))

    @cached_property
    def _caps(self) -> tuple[int, int, tuple[int, ...]]:
        """(largest server, number of servers, cumulative GPUs of the servers largest first): the cluster
        aggregates [`tau_bounds`][optsched.problems.rar.tau_bounds] needs for every job, computed once per instance
        (validation and the
        estimates stay O(n) instead of O(n |S|))."""
        caps = sorted((s.gpus for s in self.cluster.servers), reverse=True)
        return caps[0], len(caps), tuple(itertools.accumulate(caps))

    def job(self, job_id: str) -> RarJob:
        for j in self.jobs:
            if j.id == job_id:
                return j
        raise KeyError(job_id)

    # -- validation ----------------------------------------------------------------------------------------
    def _validate(self) -> None:
        def positive(value, fld, job=None, integer=False, allow_zero=False):
            t = type(value)   # the common case first: a plain int, or a finite float where one is allowed
            if (t is int or (t is float and not integer and value < math.inf)) and (
                    value > 0 or (allow_zero and value == 0)):
                return
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
        total_gpus = self._caps[2][-1]
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
            if j.gpus > total_gpus:
                raise InstanceError(f"needs {j.gpus} GPUs but the cluster has {total_gpus}",
                                    field=f"{where}.gpus", job=j.id)
        # Paper 000 [D]: phi = floor(1/tau) must be >= 1 under every placement, or the job may never finish.
        if self._all_progress():
            return
        for i, j in enumerate(self.jobs):
            _, worst, why = tau_bounds(self, j, explain=True)
            if worst >= 1.0:
                raise InstanceError(
                    f"per-iteration time reaches {worst:.4g} slots ({why}), so floor(1/tau) = 0 and the job "
                    "would never progress; lower the compute/communication times or the overheads",
                    field=f"jobs[{i}]", job=j.id)


    def _all_progress(self) -> bool:
        """True if every job's slowest iteration time ([`tau_bounds`][optsched.problems.rar.tau_bounds]' maximum) is
        clearly below one slot: eq. (8) for the placements tau_bounds weighs, inlined in one loop over the jobs (the
        same operations, so the same floats; anything within 1e-9 of a slot is left to the exact check, which
        names the job)."""
        biggest, n_servers, cum = self._caps
        c = self.cluster
        k_max = contention_k(self.max_contention, self.contention_xi)
        bw_one = c.intra_bandwidth
        bw_spread = c.inter_bandwidth / f_degradation(contention_k(1, self.contention_xi), self.degradation_alpha)
        bw_worst = c.inter_bandwidth / f_degradation(k_max, self.degradation_alpha)
        red, xi2 = self.reduce_speed, self.overhead_xi
        spans: dict[int, tuple[int, int]] = {}
        limit = 1.0 - 1e-9
        for j in self.jobs:
            w = j.gpus
            ring = (w - 1) * j.gradient_size / w
            compute = j.forward_time_per_sample * j.batch_size + j.backward_time
            if w <= biggest and 2.0 * ring / bw_one + ring / red + xi2 * 1 + compute >= limit:
                return False
            if min(w, n_servers) >= 2:
                sp = spans.get(w)
                if sp is None:
                    if w > cum[-1]:
                        return False
                    sp = spans[w] = (max(2, bisect.bisect_left(cum, w) + 1), min(w, n_servers))
                if (2.0 * ring / bw_spread + ring / red + xi2 * sp[0] + compute >= limit
                        or 2.0 * ring / bw_worst + ring / red + xi2 * sp[1] + compute >= limit):
                    return False
        return True


# -- the per-iteration time model (section 4.1, eqs. 6-9) -------------------------------------------------
def f_degradation(k: float, alpha: float) -> float:
    """f(alpha, k) = k + alpha (k - 1): bandwidth degradation with k contending jobs (section 4.1)."""
    return k + alpha * (k - 1.0)


def contention_k(p: int, xi1: float) -> float:
    """k = max(1, xi_1 * p) ([D] of digest section 1)."""
    return max(1.0, xi1 * p)


def iteration_time(inst: RarInstance, job: RarJob, n_servers: int, p: int) -> float:
    """tau_j of eq. (8) for ``job`` spread over ``n_servers`` servers with contention ``p``.

    tau = 2(w-1)m/(wB) + (w-1)m/(wC) + xi_2 * n_servers + Delta^f M + Delta^b, with w = G_j and
    B = b^i on one server, b^e / f(alpha, k) across servers.
    """
    w = job.gpus
    if n_servers <= 1:
        bandwidth = inst.cluster.intra_bandwidth
    else:
        bandwidth = inst.cluster.inter_bandwidth / f_degradation(contention_k(p, inst.contention_xi),
                                                                 inst.degradation_alpha)
    ring = (w - 1) * job.gradient_size / w
    return (2.0 * ring / bandwidth + ring / inst.reduce_speed
            + inst.overhead_xi * max(1, n_servers) + job.compute_time)


def iterations_per_slot(tau: float) -> int:
    """phi = floor(1/tau) (eq. 9)."""
    return math.floor(1.0 / tau + _FLOOR_EPS)


def max_contention(inst: RarInstance) -> int:
    """Largest p any job can see: split jobs sharing one server, at most one per GPU of the largest server."""
    return inst.max_contention


def tau_bounds(inst: RarInstance, job: RarJob, explain: bool = False):
    """(tau_min, tau_max) over every placement and every contention level the job can meet.

    These are section 5's bounds (number of servers in [1, G_j], bandwidth in [b^e/f(alpha, k_max), b^i])
    restricted to what the cluster allows: a single-server placement only if a server has G_j GPUs, at most
    min(G_j, |S|) servers, at least the fewest servers holding G_j GPUs.  With ``explain`` a third item says
    which placement gives the maximum.
    """
    biggest, n_servers, cum = inst._caps
    options: list[tuple[float, str]] = []
    if job.gpus <= biggest:
        options.append((iteration_time(inst, job, 1, 0), "one server"))
    most = min(job.gpus, n_servers)
    if most >= 2:
        if job.gpus > cum[-1]:
            inst.cluster.min_servers_for(job.gpus)  # raises: the cluster is too small
        fewest = max(2, bisect.bisect_left(cum, job.gpus) + 1)  # fewest servers holding G_j (largest first)
        p = max_contention(inst)
        options.append((iteration_time(inst, job, fewest, 1), f"{fewest} servers, no contention"))
        options.append((iteration_time(inst, job, most, p), f"{most} servers, contention p={p}"))
    lo = min(t for t, _ in options)
    hi, why = max(options)
    return (lo, hi, why) if explain else (lo, hi)


# -- the file format optsched/rar-ddls@1 -----------------------------------------------------------------
def from_dict(data: Mapping[str, Any], name: str = "") -> RarInstance:
    """Read and validate ``optsched/rar-ddls@1`` (see ``docs/formats.md``)."""
    top = Fields(data, "").only("format", "name", "cluster", "horizon", "jobs")
    check_format(data, FORMAT)
    c = top.obj("cluster").only("servers", "intra_bandwidth", "inter_bandwidth", "reduce_speed", "contention_xi",
                                "overhead_xi", "degradation_alpha")
    servers = []
    for i, s in enumerate(c.array("servers")):
        sf = Fields(s, f"cluster.servers[{i}]").only("id", "gpus")
        servers.append(Server(sf.string("id"), sf.integer("gpus")))
    cluster = Cluster(tuple(servers), intra_bandwidth=c.number("intra_bandwidth"),
                      inter_bandwidth=c.number("inter_bandwidth"))
    jobs = []
    for i, j in enumerate(top.array("jobs")):
        fast = _plain_job(j)
        if fast is not None:
            jobs.append(fast)
            continue
        jid = j.get("id") if type(j) is dict or isinstance(j, Mapping) else None
        jf = Fields(j, f"jobs[{i}]", jid if isinstance(jid, str) else None).only(
            "id", "gpus", "iterations", "gradient_size", "batch_size", "forward_time_per_sample", "backward_time",
            "lambda")
        jobs.append(RarJob(
            id=jf.string("id"), gpus=jf.integer("gpus"), iterations=jf.integer("iterations"),
            gradient_size=jf.number("gradient_size"), batch_size=jf.number("batch_size"),
            forward_time_per_sample=jf.number("forward_time_per_sample"),
            backward_time=jf.number("backward_time"), lam=jf.number("lambda", 1.0)))
    return RarInstance(
        cluster=cluster, horizon=top.integer("horizon"), jobs=tuple(jobs),
        reduce_speed=c.number("reduce_speed"), contention_xi=c.number("contention_xi"),
        overhead_xi=c.number("overhead_xi"), degradation_alpha=c.number("degradation_alpha"),
        name=str(data.get("name", name) or name))


_JOB_KEYS = frozenset(("id", "gpus", "iterations", "gradient_size", "batch_size", "forward_time_per_sample",
                       "backward_time", "lambda"))


def _plain_job(j: Any) -> RarJob | None:
    """The job of a JSON object whose fields all have their plain types (int counts, int or float numbers), as the
    checked reading below would build it; None for anything else, which that reading then reports (a 100,000-job
    file is read in a third of the time)."""
    if type(j) is not dict or not _JOB_KEYS.issuperset(j):
        return None
    try:
        jid, gpus, iters = j["id"], j["gpus"], j["iterations"]
        nums = (j["gradient_size"], j["batch_size"], j["forward_time_per_sample"], j["backward_time"],
                j.get("lambda", 1.0))
    except KeyError:
        return None
    if type(jid) is not str or not jid or type(gpus) is not int or type(iters) is not int:
        return None
    for v in nums:
        if type(v) is not float and type(v) is not int:
            return None
    return RarJob(jid, gpus, iters, *nums)


def to_dict(inst: RarInstance) -> dict[str, Any]:
    """The JSON form of ``inst`` (inverse of [`from_dict`][optsched.problems.rar.from_dict])."""
    c = inst.cluster
    out: dict[str, Any] = {"format": FORMAT}
    if inst.name:
        out["name"] = inst.name
    out["cluster"] = {
        "servers": [{"id": s.id, "gpus": s.gpus} for s in c.servers],
        "intra_bandwidth": c.intra_bandwidth, "inter_bandwidth": c.inter_bandwidth,
        "reduce_speed": inst.reduce_speed, "contention_xi": inst.contention_xi,
        "overhead_xi": inst.overhead_xi, "degradation_alpha": inst.degradation_alpha,
    }
    out["horizon"] = inst.horizon
    out["jobs"] = [{"id": j.id, "gpus": j.gpus, "iterations": j.iterations, "gradient_size": j.gradient_size,
                    "batch_size": j.batch_size, "forward_time_per_sample": j.forward_time_per_sample,
                    "backward_time": j.backward_time, "lambda": j.lam} for j in inst.jobs]
    return out


PROBLEM = register_problem(Problem(
    name="rar-ddls", aliases=("rar",),
    title="RAR-DDLS (paper 000): ring-all-reduce jobs under communication contention, minimise the makespan",
    classes=(RarInstance,), format=FORMAT, reader=from_dict, writer=to_dict,
    evaluator="optsched.evaluators.rar:evaluate",
    generator="optsched.generators.rar:contended_rar_instance",
    generate_cli="optsched.commands.generate:register_rar",
    summary="optsched.commands.generate:summary_rar",
    default_algorithm="sjf-bco",
    algorithms={
        "sjf-bco": "optsched.algorithms.sjf_bco",
        "ff": "optsched.algorithms.baselines", "ls": "optsched.algorithms.baselines",
        "rand": "optsched.algorithms.baselines",
        "exact": "optsched.exact.rar_cpsat",
        "exact-interval": "optsched.exact.rar_interval",
        "brute-force": "optsched.exact.rar_brute",
    },
))
