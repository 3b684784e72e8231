"""Issue 28: Gavel's LPs (``optsched.sim.hetero.lp``) whatever the units, and jobs that can run nowhere."""

from __future__ import annotations

import numpy as np
import pytest

from optsched.errors import InstanceError
from optsched.sim.hetero.lp import equal_share_throughput, max_min_fairness, min_makespan

# the reproducer: remaining work of 1e5-1e6 iterations at 10-50 iterations/s (u* ~ 1e-5)
T = [[48.74325753130778], [11.559217249107677], [41.362133975669096], [33.67580335606261]]
Z, N = [8, 8, 1, 1], [8]
R = [262522.8152950671, 871943.0548205207, 561627.7347021959, 558918.6100745321]


def test_the_makespan_lp_of_the_reproducer_solves_with_both_solvers():
    glop, highs = min_makespan(T, Z, N, R), min_makespan(T, Z, N, R, solver="highs")
    assert 1 / highs.value == pytest.approx(1 / glop.value, rel=1e-7)
    thr = highs.throughputs(np.array(T))
    assert np.all(np.array(R) / thr <= 1 / highs.value * (1 + 1e-6))  # every job finishes by the makespan


@pytest.mark.parametrize("seed", range(8))
def test_small_optima_agree_between_glop_and_highs(seed):
    rng = np.random.default_rng(seed)
    m, k = 6, 2
    t = rng.uniform(5, 60, size=(m, k))
    z = rng.choice([1, 2, 4, 8], size=m)
    n = np.array([8, 4])
    r = rng.uniform(1e5, 1e6, size=m)
    a, b = min_makespan(t, z, n, r), min_makespan(t, z, n, r, solver="highs")
    assert b.value == pytest.approx(a.value, rel=1e-6)
    c, d = max_min_fairness(t, z, n), max_min_fairness(t, z, n, solver="highs", aggregate=False)
    assert d.value == pytest.approx(c.value, rel=1e-6) and c.value >= 1 - 1e-9


def test_a_job_that_runs_nowhere_is_refused_not_given_nothing():
    with pytest.raises(InstanceError, match=r"row\(s\) \[1\]"):
        max_min_fairness([[1.0], [1.0]], [1, 4], [2])  # job 1 needs 4 GPUs, the type has 2
    with pytest.raises(InstanceError, match="never finish"):
        min_makespan([[1.0], [0.0]], [1, 1], [2], [10.0, 5.0])
    # a finished job (no work left) that could run nowhere does not matter to the makespan
    assert 1 / min_makespan([[1.0], [0.0]], [1, 1], [2], [10.0, 0.0]).value == pytest.approx(10.0)


def test_the_two_equal_shares_agree_exactly_when_there_are_no_more_gpus_than_jobs():
    t, n = np.array([[2.0, 1.0], [1.0, 3.0], [4.0, 4.0], [1.0, 1.0], [3.0, 1.0]]), np.array([3, 1])
    z = np.array([1, 2, 1, 2, 1])  # G = 4 <= M = 5: both give a job G / (M z) of the time
    assert np.allclose(equal_share_throughput(t, z, n), equal_share_throughput(t, z, n, "gavel-code"))
    few = t[:2], z[:2]  # G = 4 > M = 2: the code's reference is 1/z of the time, the paper's min(1, G / (M z))
    ours, code = equal_share_throughput(*few, n), equal_share_throughput(*few, n, "gavel-code")
    assert ours[0] == pytest.approx(code[0]) and ours[1] == pytest.approx(2 * code[1])  # z = 1 alike; z = 2 halved
    assert max_min_fairness(*few, n).value >= 1 - 1e-9  # the sharing incentive against the paper's share
    with pytest.raises(InstanceError, match="share"):
        equal_share_throughput(t, z, n, "nope")
