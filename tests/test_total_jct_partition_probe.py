"""The two cheap partition bounds that ``benchmarks/total_jct_ground_truth.py probe`` measures (formulation,
"Two cheap partition bounds, measured"), against the brute force on tiny one-server instances: the optimum of a
server is superadditive over disjoint job sets, and the pairwise bound (GPU fluid, wide jobs on one machine,
release plus duration, each with a share of every job's weight) stays at or below the optimum."""

from __future__ import annotations

import benchmarks.total_jct_ground_truth as gt
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from optsched.cluster import Cluster
from optsched.exact.total_jct import brute_force_total_jct
from optsched.exact.total_jct_assign import server_instance
from optsched.problems.total_jct import Mode, TotalJctInstance, TotalJctJob


@st.composite
def one_server(draw, max_jobs: int = 5):
    """One server of 2-5 GPUs and 1-5 jobs, each with its one-server mode (durations 0-6, releases 0-5,
    weights 0-3)."""
    cap = draw(st.integers(2, 5))
    jobs = []
    for i in range(draw(st.integers(1, max_jobs))):
        g = draw(st.integers(1, cap))
        jobs.append(TotalJctJob(f"j{i}", draw(st.integers(0, 5)), g, (Mode((g,), draw(st.integers(0, 6))),),
                                draw(st.integers(0, 3))))
    return TotalJctInstance(Cluster.homogeneous(1, cap), tuple(jobs))


def _opt(inst: TotalJctInstance, S: set[int]) -> int:
    return brute_force_total_jct(server_instance(inst, 0, S)).objective if S else 0


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_server(), st.data())
def test_one_server_optimum_is_superadditive(inst, data):
    S = set(range(inst.n_jobs))
    T = set(data.draw(st.sets(st.sampled_from(sorted(S)))))
    assert _opt(inst, S) >= _opt(inst, T) + _opt(inst, S - T)


Q = [x / 4 for x in range(5)]
SHARE = st.one_of(st.sampled_from([(a, b) for a in Q for b in Q if a + b <= 1]),
                  st.floats(0, 1).flatmap(lambda a: st.tuples(st.just(a), st.floats(0, 1 - a))))


def _two_parallel_narrow_jobs() -> TotalJctInstance:
    # both run at once on [0, 6): 12; a bound that put 1-GPU jobs on the one machine would give 6 + 12
    return TotalJctInstance(Cluster.homogeneous(1, 4), (TotalJctJob("a", 0, 1, (Mode((1,), 6),)),
                                                         TotalJctJob("b", 0, 1, (Mode((1,), 6),))))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_server(), st.dictionaries(st.integers(1, 5), SHARE, min_size=5, max_size=5))
@example(_two_parallel_narrow_jobs(), dict.fromkeys(range(1, 6), (0.0, 1.0)))
def test_pairwise_server_bound_is_below_the_optimum(inst, share):
    S = set(range(inst.n_jobs))
    cap = inst.cluster.servers[0].gpus
    assert gt.pairwise_server_bound(inst, S, cap, share) <= _opt(inst, S) + 1e-9


def test_pairwise_server_bound_hand_case():
    # two 4-GPU jobs of lengths 1 and 3 and a 1-GPU job of length 2 released at 1 on one 4-GPU server: the wide
    # jobs' whole weight on the machine share gives 1 + (1 + 3) for them and 1 + 2 for the 1-GPU job, 8; the
    # optimum is 10 (a on [0, 1), c on [1, 3), b on [3, 6))
    inst = TotalJctInstance(Cluster.homogeneous(1, 4), (
        TotalJctJob("a", 0, 4, (Mode((4,), 1),)), TotalJctJob("b", 0, 4, (Mode((4,), 3),)),
        TotalJctJob("c", 1, 1, (Mode((1,), 2),))))
    v = gt.pairwise_server_bound(inst, {0, 1, 2}, 4, {1: (0.0, 0.0), 4: (0.0, 1.0)})
    assert v == 8.0
    assert brute_force_total_jct(inst).objective == 10
