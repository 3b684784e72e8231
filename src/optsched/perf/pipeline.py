"""Per-iteration time of a mixed-parallelism job under a placement: paper 001, eqs. (4)-(7).

A placement is a count matrix x: for every server m used, the column x^m = (x^m_1, ..., x^m_S) of GPUs that
host each stage there. Eq. (7) takes the slowest (server, stage):

    alpha(x) = max_{m, s : x^m_s > 0} beta^m_s,   beta^m_s = comp_s (4) + comm^m_s (5) + AllReduce^m_s (6)

and beta^m_s depends only on the column x^m (its own entries s-1, s, s+1), never on other servers' columns.
So alpha(x) = max over the used columns of a **column cost** ([`column_cost`][optsched.perf.pipeline.column_cost]), the
fact every exact
model in [`optsched.exact.placement`][] is built on.

Units: MB, ms and GB/s (= MB/ms), see [`optsched.problems.pipeline`][]. Resolutions of the digest
(``docs/algorithms/pipeline-model.md``):

1. first/last stage: the missing neighbour term is dropped (d^in_1 = d^out_S = 0), so S = 1 has no comm;
2. x^m_s = 0 contributes nothing (no division by zero in eq. (6)); k_s = 1 has no all-reduce;
3. the max in eq. (7) runs over the servers the job uses;
4. the x^m_s factors of eq. (5) cancel: the inter-server part is g * [...] / B_inter;
5. comp is not divided by k_s: p^f, p^b are per replica and per iteration, as given.

```pycon
>>> from optsched.problems.pipeline import pipeline_job
>>> job = pipeline_job("j", replicas=[2, 1], forward_ms=[1, 2], backward_ms=[2, 4], d_out_mb=[3, 0],
...                    params_mb=[10, 5])
>>> net = Network(gpus_per_server=4, inter_bandwidth_gbs=1.0, intra_bandwidth_gbs=100.0)
>>> alpha(job, net, {"s0": (2, 1)})        # everything on one server: only B_intra terms
6.12
>>> alpha_max(job, net) == alpha(job, net, singleton_layout(job))
True

```
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..errors import InstanceError
from ..problems.pipeline import Network, PipelineJob, bandwidth_precondition, require_bandwidth_precondition  # noqa: F401 (re-exported)

Column = tuple[int, ...]


# -- eqs. (4)-(7) ------------------------------------------------------------------------------------------
def stage_time(job: PipelineJob, net: Network, col: Sequence[int], s: int) -> float:
    """beta^m_s (ms) of stage ``s`` (0-based) on a server whose column is ``col``; 0 when col[s] = 0."""
    x = col[s]
    if x <= 0:
        return 0.0
    st = job.stages[s]
    k = st.replicas
    g, b_inter, b_intra = net.gpus_per_server, net.inter_bandwidth_gbs, net.intra_bandwidth_gbs
    local_in = col[s - 1] / job.stages[s - 1].replicas if s > 0 else 0.0        # x^m_{s-1}/k_{s-1}
    local_out = col[s + 1] / job.stages[s + 1].replicas if s + 1 < len(col) else 0.0
    din2, dout2 = 2.0 * st.d_in_mb, 2.0 * st.d_out_mb
    # eq. (5), the x^m_s factors cancelled: remote share over the server's NIC slice, local share over B_intra
    comm = (g * (din2 * (1.0 - local_in) + dout2 * (1.0 - local_out)) / b_inter
            + (din2 * local_in + dout2 * local_out) / b_intra)
    # eq. (6): all replicas on this server -> B_intra; otherwise the NIC slice (x/g) B_inter is the bottleneck
    if k == 1:
        ar = 0.0
    elif x < k:
        ar = 2.0 * (k - 1) * st.params_mb * g / (k * x * b_inter)
    else:
        ar = 2.0 * (k - 1) * st.params_mb / (k * b_intra)
    return st.compute_ms + comm + ar


def column_cost(job: PipelineJob, net: Network, col: Sequence[int]) -> float:
    """max_s beta^m_s for one server's column (0 for an empty column): a server's share of eq. (7)."""
    return max((stage_time(job, net, col, s) for s in range(len(col)) if col[s] > 0), default=0.0)


def columns_of(x: Mapping[str, Sequence[int]] | Iterable[Sequence[int]]) -> list[Column]:
    """The columns of a placement given as ``{server: counts}`` or as a list of columns."""
    if isinstance(x, Mapping):
        return [tuple(int(v) for v in c) for c in x.values()]
    return [tuple(int(v) for v in c) for c in x]


def check_placement(job: PipelineJob, net: Network | None, x, *, capacities: Mapping[str, int] | None = None
                    ) -> None:
    """Raise [`InstanceError`][optsched.errors.InstanceError] unless x is a valid count matrix: eq. (2) per stage,
    per-server capacity."""
    items: list[tuple[Any, Sequence[int]]] = list(x.items()) if isinstance(x, Mapping) else list(enumerate(x))
    totals = [0] * job.n_stages
    for sid, col in items:
        if len(col) != job.n_stages:
            raise InstanceError(f"has {len(col)} counts but the job has {job.n_stages} stages",
                                field=f"x[{sid!r}]", job=job.id)
        for s, v in enumerate(col):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise InstanceError(f"must be a non-negative integer, got {v!r}", field=f"x[{sid!r}][{s}]",
                                    job=job.id)
            totals[s] += int(v)
        cap = capacities.get(sid) if capacities is not None else (net.gpus_per_server if net else None)
        if cap is not None and sum(col) > cap:
            raise InstanceError(f"uses {sum(col)} GPUs on a server with {cap}", field=f"x[{sid!r}]", job=job.id)
    for s, (t, k) in enumerate(zip(totals, job.replicas)):
        if t != k:
            raise InstanceError(f"stage {s} has {t} GPUs placed but k = {k} replicas (eq. 2)", field="x",
                                job=job.id)


def alpha(job: PipelineJob, net: Network, x, *, check: bool = True) -> float:
    """Eq. (7): the per-iteration time (ms) of ``job`` under count matrix ``x``.

    ``x`` is ``{server: (x_1, ..., x_S)}`` or a list of such columns; with ``check`` it must satisfy eq. (2)
    and no column may exceed g GPUs.
    """
    if check:
        check_placement(job, net, x)
    return max((column_cost(job, net, c) for c in columns_of(x)), default=0.0)


# -- alpha_max and the lower bound ---------------------------------------------------------------------------
def singleton_layout(job: PipelineJob) -> list[Column]:
    """g_i servers holding one replica each (the layout that defines alpha_max)."""
    S = job.n_stages
    return [tuple(1 if t == s else 0 for t in range(S)) for s, k in enumerate(job.replicas) for _ in range(k)]


def alpha_max(job: PipelineJob, net: Network) -> float:
    """alpha_i^max in closed form (digest section 1): eq. (7) on g_i singleton servers.

    max_s [p^f_s + p^b_s + 2g(d^in_s + d^out_s)/B_inter + 1[k_s > 1] 2g(k_s - 1)h_s/(k_s B_inter)].
    """
    g, b = net.gpus_per_server, net.inter_bandwidth_gbs
    best = 0.0
    for st in job.stages:
        k = st.replicas
        v = st.compute_ms + 2.0 * g * (st.d_in_mb + st.d_out_mb) / b
        if k > 1:
            v += 2.0 * g * (k - 1) * st.params_mb / (k * b)
        best = max(best, v)
    return best


def compute_lower_bound(job: PipelineJob) -> float:
    """max_s (p^f_s + p^b_s): no placement is faster (digest P6)."""
    return max(st.compute_ms for st in job.stages)


def fewest_servers_layout(job: PipelineJob, gpus_per_server: int) -> list[int]:
    """Free counts of the fewest-servers layout of section IV-B: ceil(g_i/g) servers, all full but the last.

    ```pycon
    >>> fewest_servers_layout(type("J", (), {"gpus": 19})(), 8)
    [8, 8, 3]

    ```
    """
    n = job.gpus
    full, rest = divmod(n, gpus_per_server)
    return [gpus_per_server] * full + ([rest] if rest else [])


# -- brute force (the oracle of the exact models' tests) ---------------------------------------------------
def columns_up_to(job: PipelineJob, max_sum: int, *, min_sum: int = 0) -> list[Column]:
    """Every column 0 <= x_s <= k_s with min_sum <= sum <= max_sum, in lexicographic order."""
    ks = job.replicas
    out: list[Column] = []

    def rec(s: int, left: int, prefix: list[int]) -> None:
        if s == len(ks):
            if max_sum - left >= min_sum:
                out.append(tuple(prefix))
            return
        for v in range(min(ks[s], left) + 1):
            prefix.append(v)
            rec(s + 1, left - v, prefix)
            prefix.pop()

    rec(0, max_sum, [])
    return out


def enumerate_count_matrices(job: PipelineJob, capacities: Sequence[int], *, exact_sizes: bool = True
                             ) -> Iterator[list[Column]]:
    """Every count matrix: one column per server (``capacities`` in order), stage totals k_s.

    With ``exact_sizes`` each column sums to its capacity (mapping form); otherwise to at most it (selection
    form; empty columns allowed). Equal consecutive capacities yield non-increasing columns only, since such
    servers are interchangeable (every distinct placement up to that symmetry appears once).
    """
    ks = job.replicas
    caps = list(capacities)
    suffix = [0] * (len(caps) + 1)
    for i in range(len(caps) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + caps[i]
    cache: dict[tuple[int, int], list[Column]] = {}

    def cols(cap: int) -> list[Column]:
        key = (cap, exact_sizes)
        if key not in cache:
            cache[key] = columns_up_to(job, cap, min_sum=cap if exact_sizes else 0)
        return cache[key]

    def rec(m: int, rem: tuple[int, ...], chosen: list[Column]) -> Iterator[list[Column]]:
        left = sum(rem)
        if m == len(caps):
            if left == 0:
                yield list(chosen)
            return
        if left > suffix[m] or (exact_sizes and left != suffix[m]):
            return
        prev = chosen[-1] if m > 0 and caps[m - 1] == caps[m] else None
        for c in cols(caps[m]):
            if prev is not None and c > prev:
                continue
            if any(v > r for v, r in zip(c, rem)):
                continue
            chosen.append(c)
            yield from rec(m + 1, tuple(r - v for r, v in zip(rem, c)), chosen)
            chosen.pop()

    yield from rec(0, tuple(ks), [])


def min_alpha_enumerate(job: PipelineJob, net: Network, capacities: Sequence[int], *, exact_sizes: bool = True
                        ) -> tuple[float, list[Column]]:
    """Brute-force min alpha over [`enumerate_count_matrices`][optsched.perf.pipeline.enumerate_count_matrices] (tiny
    jobs): (alpha, best columns)."""
    best, arg = math.inf, None
    cost: dict[Column, float] = {}
    for cols in enumerate_count_matrices(job, capacities, exact_sizes=exact_sizes):
        a = 0.0
        for c in cols:
            if c not in cost:
                cost[c] = column_cost(job, net, c)
            a = max(a, cost[c])
        if a < best - 1e-12:
            best, arg = a, cols
    if arg is None:
        raise InstanceError(f"no placement of {job.gpus} GPUs on capacities {list(capacities)}", job=job.id)
    return best, arg


def column_costs(job: PipelineJob, net: Network, cols: np.ndarray) -> np.ndarray:
    """Vectorised [`column_cost`][optsched.perf.pipeline.column_cost] over the rows of an (n, S) integer array."""
    cols = np.asarray(cols, dtype=np.int64)
    n, S = cols.shape
    k = np.array(job.replicas, dtype=float)
    comp = np.array([st.compute_ms for st in job.stages])
    din2 = np.array([2.0 * st.d_in_mb for st in job.stages])
    dout2 = np.array([2.0 * st.d_out_mb for st in job.stages])
    h = np.array([st.params_mb for st in job.stages])
    g, b_inter, b_intra = net.gpus_per_server, net.inter_bandwidth_gbs, net.intra_bandwidth_gbs
    frac = cols / k
    local_in = np.zeros((n, S))
    local_out = np.zeros((n, S))
    local_in[:, 1:] = frac[:, :-1]
    local_out[:, :-1] = frac[:, 1:]
    comm = (g * (din2 * (1 - local_in) + dout2 * (1 - local_out)) / b_inter
            + (din2 * local_in + dout2 * local_out) / b_intra)
    with np.errstate(divide="ignore", invalid="ignore"):
        ar_remote = 2.0 * (k - 1) * h * g / (k * cols * b_inter)
    ar_local = 2.0 * (k - 1) * h / (k * b_intra)
    ar = np.where(cols >= k, ar_local, ar_remote)
    ar = np.where(k == 1, 0.0, ar)
    beta = np.where(cols > 0, comp + comm + ar, 0.0)
    return beta.max(axis=1) if S else np.zeros(n)
