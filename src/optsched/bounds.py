"""Paper 000's guarantees as functions of the instance, and certified lower bounds on the optimal makespan.

Everything here is computed from the same per-iteration model the evaluator uses ([`optsched.perf.rar`][]),
so a bound and a score never disagree on a rounding. How each quantity is computed, and which of the paper's
statements hold for the model as written, is documented in ``docs/algorithms/sjf-bco.md`` (section
"Guarantees verified"); the makespan lower bound is proved in ``docs/formulations/rar-feasibility-milp.md``.

Placement classes and contention levels
    tau_j (eq. 8) depends on a placement only through its number of servers n, and on the other jobs only
    through the contention p (eq. 6). A job can use n = 1 server iff some server has G_j GPUs, and
    n in [max(2, fewest servers holding G_j GPUs), min(G_j, |S|)] servers otherwise; a split job (n >= 2)
    meets p in 1 .. ``max_contention(inst)`` (it counts itself), a single-server job has p = 0.
    [`phi_table`][optsched.bounds.phi_table] tabulates floor(1/tau) over these (n, p) pairs.

```pycon
>>> from optsched.generators.rar import tiny_rar_example
>>> inst = tiny_rar_example()
>>> placement_classes(inst, inst.jobs[0])
(1, 2)
>>> duration_range(inst, inst.jobs[0])       # (fewest, most) slots job j0 can take
(5, 7)
>>> n_g(inst), makespan_lower_bound(inst) <= 6
(4, True)

```
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence

from .algorithms import sjf_bco
from .perf.rar import iteration_time, iterations_per_slot, max_contention
from .problems.rar import RarInstance, RarJob
from .problems.total_jct import AsrptParameters, _div


# -- placement classes, phi tables, durations --------------------------------------------------------------
def placement_classes(inst: RarInstance, job: RarJob) -> tuple[int, ...]:
    """The numbers of servers n a placement of ``job`` can span on ``inst``'s cluster, ascending."""
    caps = sorted((s.gpus for s in inst.cluster.servers), reverse=True)
    out = []
    if job.gpus <= caps[0]:
        out.append(1)
    fewest = max(2, inst.cluster.min_servers_for(job.gpus))
    out.extend(range(fewest, min(job.gpus, len(caps)) + 1))
    return tuple(out)


def contention_levels(inst: RarInstance, n_servers: int) -> range:
    """The contention values p a job on ``n_servers`` servers can meet: 0 alone on one server, else 1..P."""
    return range(0, 1) if n_servers <= 1 else range(1, max_contention(inst) + 1)


def phi_table(inst: RarInstance, job: RarJob) -> dict[int, tuple[int, ...]]:
    """n -> (phi at p = 0, 1, ..., P): iterations per slot, floor(1/tau), exactly as the evaluator computes them.

    For n = 1 the row is constant (a job on one server has no contention); for n >= 2 the entry at p = 0 equals
    the one at p = 1 (k = max(1, xi_1 p) gives the full share either way) so that a table lookup with p = 0 is
    harmless.
    """
    return _phi_table(inst, job)


@lru_cache(maxsize=4096)
def _phi_table(inst: RarInstance, job: RarJob) -> dict[int, tuple[int, ...]]:
    top = max_contention(inst)
    table = {}
    for n in placement_classes(inst, job):
        row = [iterations_per_slot(iteration_time(inst, job, n, max(p, 1 if n > 1 else 0)))
               for p in range(top + 1)]
        table[n] = tuple(row)
    return table


def phi_range(inst: RarInstance, job: RarJob) -> tuple[int, int]:
    """(fewest, most) iterations per slot ``job`` can make under any placement class and contention level."""
    values = [phi for n, row in phi_table(inst, job).items() for p, phi in enumerate(row)
              if p in contention_levels(inst, n)]
    return min(values), max(values)


