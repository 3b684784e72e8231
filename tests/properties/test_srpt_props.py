"""Paper 001, single-machine properties of A-SRPT's virtual instance (digest 001 Sec. 4, P1-P3).

* P1: SRPT is optimal for 1|r_j,pmtn|sum C_j (equals a DP over unit slots) and beats every non-preemptive
  permutation schedule.
* P2 (single-machine part): with n_i >= 1, SRPT(A1) >= alpha_min * I(I+1) / (2G)  (proof of Theorem 1).
* P3: Lemma 3 in exact single-machine form:
  SRPT(A~1) <= SRPT(A1) + I * sum_O delta_i - sum_U delta_i <= SRPT(A1) + I * g_max * alpha_max * eps / G,
  with equality SRPT(A~1) == SRPT(A1) when eps = 0.

A1 sizes are (g_i/G) * n_i * alpha~_i and A~1 sizes (g_i/G) * n~_i * alpha~_i, built here from plain numbers
(no performance model), in exact Fractions so that the equalities are exact.
"""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from optsched.errors import InstanceError
from optsched.exact.single_machine import (
    VirtualSRPT,
    best_nonpreemptive_schedule,
    brute_force_preemptive_optimum,
    srpt,
    virtual_size,
)

fractions = st.builds(F, st.integers(0, 24), st.integers(1, 4))


@st.composite
def tiny_integer_jobs(draw, max_jobs: int = 5, max_value: int = 6):
    n = draw(st.integers(1, max_jobs))
    releases = draw(st.lists(st.integers(0, max_value), min_size=n, max_size=n))
    sizes = draw(st.lists(st.integers(0, max_value), min_size=n, max_size=n))
    return releases, sizes


def total(releases, sizes):
    return srpt([(j, r, p) for j, (r, p) in enumerate(zip(releases, sizes))]).total


# --- P1 -----------------------------------------------------------------------------------------------------

@settings(max_examples=150)
@given(tiny_integer_jobs())
@example(([0, 0, 0], [0, 0, 0]))            # only zero-size jobs: each completes at its release
@example(([0, 1, 1], [3, 1, 1]))            # preemption strictly helps: 10 < 11 (non-preemptive)
@example(([2, 2, 2, 2, 2], [6, 6, 6, 6, 6]))  # all ties
def test_p1_srpt_equals_dp_optimum_and_beats_every_permutation(instance):
    releases, sizes = instance
    res = srpt([(j, r, p) for j, (r, p) in enumerate(zip(releases, sizes))])
    assert res.total == brute_force_preemptive_optimum(releases, sizes)
    for perm in itertools.permutations(range(len(sizes))):
        t = permutation_total = 0
        for j in perm:
            t = max(t, releases[j]) + sizes[j]
            permutation_total += t
        assert res.total <= permutation_total
    assert res.total <= best_nonpreemptive_schedule(releases, sizes)[0]
    # every completion respects release + size, and the order is by completion time
    for j, c in res.completion.items():
        assert c >= releases[j] + sizes[j]
    assert [res.completion[j] for j in res.order] == sorted(res.completion.values())
    assert sorted(res.order) == list(range(len(sizes)))


def test_p1_known_values():
    # hand schedules: a 0-1, b 1-2, c 2-3, a 3-5 -> 2 + 3 + 5 = 10; best non-preemptive idles to 1: 2 + 3 + 6
    assert brute_force_preemptive_optimum([0, 1, 1], [3, 1, 1]) == 10 == total([0, 1, 1], [3, 1, 1])
    assert best_nonpreemptive_schedule([0, 1, 1], [3, 1, 1]) == (11, (1, 2, 0))


@settings(max_examples=60)
@given(st.lists(st.tuples(fractions, fractions), min_size=1, max_size=7), fractions.filter(lambda c: c > 0))
def test_p1_scaling_time_scales_completions_exactly(jobs, c):
    base = srpt([(j, r, p) for j, (r, p) in enumerate(jobs)])
    scaled = srpt([(j, c * r, c * p) for j, (r, p) in enumerate(jobs)])
    assert scaled.order == base.order
    assert scaled.completion == {j: c * v for j, v in base.completion.items()}


