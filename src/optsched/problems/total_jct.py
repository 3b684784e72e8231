"""Total (weighted) completion time with placement choice: paper 001's problem A, offline, with everything known.

Problem (8) of paper 001: job i is released at r_i, needs g_i GPUs, runs non-preemptively, and its duration
depends on its placement (n_i iterations times the per-iteration time alpha_i of the placement, eqs. 4-7).
Each server has a GPU capacity. Minimise sum_i w_i C_i (w_i = 1: the paper's total completion time). The model
and the brute force are in ``docs/formulations/total-jct.md``.

* [`TotalJctInstance`][optsched.problems.total_jct.TotalJctInstance]: a [`Cluster`][optsched.cluster.Cluster] and jobs,
  each with candidate placement
  *shapes* (GPUs per used server, up to server symmetry, e.g. ``(2, 1)``) and an integer duration per shape
  (time units of ``time_unit_s`` seconds); format ``optsched/total-jct@1``
  ([`from_dict`][optsched.problems.total_jct.from_dict], [`to_dict`][optsched.problems.total_jct.to_dict]).
* Where the rest lives (see [`PROBLEM`][optsched.problems.total_jct.PROBLEM]): the evaluator
  [`optsched.evaluators.total_jct`][], the generator
  and the builder from pipeline jobs [`optsched.generators.total_jct`][], the greedy heuristic
  [`optsched.algorithms.total_jct`][], CP-SAT and brute force [`optsched.exact.total_jct`][].

```pycon
>>> inst = TotalJctInstance(Cluster.homogeneous(2, 2), (
...     TotalJctJob("a", 0, 2, (Mode((2,), 4), Mode((1, 1), 3))),
...     TotalJctJob("b", 0, 2, (Mode((2,), 2),)),
...     TotalJctJob("c", 1, 1, (Mode((1,), 2),))))
>>> inst.trivial_lower_bound(), inst.horizon()
(8, 9)

```
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from numbers import Real
from typing import Any, Mapping, Sequence

from ..cluster import Cluster, Server
from ..errors import InstanceError
from ..io import Fields, check_format
from ..registry import Problem, register_problem
from ..result import Schedule, ScheduledJob

__all__ = ["FORMAT", "AsrptParameters", "Mode", "TotalJctInstance", "TotalJctJob", "concrete_placements",
           "choice_cost", "from_dict", "placement_options", "schedule_from_choice", "shapes_of", "to_dict"]

FORMAT = "optsched/total-jct@1"
Shape = tuple[int, ...]
# numbers below are typed float; at run time ints and Fractions work too (the bound tests use exact Fractions)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_real(v: Any) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool) and (not isinstance(v, float) or math.isfinite(v))


# -- problem data ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mode:
    """One candidate placement shape of a job and its duration.

    ``shape``: GPUs on each server used, non-increasing (servers are interchangeable up to capacity, so a shape
    stands for every concrete placement with those counts). ``duration``: integer time units.
    ``alpha``: the per-iteration time behind the duration (any unit, informational; used by the bounds).
    ``stages``: optional per-server per-stage counts, aligned with ``shape`` (pipeline jobs).
    """

    shape: Shape
    duration: int
    alpha: float | None = None
    stages: tuple[tuple[int, ...], ...] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(self.shape))


@dataclass(frozen=True)
class TotalJctJob:
    """A job: integer release (time units), GPU count, candidate modes, weight (default 1).

    Optional data for paper 001's bounds: ``iterations`` n_i, ``alpha_max`` alpha_i^max and ``alpha_tilde_min``
    alpha~_i^min (the same unit as the modes' ``alpha``).
    """

    id: str
    release: int
    gpus: int
    modes: tuple[Mode, ...]
    weight: int = 1
    iterations: float | None = None
    alpha_max: float | None = None
    alpha_tilde_min: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "modes", tuple(self.modes))

    @property
    def min_duration(self) -> int:
        return min(m.duration for m in self.modes)

    @property
    def max_duration(self) -> int:
        return max(m.duration for m in self.modes)

    @property
    def alpha_min(self) -> float | None:
        """Smallest per-iteration time over the modes (alpha_i^min on this cluster), if the modes carry alpha."""
        vals = [m.alpha for m in self.modes]
        return None if any(v is None for v in vals) else min(v for v in vals if v is not None)


@dataclass(frozen=True)
class TotalJctInstance:
    """Jobs with placement-dependent durations on a cluster; validated at construction.

    ```pycon
    >>> TotalJctInstance(Cluster.homogeneous(1, 2), (TotalJctJob("a", 0, 3, (Mode((3,), 1),)),))
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: jobs[0].modes[0].shape (job 'a'): does not fit the cluster's servers [2]

    ```
    """

    cluster: Cluster
    jobs: tuple[TotalJctJob, ...]
    time_unit_s: float = 1.0
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        self._validate()

    def _validate(self) -> None:
        if not isinstance(self.cluster, Cluster):
            raise InstanceError(f"must be a Cluster, got {type(self.cluster).__name__}", field="cluster")
        if not _is_real(self.time_unit_s) or self.time_unit_s <= 0:
            raise InstanceError(f"must be a positive number, got {self.time_unit_s!r}", field="time_unit_s")
        if not self.jobs:
            raise InstanceError("must list at least one job", field="jobs")
        caps = sorted(self.cluster.capacity.values(), reverse=True)
        seen: set[str] = set()
        for i, j in enumerate(self.jobs):
            where = f"jobs[{i}]"
            if not isinstance(j, TotalJctJob):
                raise InstanceError(f"must be a TotalJctJob, got {type(j).__name__}", field=where)
            if not isinstance(j.id, str) or not j.id:
                raise InstanceError(f"must be a non-empty string, got {j.id!r}", field=f"{where}.id")
            if j.id in seen:
                raise InstanceError("duplicate job id", field=f"{where}.id", job=j.id)
            seen.add(j.id)
            if not _is_int(j.release) or j.release < 0:
                raise InstanceError(f"must be an integer >= 0 (time units), got {j.release!r}",
                                    field=f"{where}.release", job=j.id)
            if not _is_int(j.gpus) or j.gpus <= 0:
                raise InstanceError(f"must be a positive integer, got {j.gpus!r}", field=f"{where}.gpus", job=j.id)
            if not _is_int(j.weight) or j.weight < 0:
                raise InstanceError(f"must be an integer >= 0, got {j.weight!r}", field=f"{where}.weight", job=j.id)
            if not j.modes:
                raise InstanceError("must list at least one mode", field=f"{where}.modes", job=j.id)
            shapes: set[Shape] = set()
            for k, m in enumerate(j.modes):
                mw = f"{where}.modes[{k}]"
                if not isinstance(m, Mode):
                    raise InstanceError(f"must be a Mode, got {type(m).__name__}", field=mw, job=j.id)
                if not m.shape or any(not _is_int(v) or v <= 0 for v in m.shape):
                    raise InstanceError(f"must be positive integers, got {m.shape!r}", field=f"{mw}.shape", job=j.id)
                if list(m.shape) != sorted(m.shape, reverse=True):
                    raise InstanceError(f"must be non-increasing, got {m.shape!r}", field=f"{mw}.shape", job=j.id)
                if sum(m.shape) != j.gpus:
                    raise InstanceError(f"places {sum(m.shape)} GPUs but the job needs {j.gpus}",
                                        field=f"{mw}.shape", job=j.id)
                if len(m.shape) > len(caps) or any(v > c for v, c in zip(m.shape, caps)):
                    raise InstanceError(f"does not fit the cluster's servers {caps}", field=f"{mw}.shape", job=j.id)
                if m.shape in shapes:
                    raise InstanceError(f"duplicate shape {m.shape!r}", field=f"{mw}.shape", job=j.id)
                shapes.add(m.shape)
                if not _is_int(m.duration) or m.duration < 0:
                    raise InstanceError(f"must be an integer >= 0 (time units), got {m.duration!r}",
                                        field=f"{mw}.duration", job=j.id)
                if m.alpha is not None and (not _is_real(m.alpha) or m.alpha <= 0):
                    raise InstanceError(f"must be a positive number, got {m.alpha!r}", field=f"{mw}.alpha", job=j.id)
            for name in ("iterations", "alpha_max", "alpha_tilde_min"):
                v = getattr(j, name)
                if v is not None and (not _is_real(v) or v < 0):
                    raise InstanceError(f"must be a number >= 0, got {v!r}", field=f"{where}.{name}", job=j.id)

    # -- derived --------------------------------------------------------------------------------------------
    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    def job(self, job_id: str) -> TotalJctJob:
        for j in self.jobs:
            if j.id == job_id:
                return j
        raise KeyError(job_id)

    def trivial_lower_bound(self) -> int:
        """sum_i w_i (r_i + min duration_i): every job starts no earlier than its release."""
        return sum(j.weight * (j.release + j.min_duration) for j in self.jobs)

    def horizon(self) -> int:
        """max_i r_i + sum_i max duration_i: no optimal schedule needs a later completion (see the formulation:
        after the last release, some job runs at every instant before the last completion)."""
        return max(j.release for j in self.jobs) + sum(j.max_duration for j in self.jobs)

    def asrpt_parameters(self, predicted: Mapping[str, float] | None = None, tau: float = 0) -> AsrptParameters:
        """Paper 001's bound parameters ([`AsrptParameters`][optsched.problems.total_jct.AsrptParameters], used by
        [`optsched.bounds`][]) of this instance.

        Needs ``iterations``, ``alpha_max``, ``alpha_tilde_min`` on every job and ``alpha`` on every mode;
        alpha_i^min is the smallest mode alpha (the fastest placement realisable on this cluster).
        ``predicted``: job id -> n~_i (default: perfect prediction). ``alpha_placed_max`` is the largest mode alpha.
        """
        for j in self.jobs:
            if j.iterations is None or j.alpha_max is None or j.alpha_tilde_min is None or j.alpha_min is None:
                raise InstanceError("needs iterations, alpha_max, alpha_tilde_min and every mode's alpha",
                                    field="jobs", job=j.id)
        pred = {j.id: j.iterations for j in self.jobs} if predicted is None else predicted
        return AsrptParameters(
            total_gpus=self.cluster.total_gpus, gpus=tuple(j.gpus for j in self.jobs),
            iterations=tuple(j.iterations for j in self.jobs), predicted=tuple(pred[j.id] for j in self.jobs),
            alpha_min=tuple(j.alpha_min for j in self.jobs),
            alpha_tilde_min=tuple(j.alpha_tilde_min for j in self.jobs),
            alpha_max=tuple(j.alpha_max for j in self.jobs),
            alpha_placed_max=tuple(max(m.alpha for m in j.modes if m.alpha is not None) for j in self.jobs), tau=tau)


@dataclass(frozen=True)
class AsrptParameters:
    """Per-job data of paper 001's bounds, one entry per job in the same order.

    ``alpha_min``: the true alpha_i^min (smallest per-iteration time over the placements the cluster admits);
    ``alpha_tilde_min``: Heavy-Edge's estimate alpha~_i^min; ``alpha_max``: alpha_i^max (all replicas on
    distinct servers); ``alpha_placed_max`` (optional): the largest alpha_i(x) over the admissible placements,
    used only to check Lemma 2's precondition alpha_i(x) <= alpha_i^max. ``predicted``: n~_i; ``tau``: the
    delay factor.
    """

    total_gpus: int
    gpus: tuple[int, ...]
    iterations: tuple
    predicted: tuple
    alpha_min: tuple
    alpha_tilde_min: tuple
    alpha_max: tuple
    alpha_placed_max: tuple | None = None
    tau: Any = 0

    @property
    def n_jobs(self) -> int:
        return len(self.gpus)

    @property
    def g_max(self) -> int:
        """g^max = max_i g_i."""
        return max(self.gpus)

    @property
    def rho(self):
        """rho = max_i alpha_i^max / alpha_i^min (Lemma 1)."""
        return max(_div(a, b) for a, b in zip(self.alpha_max, self.alpha_min))

    @property
    def rho_bar(self):
        """rho-bar = alpha^max / alpha^min = max_i alpha_i^max / min_i alpha_i^min (Theorem 1)."""
        return _div(max(self.alpha_max), min(self.alpha_min))

    @property
    def eps(self):
        """epsilon = sum_i |n_i - n~_i| (eq. 9)."""
        return sum((abs(n - p) for n, p in zip(self.iterations, self.predicted)), 0)

    @property
    def eps_bar(self):
        """epsilon-bar = epsilon / I (eq. 9)."""
        return _div(self.eps, self.n_jobs)

    def a1_sizes(self, predicted: bool = False) -> tuple:
        """Virtual sizes (g_i/G) n_i alpha~_i^min (instance A1) or with n~_i (A~1)."""
        ns = self.predicted if predicted else self.iterations
        return tuple(_div(g * n * a, self.total_gpus) for g, n, a in zip(self.gpus, ns, self.alpha_tilde_min))


def _div(a, b):
    """a / b, exact for ints and Fractions."""
    if isinstance(a, int) and isinstance(b, int):
        return Fraction(a, b)
    return a / b


# -- placements ---------------------------------------------------------------------------------------------
def shapes_of(gpus: int, capacities: Sequence[int]) -> list[Shape]:
    """Every shape (non-increasing GPUs per used server) of ``gpus`` GPUs that fits servers ``capacities``.

    ```pycon
    >>> shapes_of(4, [4, 4])
    [(4,), (3, 1), (2, 2)]
    >>> shapes_of(3, [2, 1, 1])
    [(2, 1), (1, 1, 1)]

    ```
    """
    caps = sorted(capacities, reverse=True)
    out: list[Shape] = []

    def rec(left: int, largest: int, prefix: list[int]) -> None:
        if left == 0:
            out.append(tuple(prefix))
            return
        k = len(prefix)
        if k == len(caps):
            return
        for v in range(min(left, largest, caps[k]), 0, -1):
            prefix.append(v)
            rec(left - v, v, prefix)
            prefix.pop()

    rec(gpus, gpus, [])
    return out


def concrete_placements(shape: Shape, capacities: Sequence[int]) -> list[tuple[int, ...]]:
    """Every distinct vector u (GPUs per server, in the cluster's server order) whose non-zero entries are
    ``shape`` and with u_m <= capacity_m.

    ```pycon
    >>> concrete_placements((2, 1), [2, 2, 2])
    [(2, 1, 0), (2, 0, 1), (1, 2, 0), (1, 0, 2), (0, 2, 1), (0, 1, 2)]

    ```
    """
    M = len(capacities)
    padded = tuple(shape) + (0,) * (M - len(shape))
    seen: set[tuple[int, ...]] = set()
    out = []
    for perm in itertools.permutations(padded):
        if perm in seen:
            continue
        seen.add(perm)
        if all(u <= c for u, c in zip(perm, capacities)):
            out.append(perm)
    return sorted(out, reverse=True)


def placement_options(inst: TotalJctInstance, symmetry_job: int | None = None
                      ) -> list[list[tuple[int, tuple[int, ...]]]]:
    """Per job, the list of (mode index, concrete vector). For ``symmetry_job``, only vectors that are
    non-increasing within each class of equal-capacity servers (a valid symmetry break for ONE job)."""
    caps = [s.gpus for s in inst.cluster.servers]
    classes: dict[int, list[int]] = {}
    for m, c in enumerate(caps):
        classes.setdefault(c, []).append(m)
    out = []
    for i, j in enumerate(inst.jobs):
        opts = []
        for k, mode in enumerate(j.modes):
            for u in concrete_placements(mode.shape, caps):
                if i == symmetry_job and any(
                        any(u[a] < u[b] for a, b in zip(idx, idx[1:])) for idx in classes.values()):
                    continue
                opts.append((k, u))
        out.append(opts)
    return out


def choice_cost(inst: TotalJctInstance, choice: Mapping[str, tuple[int, tuple[int, ...], int]]) -> int:
    """sum_i w_i C_i of a (mode index, vector, start) per job, e.g. the greedy's (feasibility not checked).

    ```pycon
    >>> inst = TotalJctInstance(Cluster.homogeneous(1, 2), (TotalJctJob("a", 0, 1, (Mode((1,), 3),), 2),))
    >>> choice_cost(inst, {"a": (0, (1,), 1)})
    8

    ```
    """
    return sum(j.weight * (choice[j.id][2] + j.modes[choice[j.id][0]].duration) for j in inst.jobs)


def schedule_from_choice(inst: TotalJctInstance, choice: Mapping[str, tuple[int, tuple[int, ...], int]], algorithm: str
              ) -> Schedule:
    """(mode index, vector, start) per job -> Schedule with completions and per-stage counts where known."""
    sids = inst.cluster.server_ids
    rows = []
    for j in inst.jobs:
        k, u, s = choice[j.id]
        mode = j.modes[k]
        placement = {sids[m]: n for m, n in enumerate(u) if n}
        stages = None
        if mode.stages is not None:
            # the shape's columns go to the servers in decreasing GPU count (ties: server order)
            order = sorted((m for m in range(len(u)) if u[m]), key=lambda m: -u[m])
            stages = {sids[m]: tuple(mode.stages[r]) for r, m in enumerate(order)}
        rows.append(ScheduledJob(j.id, s, placement, s + mode.duration, stages))
    return Schedule(tuple(rows), algorithm, inst.name)


# -- the file format -----------------------------------------------------------------------------------------
def to_dict(inst: TotalJctInstance) -> dict:
    """The JSON form (format ``optsched/total-jct@1``, ``docs/formats.md``) of an instance."""
    out: dict[str, Any] = {"format": FORMAT}
    if inst.name:
        out["name"] = inst.name
    out["time_unit_s"] = inst.time_unit_s
    out["cluster"] = {"servers": [{"id": s.id, "gpus": s.gpus} for s in inst.cluster.servers]}
    rows = []
    for j in inst.jobs:
        row: dict[str, Any] = {"id": j.id, "release": j.release, "gpus": j.gpus}
        if j.weight != 1:
            row["weight"] = j.weight
        for name in ("iterations", "alpha_max", "alpha_tilde_min"):
            if getattr(j, name) is not None:
                row[name] = getattr(j, name)
        modes = []
        for m in j.modes:
            md: dict[str, Any] = {"shape": list(m.shape), "duration": m.duration}
            if m.alpha is not None:
                md["alpha"] = m.alpha
            if m.stages is not None:
                md["stages"] = [list(c) for c in m.stages]
            modes.append(md)
        row["modes"] = modes
        rows.append(row)
    out["jobs"] = rows
    return out


def from_dict(data: Mapping[str, Any], name: str = "") -> TotalJctInstance:
    """Read the JSON form; every error names the field path and the job.

    ```pycon
    >>> from_dict({"format": FORMAT, "cluster": {"servers": [{"id": "s0", "gpus": 2}]},
    ...            "jobs": [{"id": "a", "release": 0, "gpus": 2, "modes": [{"shape": [2]}]}]})
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: jobs[0].modes[0].duration (job 'a'): missing field

    ```
    """
    top = Fields(data, "").only("format", "name", "time_unit_s", "cluster", "jobs")
    check_format(data, FORMAT)
    servers = []
    for i, s in enumerate(top.obj("cluster").only("servers").array("servers")):
        sf = Fields(s, f"cluster.servers[{i}]").only("id", "gpus")
        servers.append(Server(sf.string("id"), sf.integer("gpus")))
    jobs = []
    for i, j in enumerate(top.array("jobs")):
        jid = j.get("id") if isinstance(j, Mapping) else None
        jf = Fields(j, f"jobs[{i}]", jid if isinstance(jid, str) else None).only(
            "id", "release", "gpus", "weight", "iterations", "alpha_max", "alpha_tilde_min", "modes")
        modes = []
        for k, m in enumerate(jf.array("modes")):
            mf = Fields(m, f"{jf.where}.modes[{k}]", jf.job).only("shape", "duration", "alpha", "stages")
            shape = mf.array("shape")
            for v in shape:
                if isinstance(v, bool) or not isinstance(v, int):
                    raise InstanceError(f"must be positive integers, got {shape!r}", field=mf.path("shape"),
                                        job=jf.job)
            stages = None
            if "stages" in m:
                cols = mf.array("stages")
                if len(cols) != len(shape) or any(not isinstance(c, list) or not all(_is_int(x) for x in c)
                                                  for c in cols):
                    raise InstanceError("must list one array of integer per-stage counts per server of the shape",
                                        field=mf.path("stages"), job=jf.job)
                stages = tuple(tuple(c) for c in cols)
            alpha = mf.number("alpha") if "alpha" in m else None
            modes.append(Mode(tuple(shape), mf.integer("duration"), alpha, stages))
        opt = {k: jf.number(k) for k in ("iterations", "alpha_max", "alpha_tilde_min") if k in j}
        jobs.append(TotalJctJob(jf.string("id"), jf.integer("release"), jf.integer("gpus"), tuple(modes),
                                jf.integer("weight", 1), **opt))
    return TotalJctInstance(Cluster(tuple(servers)), tuple(jobs), top.number("time_unit_s", 1.0),
                            str(data.get("name", name) or name))


PROBLEM = register_problem(Problem(
    name="total-jct",
    title="paper 001's problem A offline: placement-dependent durations, minimise the total weighted completion",
    classes=(TotalJctInstance,), format=FORMAT, reader=from_dict, writer=to_dict,
    evaluator="optsched.evaluators.total_jct:evaluate",
    generator="optsched.generators.total_jct:random_total_jct_instance",
    generate_cli="optsched.commands.generate:register_total_jct",
    summary="optsched.commands.generate:summary_total_jct",
    default_algorithm="total-jct-bnb",
    algorithms={
        "total-jct-greedy": "optsched.algorithms.total_jct",
        "total-jct-cpsat": "optsched.exact.total_jct",
        "total-jct-bnb": "optsched.exact.total_jct_bnb",
        "total-jct-lns": "optsched.exact.total_jct_lns",
        "total-jct-brute": "optsched.exact.total_jct",
    },
))
