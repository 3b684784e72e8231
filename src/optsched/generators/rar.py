"""RAR-DDLS instance generators (paper 000) and the paper's evaluation preset (section 7)."""

from __future__ import annotations

import math

import numpy as np

from ..cluster import Cluster, Server
from ..errors import InstanceError
from ..limits import require_memory
from ..problems.rar import RarInstance, RarJob, contention_k, f_degradation, max_contention, tau_bounds


def tiny_rar_example() -> RarInstance:
    """Two jobs on two 4-GPU servers: the smallest instance with contention worth looking at.

    ```pycon
    >>> tiny_rar_example().max_job_gpus
    4

    ```
    """
    cluster = Cluster((Server("s0", 4), Server("s1", 4)), intra_bandwidth=50.0, inter_bandwidth=5.0)
    jobs = (
        RarJob("j0", gpus=4, iterations=120, gradient_size=0.05, batch_size=32,
               forward_time_per_sample=0.0005, backward_time=0.02),
        RarJob("j1", gpus=2, iterations=80, gradient_size=0.02, batch_size=16,
               forward_time_per_sample=0.0005, backward_time=0.015),
    )
    return RarInstance(cluster, horizon=60, jobs=jobs, reduce_speed=100.0, contention_xi=0.5,
                       overhead_xi=0.002, degradation_alpha=0.2, name="tiny-rar-example")


# -- paper 000, section 7 ------------------------------------------------------------------------------------
#: Job sizes (GPUs) and counts of the paper's 160-job workload (section 7, scaled-down Microsoft trace).
MOBIHOC22_JOB_MIX: tuple[tuple[int, int], ...] = ((1, 80), (2, 14), (4, 26), (8, 30), (16, 8), (32, 2))
MOBIHOC22_SERVER_GPUS: tuple[int, ...] = (4, 8, 16, 32)

# Cluster constants of the generated RAR instances (data units per slot); only ratios matter.
_INTRA_BW, _INTER_BW, _REDUCE_SPEED, _ALPHA = 100.0, 10.0, 1000.0, 0.2


JOB_BYTES = 2_000  # a job in the instance, its file and the heuristics' per-job arrays (estimate)
SERVER_BYTES = 400  # as optsched.cluster's


def _int_at_least(v: object, name: str, low: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
        raise InstanceError(f"must be an integer >= {low}, got {v!r:.60}", field=name)
    return int(v)


def _check_sizes(jobs: object, servers: object, seed: object, iterations: object, tau_range: object,
                 horizon: object) -> tuple[int, int]:
    """The parameters both generators share, checked before anything is drawn (sizes against memory)."""
    jobs, servers = _int_at_least(jobs, "jobs"), _int_at_least(servers, "servers")
    _int_at_least(seed, "seed", 0)
    _int_at_least(horizon, "horizon")
    require_memory(jobs, JOB_BYTES, "jobs", field="jobs")
    require_memory(servers, SERVER_BYTES, "servers", field="servers")
    if not isinstance(iterations, (tuple, list)) or len(iterations) != 2 or \
            not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in iterations) or \
            not 1 <= iterations[0] <= iterations[1]:
        raise InstanceError(f"must be a pair (low, high) of integers with 1 <= low <= high, got {iterations!r:.60}",
                            field="iterations")
    if not isinstance(tau_range, (tuple, list)) or len(tau_range) != 2 or \
            not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in tau_range) \
            or not 0 < tau_range[0] <= tau_range[1]:
        raise InstanceError(f"must be a pair (low, high) of seconds with 0 < low <= high, got {tau_range!r:.60}",
                            field="tau_range")
    return jobs, servers


def _sig(x: float, digits: int = 8) -> float:
    """Round to ``digits`` significant digits (readable JSON; the generator re-checks the ranges after)."""
    return float(f"{x:.{digits}g}")


