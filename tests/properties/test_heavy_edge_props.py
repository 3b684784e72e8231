"""Paper 001's placement claims on random tiny jobs (digest P6, P7): Heavy-Edge vs the exact optimum."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.algorithms.heavy_edge import _adjacency, alpha_tilde_min, cut_weight, heavy_edge
from optsched.exact.placement import alpha_min, min_cut_placement
from optsched.perf.pipeline import (
    Network,
    alpha,
    alpha_max,
    compute_lower_bound,
    enumerate_count_matrices,
    min_alpha_enumerate,
    singleton_layout,
)
from optsched.problems.pipeline import pipeline_job

sizes_mb = st.floats(0.0, 8.0, allow_nan=False).map(lambda v: round(v, 3))
times_ms = st.floats(0.1, 5.0, allow_nan=False).map(lambda v: round(v, 3))


@st.composite
def tiny_jobs(draw, max_gpus: int = 6):
    S = draw(st.integers(1, 3))
    k = draw(st.lists(st.integers(1, 3), min_size=S, max_size=S).filter(lambda ks: sum(ks) <= max_gpus))
    return pipeline_job("p", replicas=k, forward_ms=draw(st.lists(times_ms, min_size=S, max_size=S)),
                        backward_ms=draw(st.lists(times_ms, min_size=S, max_size=S)),
                        d_out_mb=draw(st.lists(sizes_mb, min_size=S - 1, max_size=S - 1)) + [0.0],
                        params_mb=draw(st.lists(sizes_mb, min_size=S, max_size=S)),
                        allreduce=draw(st.sampled_from(["ring", "tree"])))


@st.composite
def networks(draw, precondition: bool | None = None):
    g = draw(st.integers(2, 4))
    b_inter = draw(st.sampled_from([0.5, 1.0, 4.0]))
    if precondition is True:
        b_intra = draw(st.floats(b_inter / g, 100.0))
    elif precondition is False:
        b_intra = draw(st.floats(0.001, b_inter / g * 0.99))
    else:
        b_intra = draw(st.floats(0.001, 100.0))
    return Network(g, b_inter, b_intra)


@st.composite
def job_and_servers(draw, precondition: bool | None = None):
    net = draw(networks(precondition))
    job = draw(tiny_jobs())
    sizes, left = [], job.gpus
    while left:
        n = draw(st.integers(1, min(net.gpus_per_server, left)))
        sizes.append(n)
        left -= n
    return job, net, {f"m{i}": n for i, n in enumerate(sizes)}


def brute_min_cut(job, sizes):
    adj = _adjacency(job)
    best = float("inf")

    def rec(m, left, where):
        nonlocal best
        if m == len(sizes):
            best = min(best, sum(w for w, u, v in adj.edges_desc if where[u] != where[v]))
            return
        for part in itertools.combinations(left, sizes[m]):
            rec(m + 1, [v for v in left if v not in part], {**where, **dict.fromkeys(part, m)})

    rec(0, list(adj.vertices), {})
    return best


@given(job_and_servers(), st.integers(0, 3), st.sampled_from(["graph", "unassigned"]),
       st.sampled_from(["node_set", "assigned"]))
def test_p7_valid_partition_and_deterministic(case, seed, lightest, grow_from):
    job, net, free = case
    res = heavy_edge(job, free, rng=seed, lightest=lightest, grow_from=grow_from)
    vs = [v for part in res.assignment.values() for v in part]
    assert sorted(vs) == sorted(_adjacency(job).vertices)                     # each replica exactly once
    assert {m: len(p) for m, p in res.assignment.items()} == free             # |part_m| = g_m
    assert [sum(c[s] for c in res.counts.values()) for s in range(job.n_stages)] == list(job.replicas)
    assert heavy_edge(job, free, rng=seed, lightest=lightest, grow_from=grow_from) == res


@given(job_and_servers())
def test_p7_heavy_edge_alpha_at_least_exact_min_alpha(case):
    job, net, free = case
    he = alpha(job, net, heavy_edge(job, free).counts)
    best, _ = min_alpha_enumerate(job, net, sorted(free.values(), reverse=True), exact_sizes=True)
    assert he >= best - 1e-9


@settings(max_examples=25)
@given(job_and_servers())
def test_p7_heavy_edge_cut_at_least_exact_min_cut(case):
    job, net, free = case
    he = heavy_edge(job, free).cut_weight_mb
    brute = brute_min_cut(job, list(free.values()))
    assert he >= brute - 1e-9
    assert min_cut_placement(job, free, time_limit=20).cut_weight_mb == pytest.approx(brute, abs=1e-6)


@given(job_and_servers(precondition=True))
def test_p6_alpha_between_compute_bound_and_alpha_max_under_precondition(case):
    job, net, free = case
    lo, hi = compute_lower_bound(job), alpha_max(job, net)
    assert lo - 1e-9 <= alpha(job, net, heavy_edge(job, free).counts) <= hi + 1e-9
    # every placement, not only Heavy-Edge's (digest 1.10)
    for cols in enumerate_count_matrices(job, sorted(free.values(), reverse=True)):
        assert alpha(job, net, cols, check=False) <= hi * (1 + 1e-9)


@given(tiny_jobs(), networks())
def test_p6_alpha_max_closed_form_equals_eq7_on_singletons(job, net):
    assert alpha(job, net, singleton_layout(job), check=False) == pytest.approx(alpha_max(job, net), rel=1e-12)


@settings(max_examples=25)
@given(tiny_jobs(max_gpus=5), networks())
def test_p6_alpha_min_at_most_alpha_tilde_min(job, net):
    true_min = alpha_min(job, net, method="enumerate")
    assert true_min <= alpha_tilde_min(job, net) + 1e-9
    assert true_min == pytest.approx(alpha_min(job, net, method="exact"), rel=1e-6)


@given(tiny_jobs(max_gpus=4), networks())
def test_p6_whole_job_on_one_server_has_no_nic_terms(job, net):
    if job.gpus > net.gpus_per_server:
        return
    col = {"m": job.replicas}
    other = Network(net.gpus_per_server, net.inter_bandwidth_gbs * 7.0, net.intra_bandwidth_gbs)
    assert alpha(job, net, col) == pytest.approx(alpha(job, other, col), rel=1e-12)


def test_p6_upper_bound_fails_without_precondition():
    """Regression: B_intra < B_inter/g breaks alpha <= alpha_max (the digest's 'iff'); smallest case kept.

    Pure model parallelism, 2 stages of k = 1, d_out_1 = 1 MB, g = 2, B_inter = 1, B_intra = 0.1 < 0.5:
    together: 1 + 2*1/0.1 = 21 ms > apart (alpha_max): 1 + 2*2*1/1 = 5 ms.
    """
    job = pipeline_job("c", replicas=[1, 1], forward_ms=[0.5, 0.5], backward_ms=[0.5, 0.5], d_out_mb=[1, 0],
                       params_mb=[0, 0])
    net = Network(2, 1.0, 0.1)
    assert alpha(job, net, {"m": (1, 1)}) == pytest.approx(21.0) and alpha_max(job, net) == pytest.approx(5.0)


@given(job_and_servers(precondition=False))
def test_cut_weight_is_assignment_invariant_under_server_renaming(case):
    job, net, free = case
    res = heavy_edge(job, free)
    renamed = {f"x{sid}": vs for sid, vs in res.assignment.items()}
    assert cut_weight(job, renamed) == pytest.approx(res.cut_weight_mb)
