"""Exact placement models cross-checked: CP-SAT == MILP (CBC, HiGHS) == brute-force enumeration, tiny jobs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from optsched.algorithms.heavy_edge import _adjacency, fig2_job, heavy_edge
from optsched.errors import InstanceError
from optsched.exact.placement import min_cut_placement, min_time_placement, min_time_placement_per_server
from optsched.perf.pipeline import Network, alpha, min_alpha_enumerate
from optsched.placement import place
from optsched.problems.pipeline import pipeline_job
from optsched.result import SolveStatus

NET = Network(4, 1.0, 50.0)


def random_job(rng: np.random.Generator, max_gpus: int = 6, allreduce: str | None = None):
    while True:
        S = int(rng.integers(1, 4))
        k = [int(v) for v in rng.integers(1, 4, size=S)]
        if sum(k) <= max_gpus:
            break
    return pipeline_job(f"r{rng.integers(1_000_000)}", replicas=k,
                        forward_ms=[float(v) for v in rng.uniform(0.5, 3, S)],
                        backward_ms=[float(v) for v in rng.uniform(0.5, 6, S)],
                        d_out_mb=[float(v) for v in rng.uniform(0, 4, S - 1)] + [0.0],
                        params_mb=[float(v) for v in rng.uniform(0, 10, S)],
                        allreduce=allreduce or str(rng.choice(["ring", "tree"])))


def random_sizes(rng: np.random.Generator, total: int, cap: int) -> list[int]:
    sizes = []
    while total:
        n = int(rng.integers(1, min(cap, total) + 1))
        sizes.append(n)
        total -= n
    return sizes


def brute_min_cut(job, sizes: list[int]) -> float:
    """Every partition of the replicas into parts of the given sizes (parts in order, sets within a part)."""
    adj = _adjacency(job)
    V = list(adj.vertices)
    best = float("inf")

    def rec(m: int, left: list, where: dict):
        nonlocal best
        if m == len(sizes):
            best = min(best, sum(w for w, u, v in adj.edges_desc if where[u] != where[v]))
            return
        for part in itertools.combinations(left, sizes[m]):
            rest = [v for v in left if v not in part]
            rec(m + 1, rest, {**where, **dict.fromkeys(part, m)})

    rec(0, V, {})
    return best


@pytest.mark.parametrize("seed", range(8))
def test_min_time_mapping_form_three_ways(seed):
    rng = np.random.default_rng(seed)
    job = random_job(rng)
    sizes = random_sizes(rng, job.gpus, NET.gpus_per_server)
    free = {f"s{i}": n for i, n in enumerate(sizes)}
    brute, _ = min_alpha_enumerate(job, NET, sorted(sizes, reverse=True), exact_sizes=True)
    for solver in ("cpsat", "cbc", "highs"):
        for prune in (True, False):
            r = min_time_placement(job, NET, free, form="mapping", solver=solver, prune=prune, time_limit=20)
            assert r.status == SolveStatus.OPTIMAL
            assert r.alpha == pytest.approx(brute, rel=1e-6), (solver, prune)
            assert {s: sum(c) for s, c in r.counts.items()} == free          # mapping: every GPU used
            assert alpha(job, NET, r.counts) == pytest.approx(r.alpha)
    assert alpha(job, NET, heavy_edge(job, free).counts) >= brute - 1e-9


@pytest.mark.parametrize("seed", range(8))
def test_min_time_selection_form_three_ways(seed):
    rng = np.random.default_rng(100 + seed)
    job = random_job(rng)
    caps = [int(v) for v in rng.integers(0, NET.gpus_per_server + 1, size=4)]
    caps[0] = max(caps[0], job.gpus - sum(caps[1:]), 1)
    free = {f"s{i}": n for i, n in enumerate(caps)}
    brute, _ = min_alpha_enumerate(job, NET, sorted(caps, reverse=True), exact_sizes=False)
    for solver in ("cpsat", "cbc", "highs"):
        r = min_time_placement(job, NET, free, form="selection", solver=solver, time_limit=20)
        assert r.status == SolveStatus.OPTIMAL and r.alpha == pytest.approx(brute, rel=1e-6), solver
        assert all(sum(c) <= free[s] for s, c in r.counts.items())
        assert alpha(job, NET, r.counts) == pytest.approx(r.alpha)


@pytest.mark.parametrize("seed", range(6))
def test_per_server_milp_equals_brute_force(seed):
    """The digest's compact per-server MILP, an independent formulation of the same optimum."""
    rng = np.random.default_rng(300 + seed)
    job = random_job(rng)
    sizes = random_sizes(rng, job.gpus, NET.gpus_per_server)
    free = {f"s{i}": n for i, n in enumerate(sizes)}
    brute, _ = min_alpha_enumerate(job, NET, sorted(sizes, reverse=True), exact_sizes=True)
    caps = sizes + [int(rng.integers(1, 5))]
    brute_sel, _ = min_alpha_enumerate(job, NET, sorted(caps, reverse=True), exact_sizes=False)
    for solver in ("highs", "cbc"):
        for sym in (True, False):
            r = min_time_placement_per_server(job, NET, free, solver=solver, symmetry_breaking=sym, time_limit=20)
            assert r.status == SolveStatus.OPTIMAL and r.alpha == pytest.approx(brute, rel=1e-6), (solver, sym)
        r = min_time_placement_per_server(job, NET, {f"s{i}": n for i, n in enumerate(caps)}, form="selection",
                                          solver=solver, time_limit=20)
        assert r.alpha == pytest.approx(brute_sel, rel=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_min_cut_cpsat_equals_milp_equals_brute_force(seed):
    rng = np.random.default_rng(200 + seed)
    job = random_job(rng, max_gpus=6)
    sizes = random_sizes(rng, job.gpus, 3)
    free = {f"s{i}": n for i, n in enumerate(sizes)}
    brute = brute_min_cut(job, sizes)
    for solver in ("cpsat", "cbc", "highs"):
        r = min_cut_placement(job, free, solver=solver, time_limit=20, net=NET)
        assert r.status == SolveStatus.OPTIMAL and r.cut_weight_mb == pytest.approx(brute, abs=1e-6), solver
        assert {s: len(vs) for s, vs in r.assignment.items()} == free
    assert heavy_edge(job, free).cut_weight_mb >= brute - 1e-9


def test_fig2_exact_cut_and_time():
    free = {"a": 4, "b": 1, "c": 1}
    # Fig. 2 cut by hand: any 1-GPU server holding one replica cuts at least its ring edge; Heavy-Edge's 4 MB
    # (the 0.5 MB S2-S3 edges and the 2 MB S3 ring) is optimal, as brute force confirms
    assert brute_min_cut(fig2_job(), [4, 1, 1]) == pytest.approx(4.0)
    assert min_cut_placement(fig2_job(), free).cut_weight_mb == pytest.approx(4.0)
    assert place(fig2_job(), free, "exact-cut").cut_weight == pytest.approx(4.0)


def test_place_exact_never_worse_than_heavy_edge():
    rng = np.random.default_rng(7)
    for _ in range(5):
        job = random_job(rng)
        free = {f"s{i}": int(v) for i, v in enumerate(rng.integers(1, 5, size=4))}
        if sum(free.values()) < job.gpus:
            continue
        he = place(job, free, network=NET)
        for form in ("mapping", "selection"):
            ex = place(job, free, "exact-time", network=NET, form=form)
            assert ex.alpha <= he.alpha + 1e-9 and ex.status == SolveStatus.OPTIMAL
        assert place(job, free, "exact-cut", network=NET).cut_weight <= he.cut_weight + 1e-9


def test_exact_input_errors():
    with pytest.raises(InstanceError, match="exactly g_i"):
        min_time_placement(fig2_job(), NET, {"a": 4, "b": 4}, form="mapping")
    with pytest.raises(InstanceError, match="only 5 are free"):
        min_time_placement(fig2_job(), NET, {"a": 4, "b": 1}, form="selection")
    with pytest.raises(InstanceError, match="unknown placement algorithm"):
        place(fig2_job(), {"a": 6}, "ilp")