def random_rar_instance(jobs: int, servers: int, seed: int, *, horizon: int = 1200,
                        server_gpus: tuple[int, ...] = MOBIHOC22_SERVER_GPUS,
                        sizes: tuple[int, ...] | None = None,
                        iterations: tuple[int, int] = (1000, 6000),
                        tau_range: tuple[float, float] = (0.01, 0.05), extra: float = 0.15,
                        contention_xi: float | None = None, name: str | None = None,
                        cluster: Cluster | None = None) -> RarInstance:
    """A random RAR-DDLS instance in the style of paper 000's section 7 (the paper's rules; contention never
    binds unless ``contention_xi`` is set, and the cluster usually holds every job at once: see
    [`contended_rar_instance`][optsched.generators.rar.contended_rar_instance], the default generator, for instances
    worth solving).

    * servers: GPUs uniform in ``server_gpus``;
    * job sizes: ``sizes`` if given (one per job, in order), else drawn with the proportions of the paper's
      mix (80:14:26:30:8:2 for 1, 2, 4, 8, 16, 32 GPUs) among the sizes the cluster can hold;
    * F_j uniform in ``iterations``;
    * per-iteration times: every placement and every contention level gives tau in ``tau_range`` and at most
      a fraction ``extra`` of tau is contention + overhead. How: draw the one-server time tau1_j uniform in
      [tau_lo, tau_hi * (1 - extra)] (tau_hi * (1 - extra) so that tau1_j / (1 - extra) <= tau_hi); the budget
      E_j = tau1_j * (1 / (1 - extra) - 1) caps the worst-case increase tau_max_j - tau1_j. The overhead per
      server is xi_2 = 0.4 * tau_lo * (1/(1-extra) - 1) / (|S| - 1), so that spanning all servers costs at most
      40% of the smallest budget; xi_1 = xi_2 (the paper's "xi_1 = xi_2"). The gradient size m_j fills a random
      share (20%..95%) of what is left of E_j at the worst bandwidth b^e / f(alpha, max(1, xi_1 P)) over the
      most servers the job can span; the compute time Delta^f M + Delta^b is what is left of tau1_j.
      Consequence of xi_1 = xi_2 with k = max(1, xi_1 * p): xi_1 * p < 1 for every p, so contention never
      lowers the bandwidth in these instances; locality still matters (inter- vs intra-server bandwidth and
      the per-server overhead). ``docs/algorithms/sjf-bco.md`` discusses it. ``contention_xi`` sets xi_1 apart
      from xi_2 (a variant where contention bites, e.g. 1.0); the ranges above still hold, since m_j is sized
      for the worst contention.

    ``cluster`` replaces the drawn one (``servers`` and ``server_gpus`` are then unused, and no draw is made
    for it). The result is checked against [`optsched.problems.rar.tau_bounds`][] before it is returned.

    ```pycon
    >>> inst = random_rar_instance(12, 3, seed=1)
    >>> inst.n_jobs, len(inst.cluster.servers), inst.horizon
    (12, 3, 1200)

    ```
    """
    jobs, servers = _check_sizes(jobs, servers, seed, iterations, tau_range, horizon)
    if not (isinstance(extra, (int, float)) and 0 < extra < 1):
        raise InstanceError(f"must be a number in (0, 1), got {extra!r:.60}", field="extra")
    rng = np.random.default_rng(seed)
    if cluster is None:
        cluster = Cluster(tuple(Server(f"s{i}", int(rng.choice(server_gpus))) for i in range(servers)),
                          intra_bandwidth=_INTRA_BW, inter_bandwidth=_INTER_BW)
    servers = len(cluster.servers)
    total = cluster.total_gpus
    if sizes is None:
        mix = [(g, c) for g, c in MOBIHOC22_JOB_MIX if g <= total]
        weights = np.array([c for _, c in mix], dtype=float)
        sizes = tuple(int(x) for x in rng.choice([g for g, _ in mix], size=jobs, p=weights / weights.sum()))
    elif len(sizes) != jobs:
        raise InstanceError(f"{len(sizes)} sizes for {jobs} jobs", field="sizes")
    lo_tau, hi_tau = tau_range
    share = 1.0 / (1.0 - extra) - 1.0          # E_j / tau1_j
    xi = _sig(0.4 * lo_tau * share / max(1, servers - 1), 6)
    # worst contention a split job can meet: at most one split job per GPU of the largest server
    n_split = sum(1 for g in sizes if g >= 2)
    p_max = max(1, min(cluster.max_server_gpus, n_split))
    xi1 = xi if contention_xi is None else float(contention_xi)
    f_max = f_degradation(contention_k(p_max, xi1), _ALPHA)
    out = []
    for i, g in enumerate(sizes):
        tau1 = rng.uniform(lo_tau * 1.01, hi_tau * (1.0 - extra) * 0.99)
        budget = tau1 * share
        n_most = min(g, servers)
        ring = (g - 1) / g
        left = budget - xi * (n_most - 1)
        per_m = 2.0 * ring * (f_max / _INTER_BW - 1.0 / _INTRA_BW)   # extra slots per unit of gradient
        m = left * rng.uniform(0.2, 0.95) / per_m if per_m > 0 else rng.uniform(0.01, 0.1)
        m = _sig(m, 6)
        compute = tau1 - (2.0 * ring * m / _INTRA_BW + ring * m / _REDUCE_SPEED + xi)
        batch = int(rng.choice((16, 32, 64)))
        back = rng.uniform(0.4, 0.7)
        out.append(RarJob(f"j{i}", gpus=int(g), iterations=int(rng.integers(iterations[0], iterations[1] + 1)),
                          gradient_size=m, batch_size=batch,
                          forward_time_per_sample=_sig(compute * (1 - back) / batch),
                          backward_time=_sig(compute * back)))
    inst = RarInstance(cluster, horizon=horizon, jobs=tuple(out), reduce_speed=_REDUCE_SPEED, contention_xi=xi1,
                       overhead_xi=xi, degradation_alpha=_ALPHA,
                       name=name or f"rar-j{jobs}-s{servers}-seed{seed}")
    assert max_contention(inst) <= p_max
    for j in inst.jobs:  # the documented ranges hold for every placement and contention level
        t_lo, t_hi = tau_bounds(inst, j)
        assert lo_tau <= t_lo and t_hi <= hi_tau, (j, t_lo, t_hi)
    return inst