def duration_range(inst: RarInstance, job: RarJob) -> tuple[int, int]:
    """(d_min, d_max): the fewest and most slots ``job`` can run, ceil(F/phi_max) and ceil(F/phi_min).

    Every execution of the job takes between these many slots whatever the placement and the co-located jobs,
    since it makes between phi_min and phi_max iterations in every slot it runs.
    """
    lo, hi = phi_range(inst, job)
    return -(-job.iterations // hi), -(-job.iterations // lo)


def p_sensitive(inst: RarInstance, job: RarJob) -> bool:
    """Whether contention can change ``job``'s iterations per slot: Phi_j(n, p) varies with p for some split
    class n >= 2 (``docs/formulations/rar-ddls-cpsat.md``, "Contention only where it can bind")."""
    return any(len(set(row)) > 1 for n, row in phi_table(inst, job).items() if n >= 2)


def fastest_slots(inst: RarInstance, job: RarJob) -> dict[int, int]:
    """n -> dfast_j(n) = ceil(F_j / max_p Phi_j(n, p)): the fewest slots ``job`` can run on n servers. For n >= 2
    the maximum is Phi_j(n, 1) (phi is non-increasing in p, and p = 0 equals p = 1 in the table), i.e. the
    job's exact duration when it meets no contention.

    ```pycon
    >>> from optsched.generators.rar import tiny_rar_example
    >>> inst = tiny_rar_example()
    >>> fastest_slots(inst, inst.jobs[0])
    {1: 5, 2: 7}

    ```
    """
    return {n: -(-job.iterations // max(row)) for n, row in phi_table(inst, job).items()}


# -- certified makespan lower bounds ----------------------------------------------------------------------
def n_g(inst: RarInstance) -> int:
    """n_g = max_j G_j (Theorem 1)."""
    return inst.max_job_gpus


def makespan_lower_bound(inst: RarInstance) -> int:
    """A certified lower bound on the optimal makespan T*, in closed form (no solver).

    max( max_j d_min_j ,  ceil( sum_j G_j d_min_j / N ) ,  max_k ceil( sum_{j: (k+1) G_j > N} d_min_j / k ) ):
    every job runs at least d_min_j slots on G_j GPUs, no slot holds more than N GPU-slots, and no slot holds
    k + 1 jobs of more than N/(k+1) GPUs each. Proof: ``docs/formulations/rar-feasibility-milp.md``, section "A
    certified makespan lower bound".
    """
    return _closed_form_lb(inst)


@lru_cache(maxsize=1024)
def _closed_form_lb(inst: RarInstance) -> int:
    n_gpus = inst.cluster.total_gpus
    dmin = [duration_range(inst, j)[0] for j in inst.jobs]
    lb = max(dmin)
    lb = max(lb, -(-sum(j.gpus * d for j, d in zip(inst.jobs, dmin)) // n_gpus))
    # at most k jobs of more than N/(k+1) GPUs run in any slot (k = 1: they run one after another). The jobs
    # with (k+1) G_j > N are a prefix of the jobs by decreasing G_j: prefix sums make this O(n log n).
    by_size = sorted(zip((j.gpus for j in inst.jobs), dmin), reverse=True)
    acc, prefix = 0, [0]
    for _, d in by_size:
        acc += d
        prefix.append(acc)
    count = 0
    for k in range(1, inst.n_jobs):              # count = #jobs with (k+1) G_j > N grows with k
        while count < len(by_size) and (k + 1) * by_size[count][0] > n_gpus:
            count += 1
        if count > k:
            lb = max(lb, -(-prefix[count] // k))
    return int(lb)


def lp_closed_form(gpus: Sequence[int], weights: Sequence[float], n_gpus: int) -> float:
    """The LP relaxation's value in closed form: max(sum_j G_j w_j / N, max_j w_j, max pair w_j + w_k).

    (Proof in the formulation: spreading every job uniformly, x_jg = G_j / N, meets all constraints with
    every load equal to the average; no LP solution does better than the average load or the cuts.) The pair
    term, over pairs with G_j + G_k > N, is found in O(n log n): for each j, the partners are the jobs with
    G_k > N - G_j, a prefix of the jobs by decreasing G, of which the two heaviest are kept.

    ```pycon
    >>> lp_closed_form([3, 3, 1], [5.0, 4.0, 9.0], 4)
    9.0
    >>> lp_closed_form([3, 3, 1], [5.0, 4.0, 2.0], 4)
    9.0

    ```
    """
    v = max(sum(g * w for g, w in zip(gpus, weights)) / n_gpus, max(weights))
    order = sorted(range(len(gpus)), key=lambda i: -gpus[i])
    top: list[tuple[float, int]] = []   # the two heaviest (weight, job) of the prefix, heaviest first
    best_prefix: list[list[tuple[float, int]]] = []
    for i in order:
        top = sorted(top + [(weights[i], i)], reverse=True)[:2]
        best_prefix.append(top)
    sizes_desc = [gpus[i] for i in order]
    for j in range(len(gpus)):
        # partners: G_k > N - G_j, i.e. the first c jobs of ``order``
        lo, hi = 0, len(order)
        while lo < hi:
            mid = (lo + hi) // 2
            if sizes_desc[mid] > n_gpus - gpus[j]:
                lo = mid + 1
            else:
                hi = mid
        if lo == 0:
            continue
        for w, k in best_prefix[lo - 1]:
            if k != j:
                v = max(v, weights[j] + w)
                break
    return v


def lower_bound(inst: RarInstance) -> int:
    """The best certified lower bound on the optimal makespan we can compute cheaply.

    The closed-form bound of [`makespan_lower_bound`][optsched.bounds.makespan_lower_bound], raised by the LP relaxation
    of the min max-load
    problem with the certified weights d_min_j, whose value [`lp_closed_form`][optsched.bounds.lp_closed_form] gives
    without a solver
    (``optsched.exact.rar_milp.lp_lower_bound`` solves the same LP with HiGHS; a test checks they agree).
    Valid for every instance; used by the ``exact`` solver as ``Result.lower_bound``.
    """
    dmin = [float(duration_range(inst, j)[0]) for j in inst.jobs]
    lp = lp_closed_form([j.gpus for j in inst.jobs], dmin, inst.cluster.total_gpus)
    return int(max(makespan_lower_bound(inst), math.ceil(lp - 1e-9)))


# -- the paper's guarantees (section 6) ------------------------------------------------------------------
@dataclass(frozen=True)
class Estimates:
    """SJF-BCO's estimated execution times rho-hat_j (slots) and the bracket constants u >= 1 >= l."""

    rho_hat: Mapping[str, float]
    u: float
    l: float  # noqa: E741 - the paper's name


def estimates(inst: RarInstance) -> Estimates:
    """SJF-BCO's estimates (``optsched.algorithms.sjf_bco.estimates``), normalised to
    [`Estimates`][optsched.bounds.Estimates]."""
    raw = sjf_bco.estimates(inst)
    if isinstance(raw, tuple):
        rho, u, l = raw  # noqa: E741
    else:
        rho = next(getattr(raw, a) for a in ("rho_hat", "rho", "estimates") if hasattr(raw, a))
        u, l = raw.u, raw.l  # noqa: E741
    if not isinstance(rho, Mapping):
        rho = {j.id: r for j, r in zip(inst.jobs, rho)}
    return Estimates({k: float(v) for k, v in rho.items()}, float(u), float(l))


def phi_ratio(inst: RarInstance) -> float:
    """phi = max_j max_{k1,k2} rho_j(y^k1) / rho_j(y^k2) (Lemma 4), with rho in slots.

    A job's execution time under any schedule lies in [d_min_j, d_max_j]
    ([`duration_range`][optsched.bounds.duration_range]): it makes
    between phi_min and phi_max iterations in every slot. Both ends are the times of a run at one constant
    (placement class, contention level): d_min alone on its fastest class, d_max on its slowest class at the
    largest contention level ``max_contention(inst)``. So phi = max_j d_max_j / d_min_j, computed exactly over
    the placement classes and contention levels the model admits. (The largest contention level may need
    more co-runners than the instance has; phi is then an upper bound on the ratio over this instance's
    feasible schedules, which only makes Theorem 5's ratio larger, i.e. easier to meet.)
    """
    return max(hi / lo for lo, hi in (duration_range(inst, j) for j in inst.jobs))


def theorem5_ratio(inst: RarInstance, est: Estimates | None = None) -> float:
    """Theorem 5's approximation ratio n_g * phi * (u / l)."""
    est = est or estimates(inst)
    return n_g(inst) * phi_ratio(inst) * est.u / est.l


def lemma3_bound(inst: RarInstance, max_estimated_load: float) -> float:
    """Lemma 3: SJF-BCO's makespan <= n_g * W-hat_max (the largest estimated GPU load it returns)."""
    return n_g(inst) * max_estimated_load


def lemma4_bound(inst: RarInstance, theta_star_u: float, est: Estimates | None = None) -> float:
    """Lemma 4: theta~_u <= phi * (u / l) * theta*_u, theta*_u the optimum of (14)-(16)
    (``optsched.exact.rar_milp.feasibility_milp(inst, weights="estimated")``)."""
    est = est or estimates(inst)
    return phi_ratio(inst) * est.u / est.l * theta_star_u


def estimate_bracket_violations(inst: RarInstance, est: Estimates | None = None) -> list[str]:
    """Jobs whose estimate breaks the paper's bracket l * rho <= rho-hat <= u * rho for some achievable
    execution time rho in [d_min_j, d_max_j] (the bracket Lemma 4 and Theorem 5's step theta*_u <= T* use)."""
    est = est or estimates(inst)
    bad = []
    for j in inst.jobs:
        lo, hi = duration_range(inst, j)
        r = est.rho_hat[j.id]
        if not (est.l * hi <= r + 1e-9 and r <= est.u * lo + 1e-9):
            bad.append(j.id)
    return bad


# ==========================================================================================================
# Paper 001 (A-SRPT, Luo et al.): Lemmas 1-3 and Theorem 1 as functions of the instance parameters
# ==========================================================================================================
# Notation of the paper's section IV-D (digest 001 section 4). Which statements hold, the preconditions each
# proof step uses, and the counterexamples without them: docs/algorithms/a-srpt.md, "Theory verified".
# Arithmetic is generic: int / Fraction inputs give exact results (the property tests use Fractions).

def _le(a, b) -> bool:
    """a <= b, exactly for ints and Fractions; for floats up to a relative 1e-12, so that one rounding of the
    same time computed two ways (e.g. alpha_min and alpha~_min of a one-server job) is not a violation."""
    if isinstance(a, float) or isinstance(b, float):
        return a <= b + 1e-12 * max(1.0, abs(b))
    return a <= b


def asrpt_preconditions(p: AsrptParameters) -> list[str]:
    """The preconditions of paper 001's bounds that ``p`` violates (empty: all hold).

    * ``G > g_max``: Lemma 2 and Theorem 1 divide by G - g^max (at least G - g^max GPUs are busy while the
      head of the queue is blocked).
    * ``alpha_min <= alpha_tilde_min <= alpha_max`` for every job: Lemma 1 uses alpha~_i^min <= rho alpha_i^min,
      Lemma 3's last step alpha~_i^min <= alpha^max. In the pipeline model this holds when
      B_intra >= B_inter / g ([`optsched.perf.pipeline.bandwidth_precondition`][], digest 001 point 10).
    * ``alpha_placed_max <= alpha_max`` (when given): Lemma 2 bounds every run by n_i alpha_i^max.
    * ``iterations >= 1``: the lower bound alpha^min I(I+1)/(2G) of Theorem 1's proof.

    ```pycon
    >>> p = AsrptParameters(8, (2, 8), (3, 1), (3, 1), (1, 1), (1, 2), (2, 2))
    >>> asrpt_preconditions(p)
    ['G > g_max: G = 8, g_max = 8']

    ```
    """
    bad = []
    if not p.total_gpus > p.g_max:
        bad.append(f"G > g_max: G = {p.total_gpus}, g_max = {p.g_max}")
    for i, (lo, mid, hi) in enumerate(zip(p.alpha_min, p.alpha_tilde_min, p.alpha_max)):
        if not (_le(lo, mid) and _le(mid, hi)):
            bad.append(f"alpha_min <= alpha_tilde_min <= alpha_max: job {i}: {lo} <= {mid} <= {hi} fails")
    if p.alpha_placed_max is not None:
        for i, (a, hi) in enumerate(zip(p.alpha_placed_max, p.alpha_max)):
            if a > hi:
                bad.append(f"alpha_i(x) <= alpha_max: job {i}: a placement has alpha {a} > alpha_max {hi}")
    if any(n < 1 for n in p.iterations):
        bad.append("iterations >= 1 for every job")
    return bad


def _ok(p: AsrptParameters, *needed: str) -> bool:
    return not any(b.startswith(needed) for b in asrpt_preconditions(p))


def asrpt_lower_bound(p: AsrptParameters):
    """alpha^min I(I+1) / (2G) (paper l. 225): a lower bound on OPT_{A1} and on OPT_A (and on any schedule of A,
    by the work argument: the k-th completion is at least k alpha^min / G). ``None`` unless every n_i >= 1.

    ```pycon
    >>> from fractions import Fraction
    >>> asrpt_lower_bound(AsrptParameters(4, (1, 1), (1, 1), (1, 1), (3, 3), (3, 3), (3, 3)))
    Fraction(9, 4)

    ```
    """
    if any(n < 1 for n in p.iterations):
        return None
    return _div(min(p.alpha_min) * p.n_jobs * (p.n_jobs + 1), 2 * p.total_gpus)


def asrpt_lemma1_bound(p: AsrptParameters, opt_a):
    """Lemma 1: OPT_{A1} <= rho OPT_A. Returns rho * opt_a, or ``None`` when alpha~_i^min <= alpha_i^max
    (the proof's alpha~_i^min <= rho alpha_i^min) fails for some job."""
    if not _ok(p, "alpha_min <= alpha_tilde_min"):
        return None
    return p.rho * opt_a


def asrpt_lemma3_bounds(p: AsrptParameters, opt_a1):
    """Lemma 3 (App. C, eqs. 13-15): OPT_{A~1} <= ``exact`` = OPT_{A1} + I sum_O delta_i - sum_U delta_i
    <= ``paper`` = OPT_{A1} + I g^max alpha^max eps / G, with delta_i = (g_i/G) |n_i - n~_i| alpha~_i^min.

    Returns ``(exact, paper)``; ``paper`` is ``None`` when alpha~_i^min <= alpha^max fails (the last step)."""
    over = sum((_div(g * (q - n) * a, p.total_gpus) for g, n, q, a in
                zip(p.gpus, p.iterations, p.predicted, p.alpha_tilde_min) if q > n), 0)
    under = sum((_div(g * (n - q) * a, p.total_gpus) for g, n, q, a in
                 zip(p.gpus, p.iterations, p.predicted, p.alpha_tilde_min) if q < n), 0)
    exact = opt_a1 + p.n_jobs * over - under
    if max(p.alpha_tilde_min) > max(p.alpha_max):
        return exact, None
    return exact, opt_a1 + _div(p.n_jobs * p.g_max * max(p.alpha_max) * p.eps, p.total_gpus)


def asrpt_lemma2_bound(p: AsrptParameters, opt_pred_a1, opt_a):
    """Lemma 2: Gamma_A <= (1 + tau + rho G/(G - g^max)) OPT_{A~1} + I g^max alpha^max eps / (G - g^max)
    + rho OPT_A. ``None`` unless G > g^max, alpha~ <= alpha^max and alpha_i(x) <= alpha_i^max hold."""
    if asrpt_preconditions(p) and not all(b.startswith("iterations") for b in asrpt_preconditions(p)):
        return None
    G, gm = p.total_gpus, p.g_max
    return ((1 + p.tau + _div(p.rho * G, G - gm)) * opt_pred_a1
            + _div(p.n_jobs * gm * max(p.alpha_max) * p.eps, G - gm) + p.rho * opt_a)


def asrpt_theorem1_additive(p: AsrptParameters, opt_a):
    """Theorem 1 before dividing (paper l. 222-223): Gamma_A <= (2 + tau + rho G/(G - g^max)) rho OPT_A
    + I g^max alpha^max [(1 + tau)/G + (1 + rho)/(G - g^max)] eps. ``None`` if a precondition fails."""
    if asrpt_preconditions(p):
        return None
    G, gm, rho = p.total_gpus, p.g_max, p.rho
    return ((2 + p.tau + _div(rho * G, G - gm)) * rho * opt_a
            + p.n_jobs * gm * max(p.alpha_max) * (_div(1 + p.tau, G) + _div(1 + rho, G - gm)) * p.eps)


def asrpt_theorem1_ratio(p: AsrptParameters):
    """Theorem 1's competitive ratio (paper l. 212-214, 227):

        Gamma_A / OPT_A < (2 + tau + rho G/(G - g^max)) rho
                          + 2 rho g^max rho-bar (1 + tau + (1 + rho) G/(G - g^max)) eps-bar

    ``None`` when a precondition of [`asrpt_preconditions`][optsched.bounds.asrpt_preconditions] fails.

    ```pycon
    >>> p = AsrptParameters(8, (2, 4), (3, 1), (3, 1), (1, 1), (1, 2), (2, 2))
    >>> asrpt_theorem1_ratio(p)       # rho = 2, eps = 0: (2 + 0 + 2*8/4) * 2
    Fraction(12, 1)

    ```
    """
    if asrpt_preconditions(p):
        return None
    G, gm, rho = p.total_gpus, p.g_max, p.rho
    return ((2 + p.tau + _div(rho * G, G - gm)) * rho
            + 2 * rho * gm * p.rho_bar * (1 + p.tau + _div((1 + rho) * G, G - gm)) * p.eps_bar)
