"""The RAR-DDLS evaluator (paper 000, eqs. 6-9) against hand-computed schedules, and infeasible schedules.

Every expected number is derived in a comment from eq. (8),
    tau = 2 (w-1) m / (w B) + (w-1) m / (w C) + xi_2 * n_servers + Delta^f M + Delta^b,
with B = b^i on one server and b^e / f(alpha, k) across servers, k = max(1, xi_1 p), f = k + alpha (k - 1),
phi = floor(1/tau) iterations per slot (eq. 9), completion at the first slot boundary where F is reached.
"""

from __future__ import annotations

import pytest

from optsched import ScheduleError
from optsched.cluster import Cluster, Server
from optsched.evaluators.rar import evaluate
from optsched.problems.rar import RarInstance, RarJob
from optsched.result import Schedule, ScheduledJob


def instance(servers, jobs, *, intra=10.0, inter=1.0, C=100.0, xi1=1.0, xi2=0.01, alpha=0.5, horizon=100):
    return RarInstance(Cluster(tuple(Server(s, g) for s, g in servers), intra_bandwidth=intra,
                               inter_bandwidth=inter), horizon=horizon, jobs=tuple(jobs), reduce_speed=C,
                       contention_xi=xi1, overhead_xi=xi2, degradation_alpha=alpha)


def sched(*rows):
    return Schedule(tuple(ScheduledJob(j, a, pl) for j, a, pl in rows))


def test_one_job_on_one_server():
    # G = 2 on s0: w = 2, B = b^i = 10, m = 1, C = 100, one server, M = 10, df = 0.001, db = 0.05:
    # tau = 2*1*1/(2*10) + 1*1/(2*100) + 0.01*1 + 0.001*10 + 0.05 = 0.1 + 0.005 + 0.01 + 0.01 + 0.05 = 0.175
    # phi = floor(1/0.175) = floor(5.71) = 5; F = 100 -> 20 slots; start 3 -> completion 23.
    inst = instance([("s0", 4)], [RarJob("a", 2, 100, 1.0, 10, 0.001, 0.05)])
    ev = evaluate(inst, sched(("a", 3, {"s0": 2})))
    assert ev.completions == {"a": 23}
    assert ev.makespan == 23 and ev.average_jct == 23 and not ev.exceeds_horizon


# Two 2-GPU jobs, each split 1+1 over s0 and s1 (m = 0.02, M = 10, df = 0.001, db = 0.05, b^e = 1, C = 100,
# xi_1 = 1, xi_2 = 0.01, alpha = 0.5). Common terms: ring (w-1)/w * m = 0.01; reduction 0.01/100 = 0.0001;
# overhead 0.01 * 2 servers = 0.02; compute 0.001*10 + 0.05 = 0.06.
#   together: p = 2 (both split jobs on s0 and on s1), k = max(1, 1*2) = 2, f = 2 + 0.5*(2-1) = 2.5,
#             B = 1/2.5 = 0.4, tau = 2*0.01/0.4 + 0.0001 + 0.02 + 0.06 = 0.1301, phi = floor(7.69) = 7;
#   alone:    p = 1, k = 1, f = 1, B = 1, tau = 0.02 + 0.0001 + 0.02 + 0.06 = 0.1001, phi = floor(9.99) = 9.
def split_job(jid, iters):
    return RarJob(jid, 2, iters, 0.02, 10, 0.001, 0.05)


SPLIT = {"s0": 1, "s1": 1}


def test_two_jobs_split_over_the_same_servers_contend():
    # both F = 70 from slot 0 at phi = 7: 70/7 = 10 slots each -> both complete at 10 (alone: ceil(70/9) = 8)
    inst = instance([("s0", 2), ("s1", 2)], [split_job("a", 70), split_job("b", 70)])
    ev = evaluate(inst, sched(("a", 0, SPLIT), ("b", 0, SPLIT)))
    assert ev.completions == {"a": 10, "b": 10}
    alone = evaluate(instance([("s0", 2), ("s1", 2)], [split_job("a", 70)]), sched(("a", 0, SPLIT)))
    assert alone.makespan == 8


def test_contention_drops_from_the_slot_after_a_neighbour_finishes():
    # a: F = 66 at phi = 7 -> 9 slots give 63 < 66, 10 slots give 70 -> completes at 10 (it holds slot 9
    # although it needs only 3 of its 7 iterations there). b: F = 144: slots 0..9 at phi = 7 -> 70, then alone
    # from slot 10 at phi = 9: 74 left -> ceil(74/9) = 9 slots -> completes at 19. (Had the contention dropped
    # already in slot 9, b would have 63 + 9 * 9 = 144 by slot 18; had it never dropped, 144/7 -> 21.)
    inst = instance([("s0", 2), ("s1", 2)], [split_job("a", 66), split_job("b", 144)])
    ev = evaluate(inst, sched(("a", 0, SPLIT), ("b", 0, SPLIT)))
    assert ev.completions == {"a": 10, "b": 19}
    assert ev.makespan == 19 and ev.average_jct == pytest.approx(14.5)