@settings(max_examples=80)
@given(st.lists(st.tuples(fractions, fractions), min_size=1, max_size=8),
       st.lists(fractions, max_size=6), st.booleans())
def test_online_form_matches_batch(jobs, checkpoints, add_upfront):
    """Adding each job at its release (or all jobs up front, with future releases) and advancing through
    arbitrary checkpoints reproduces the batch run: the same completion times and the same completion order,
    each job reported once, by the first advance at or after its completion."""
    batch = srpt([(j, r, p) for j, (r, p) in enumerate(jobs)])
    # added up front, the machine must itself stop at releases between checkpoints
    times = sorted(set(checkpoints) if add_upfront else {r for r, _ in jobs} | set(checkpoints))
    v = VirtualSRPT()
    if add_upfront:
        for j, (r, p) in enumerate(jobs):
            v.add(j, r, p)
    reported, previous = [], 0
    for t in times:
        for j, (r, p) in enumerate(jobs):
            if r == t and not add_upfront:
                v.add(j, r, p)
        new = v.advance(t)
        assert all(previous <= v.completion[j] <= t for j in new)
        reported += new
        previous = t
    reported += v.advance(None)
    assert reported == list(batch.order)
    assert v.completion == batch.completion
    assert v.active == 0


def test_online_zero_size_completes_at_release_and_is_reported_then():
    v = VirtualSRPT()
    v.add("big", 0, 10)
    assert v.advance(3) == []
    v.add("unseen", 3, 0)              # n~ = 0: completes at its release (Sec. IV-C-3)
    v.add("later", 5, 0)
    assert v.advance(3) == ["unseen"] and v.completion["unseen"] == 3
    assert v.advance(4) == []
    assert v.advance(5) == ["later"]
    assert v.remaining("big") == 5       # zero-size jobs take no machine time
    assert v.advance(None) == ["big"] and v.completion["big"] == 10


def test_ties_broken_by_release_then_id():
    # equal remaining 2 at time 1: "b" (remaining 2, released 0) keeps the machine against "a" (released 1)
    res = srpt([("b", 0, 3), ("a", 1, 2)])
    assert res.order == ("b", "a") and res.completion == {"b": 3, "a": 5}
    # same release and size: the smaller id first
    assert srpt([("y", 0, 1), ("x", 0, 1)]).order == ("x", "y")


def test_online_input_errors():
    v = VirtualSRPT()
    v.add("a", 0, 1)
    with pytest.raises(InstanceError) as e:
        v.add("a", 1, 1)
    assert e.value.field == "id" and e.value.job == "a"
    v.advance(2)
    with pytest.raises(InstanceError) as e:
        v.add("old", 1, 1)                 # released before the virtual clock
    assert e.value.field == "release" and e.value.job == "old"
    with pytest.raises(InstanceError) as e:
        v.add("neg", 3, -1)
    assert e.value.field == "size"
    with pytest.raises(InstanceError):
        v.advance(1)                       # the clock never moves back
    with pytest.raises(InstanceError) as e:
        brute_force_preemptive_optimum([0], [9])
    assert e.value.field == "size"


# --- P2 -----------------------------------------------------------------------------------------------------

@st.composite
def virtual_instances(draw, max_jobs: int = 8):
    """(G, jobs) with jobs as dicts of plain numbers: g, n (true), n_pred, alpha (alpha~_i^min), release."""
    total_gpus = draw(st.integers(1, 16))
    n = draw(st.integers(1, max_jobs))
    jobs = [dict(g=draw(st.integers(1, total_gpus)), n=draw(st.integers(0, 20)), n_pred=draw(st.integers(0, 20)),
                 alpha=draw(st.builds(F, st.integers(1, 20), st.integers(1, 4))),
                 release=draw(st.builds(F, st.integers(0, 30), st.integers(1, 3))))
            for _ in range(n)]
    return total_gpus, jobs