def mobihoc22_preset(seed: int, servers: int = 20, horizon: int = 1200,
                     contention_xi: float | None = None) -> RarInstance:
    """Paper 000's section 7 setting: 160 jobs (80x1, 14x2, 26x4, 30x8, 8x16, 2x32 GPUs) in random order,
    F_j in [1000, 6000], tau in [0.01, 0.05] under every placement, contention + overhead within 15% of the
    per-iteration time, xi_1 = xi_2, ``servers`` servers (20) with GPUs uniform in {4, 8, 16, 32}, T = 1200.
    ``contention_xi`` gives the contention-active variant (xi_1 != xi_2, see
    [`random_rar_instance`][optsched.generators.rar.random_rar_instance]).

    ```pycon
    >>> inst = mobihoc22_preset(0)
    >>> inst.n_jobs, inst.max_job_gpus, len(inst.cluster.servers), inst.horizon
    (160, 32, 20, 1200)

    ```
    """
    sizes = [g for g, c in MOBIHOC22_JOB_MIX for _ in range(c)]
    np.random.default_rng([seed, 22]).shuffle(sizes)  # the trace's arrival order, not sorted by size
    suffix = ("" if servers == 20 else f"-s{servers}") + ("" if contention_xi is None else f"-xi{contention_xi:g}")
    return random_rar_instance(len(sizes), servers, seed, horizon=horizon, sizes=tuple(sizes),
                               contention_xi=contention_xi, name=f"mobihoc22-seed{seed}{suffix}")


def contended_rar_instance(jobs: int, servers: int, seed: int, *, load: float = 2.0, contention_xi: float = 1.0,
                           extra: float = 0.4, max_gpus: int = 16, horizon: int = 1200,
                           iterations: tuple[int, int] = (1000, 6000), tau_range: tuple[float, float] = (0.01, 0.05),
                           name: str | None = None) -> RarInstance:
    """A RAR-DDLS instance where jobs queue and contention binds: the default generator (``optsched.generate``).

    [`random_rar_instance`][optsched.generators.rar.random_rar_instance] follows the paper's section 7 literally, and
    its small instances are closed by
    the lower bound before any model is built: the cluster (servers of 4-32 GPUs) holds every job at once and
    xi_1 = xi_2 makes k = max(1, xi_1 p) = 1, so every job starts at slot 0 on one server. Here three knobs
    change that, everything else (per-job rules, F_j, tau ranges) being
    [`random_rar_instance`][optsched.generators.rar.random_rar_instance]'s:

    * ``load`` (default 2): the GPUs the jobs ask for, sum_j G_j, over the cluster's GPUs. The cluster gets
      about sum_j G_j / load GPUs (at least the largest job), shared as evenly as possible by ``servers``
      servers; with load > 1 not every job can start at slot 0, so the order matters;
    * ``contention_xi`` (default 1): xi_1 of k = max(1, xi_1 p); with 1, two split jobs sharing a server
      already slow each other (k = 2), and servers of a few GPUs make big jobs split;
    * ``extra`` (default 0.4): the share of the worst per-iteration time that is communication and overhead
      (``random_rar_instance``'s 0.15 keeps it small), so contention and spreading cost up to 1/(1 - extra)
      = 1.67x the one-server time;

    and ``max_gpus`` (16) caps the paper's job sizes (1-32 GPUs, same proportions), so that a few servers are
    not dominated by one job. ``seed`` seeds both the sizes and
    [`random_rar_instance`][optsched.generators.rar.random_rar_instance]'s draws.

    ```pycon
    >>> inst = contended_rar_instance(8, 3, seed=1)
    >>> sum(j.gpus for j in inst.jobs) >= 1.5 * inst.cluster.total_gpus, inst.contention_xi
    (True, 1.0)

    ```
    """
    jobs, servers = _check_sizes(jobs, servers, seed, iterations, tau_range, horizon)
    if isinstance(load, bool) or not isinstance(load, (int, float)) or not (load > 0 and math.isfinite(load)):
        raise InstanceError(f"must be a positive number, got {load!r:.60}", field="load")
    max_gpus = _int_at_least(max_gpus, "max_gpus")
    rng = np.random.default_rng([seed, 16])
    mix = [(g, c) for g, c in MOBIHOC22_JOB_MIX if g <= max(1, max_gpus)]
    weights = np.array([c for _, c in mix], dtype=float)
    sizes = tuple(int(x) for x in rng.choice([g for g, _ in mix], size=jobs, p=weights / weights.sum()))
    total = max(max(sizes), servers, math.ceil(sum(sizes) / load))
    per, rest = divmod(total, servers)
    cluster = Cluster(tuple(Server(f"s{i}", per + (1 if i < rest else 0)) for i in range(servers)),
                      intra_bandwidth=_INTRA_BW, inter_bandwidth=_INTER_BW)
    return random_rar_instance(jobs, servers, seed, horizon=horizon, sizes=sizes, iterations=iterations,
                               tau_range=tau_range, extra=extra, contention_xi=contention_xi, cluster=cluster,
                               name=name or f"rar-q{load:g}-j{jobs}-s{servers}-seed{seed}")