def test_a_single_server_neighbour_does_not_contend():
    # c sits on one server (s0 has 4 GPUs: a uses 1, c uses 2): p counts only split jobs, so a keeps p = 1,
    # phi = 9 (see above) -> F = 90 in 10 slots. c: G = 2 on s0, tau = 2*1*0.02/(2*10) + 0.0001 + 0.01 + 0.06
    # = 0.002 + 0.0001 + 0.01 + 0.06 = 0.0721 -> phi = floor(13.87) = 13, F = 130 -> 10 slots.
    inst = instance([("s0", 4), ("s1", 2)], [split_job("a", 90), split_job("c", 130)])
    ev = evaluate(inst, sched(("a", 0, SPLIT), ("c", 0, {"s0": 2})))
    assert ev.completions == {"a": 10, "c": 10}


def test_per_slot_floor():
    # G = 1 (no communication: w - 1 = 0), xi_2 = 0, M = 1, df = 0, db = 0.3: tau = 0.3, 1/tau = 3.33 ->
    # phi = 3 iterations per slot, not 3.33: F = 10 takes ceil(10/3) = 4 slots (continuous time: 3).
    inst = instance([("s0", 1)], [RarJob("a", 1, 10, 0.5, 1, 0.0, 0.3)], xi2=0.0)
    assert evaluate(inst, sched(("a", 0, {"s0": 1}))).makespan == 4
    # tau = 0.25 exactly: 1/tau = 4 (floating point must not give 3): F = 8 -> 2 slots; F = 9 -> 3 slots.
    for iters, slots in ((8, 2), (9, 3)):
        inst = instance([("s0", 1)], [RarJob("a", 1, iters, 0.5, 1, 0.0, 0.25)], xi2=0.0)
        assert evaluate(inst, sched(("a", 5, {"s0": 1}))).makespan == 5 + slots


# -- infeasible schedules --------------------------------------------------------------------------------------
def two_jobs():
    # a: G = 2 on one server, tau = 0.175 (first test) -> phi = 5, F = 100 -> 20 slots; b: same job.
    # (b^e = 100 so that a split placement stays valid: tau <= 0.5*2/(100/2.5) + 0.005 + 0.02 + 0.06 < 1.)
    return instance([("s0", 3), ("s1", 2)], [RarJob("a", 2, 100, 1.0, 10, 0.001, 0.05),
                                             RarJob("b", 2, 100, 1.0, 10, 0.001, 0.05)], inter=100.0)


def test_gpus_freed_at_completion_can_be_reused():
    # a holds s0 in slots 0..19; b may start on s0 at 20 and completes at 40.
    ev = evaluate(two_jobs(), sched(("a", 0, {"s0": 2}), ("b", 20, {"s0": 2})))
    assert ev.completions == {"a": 20, "b": 40}


def test_capacity_exceeded_in_some_slot():
    # s0 has 3 GPUs; a holds 2 in slots 0..19, b asks for 2 more from slot 19: 4 > 3 in slot 19.
    with pytest.raises(ScheduleError, match=r"server 's0' over capacity in slot 19") as err:
        evaluate(two_jobs(), sched(("a", 0, {"s0": 2}), ("b", 19, {"s0": 2})))
    assert err.value.job == "b"


@pytest.mark.parametrize("rows, match, job", [
    ((("a", 0, {"s0": 1}), ("b", 0, {"s1": 2})), "places 1 GPUs but the job needs 2", "a"),
    ((("a", 0, {"s0": 3}), ("b", 0, {"s1": 2})), "places 3 GPUs but the job needs 2", "a"),
    ((("a", 0, {"s0": 2}), ("b", 0, {"s9": 2})), "unknown server 's9'", "b"),
    ((("a", -1, {"s0": 2}), ("b", 0, {"s1": 2})), "negative start", "a"),
    ((("a", 0, {"s0": 2}),), "omits 1 job", "b"),
    ((("a", 0, {"s1": 3}), ("b", 0, {"s0": 2})), "3 GPUs on 's1', which has 2", "a"),
])
def test_infeasible_schedules_are_rejected(rows, match, job):
    with pytest.raises(ScheduleError, match=match) as err:
        evaluate(two_jobs(), sched(*rows))
    assert err.value.job == job