def srpt_total(total_gpus, jobs, key):
    return srpt([(i, j["release"], virtual_size(j["g"], total_gpus, j[key], j["alpha"]))
                 for i, j in enumerate(jobs)]).total


@settings(max_examples=100)
@given(virtual_instances())
def test_p2_srpt_a1_lower_bound(instance):
    total_gpus, jobs = instance
    for j in jobs:
        j["n"] = max(j["n"], 1)  # precondition of the bound: every job runs at least one iteration
    alpha_min = min(j["alpha"] for j in jobs)  # alpha^min <= alpha_i^min <= alpha~_i^min: the tightest choice
    I = len(jobs)
    value = srpt_total(total_gpus, jobs, "n")
    assert value >= alpha_min * F(I * (I + 1), 2 * total_gpus)
    # and the trivial per-job bound: each job completes no earlier than release + size
    assert value >= sum(j["release"] + virtual_size(j["g"], total_gpus, j["n"], j["alpha"]) for j in jobs)


def test_p2_bound_is_tight():
    # I jobs, one GPU and one iteration each at alpha, released together: completions alpha/G * (1, 2, ..., I)
    alpha, G, I = F(3, 2), 4, 5
    jobs = [dict(g=1, n=1, alpha=alpha, release=0) for _ in range(I)]
    assert srpt_total(G, jobs, "n") == alpha * F(I * (I + 1), 2 * G)


# --- P3 -----------------------------------------------------------------------------------------------------

def lemma3_terms(total_gpus, jobs):
    delta = [virtual_size(j["g"], total_gpus, abs(j["n"] - j["n_pred"]), j["alpha"]) for j in jobs]
    over = sum((d for d, j in zip(delta, jobs) if j["n_pred"] > j["n"]), F(0))
    under = sum((d for d, j in zip(delta, jobs) if j["n_pred"] < j["n"]), F(0))
    eps = sum(abs(j["n"] - j["n_pred"]) for j in jobs)
    return over, under, eps


@settings(max_examples=150)
@given(virtual_instances(), st.builds(F, st.integers(0, 10), st.integers(1, 3)))
def test_p3_lemma3_exact_single_machine_form(instance, alpha_max_extra):
    total_gpus, jobs = instance
    I = len(jobs)
    g_max = max(j["g"] for j in jobs)
    alpha_max = max(j["alpha"] for j in jobs) + alpha_max_extra  # alpha^max >= alpha_i^max >= alpha~_i^min
    over, under, eps = lemma3_terms(total_gpus, jobs)
    opt_a1 = srpt_total(total_gpus, jobs, "n")
    opt_pred = srpt_total(total_gpus, jobs, "n_pred")
    middle = opt_a1 + I * over - under
    assert opt_pred <= middle
    assert middle <= opt_a1 + I * F(g_max, total_gpus) * alpha_max * eps
    # the lemma with the roles of A1 and A~1 exchanged (O and U swap): the same proof applies
    assert opt_a1 <= opt_pred + I * under - over
    if eps == 0:
        assert opt_pred == opt_a1


def test_p3_equality_without_error_and_tightness_of_the_under_term():
    # one job, underestimated: SRPT(A~1) = SRPT(A1) - delta exactly (the -sum_U delta term is attained)
    jobs = [dict(g=2, n=10, n_pred=4, alpha=F(1, 2), release=F(1))]
    over, under, _ = lemma3_terms(8, jobs)
    assert srpt_total(8, jobs, "n_pred") == srpt_total(8, jobs, "n") - under == 1 + F(2, 8) * 4 * F(1, 2)
    jobs[0]["n_pred"] = 10
    assert srpt_total(8, jobs, "n_pred") == srpt_total(8, jobs, "n")
