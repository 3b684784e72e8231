"""The deadline baselines beside DRS: Themis (the finish-time-fairness core and the batch policy), the
ElasticFlow-style admission policy (declines, reservations, the guarantee), LAS/Tiresias on requested GPUs, the
workload conversion, the registry and the metrics."""

from __future__ import annotations

import math

import pytest

from optsched.cluster import Cluster, Server
from optsched.errors import InstanceError
from optsched.generators.deadline import deadline_workload, tiny_deadline_workload
from optsched.perf.ring import RingPerf
from optsched.problems.deadline import DeadlineJob, DeadlineWorkload, meets_deadline, paper_cluster
from optsched.sim import build_perf, build_scheduling, simulate
from optsched.sim.deadline import (
    ElasticFlowAdmission,
    ThemisFTF,
    deadline_metrics,
    ftf_allocate,
    request_gpus,
    reserve,
    to_workload,
    utilisation_series,
)
from optsched.sim.deadline.common import JobTimes
from optsched.sim.deadline.elasticflow_fixed import Reservation, _peak
from optsched.sim.registry import scheduler_names


# -- Themis --------------------------------------------------------------------------------------------------
def test_ftf_allocate_equalises_rho_and_skips_counts_that_do_not_help():
    # rho = work / g: b (3x the work) ends with 3 of 4 GPUs, a with 1
    assert ftf_allocate(["a", "b"], 4, lambda j, g: (1.0 if j == "a" else 3.0) / g if g else math.inf) == \
        {"a": 1, "b": 3}
    # a job slower on 2 GPUs than on 1 but faster on 3 jumps from 1 to 3
    slow2 = {0: math.inf, 1: 2.0, 2: 2.5, 3: 1.0}
    assert ftf_allocate(["x"], 3, lambda j, g: slow2[g]) == {"x": 3}
    # nobody gains from a second GPU: the rest stays free
    assert ftf_allocate(["a", "b"], 8, lambda j, g: 1.0 if g else math.inf) == {"a": 1, "b": 1}
    # more jobs than GPUs: the first listed get one each (ties in rho go to list order)
    assert ftf_allocate(list("abc"), 2, lambda j, g: 1.0 / g if g else math.inf) == {"a": 1, "b": 1, "c": 0}
    assert ftf_allocate(["a"], 5, lambda j, g: 1.0 / g if g else math.inf, max_gpus=lambda j: 2) == {"a": 2}


def test_themis_starts_batches_only_on_an_empty_cluster():
    wl = deadline_workload(lam=8, window_h=6, nodes=2, seed=1)
    r = simulate(wl, scheduler="themis")
    starts = sorted({j.first_start_s for j in r.job_objects})
    for t in starts:  # at each batch start nothing started earlier is still running
        assert all(not (j.first_start_s < t < j.completion_s) for j in r.job_objects)
    assert len(starts) < len(wl)                                     # jobs do start together
    free = simulate(wl, scheduler=ThemisFTF(batch=False))
    assert free.summary["mean_utilisation"] >= r.summary["mean_utilisation"]


# -- ElasticFlow ---------------------------------------------------------------------------------------------
def test_reservations_never_overlap_beyond_the_cluster_and_admitted_jobs_meet_their_deadlines():
    wl = deadline_workload(lam=10, window_h=12, nodes=2, seed=4)
    run = simulate(wl, scheduler="elasticflow-fixed")
    jobs = run.job_objects
    admitted = [j for j in jobs if j.id in run.admission.reservations]
    declined = [j for j in jobs if j.id not in run.admission.reservations]
    assert declined and admitted and run.custom["deadline"]["declined"] == len(declined) == len(run.admission.declined)
    # a reservation binds until its job completes (an early finish hands its GPUs back to later admissions)
    live = [Reservation(r.gpus, r.start_s, min(r.end_s, j.completion_s))
            for j in admitted if (r := run.admission.reservations[j.id]).start_s < j.completion_s]
    for r in live:
        assert _peak(live, r.start_s, r.end_s) <= wl.total_gpus
    for j in admitted:
        r = run.admission.reservations[j.id]
        assert j.completion_s <= r.end_s + 1e-6 and meets_deadline(j.completion_s, j.deadline_s)
        assert j.arrival_s <= r.start_s and r.end_s <= j.deadline_s
    for j in declined:
        assert math.isnan(j.first_start_s) and j.attained_gpu_s == 0
    assert run.custom["deadline"]["deadlines_met"] == len(admitted)


def test_reserve_takes_the_fewest_gpus_that_meet_the_deadline():
    job = DeadlineJob("a", "ResNet-50", 0, 0.5, 4)
    wl = DeadlineWorkload(paper_cluster(), (job,))
    jt = JobTimes(lambda n, cross: wl.run_time_s(job, n, cross) / job.work_batches, job.work_batches, job.max_gpus)
    r = reserve(jt, job.deadline_s, 0.0, [], 16)
    assert r is not None and r.start_s == 0
    # the next smaller count misses the deadline at worst-case (cross-node) bandwidth
    assert wl.run_time_s(job, r.gpus, cross=True) <= job.deadline_s < wl.run_time_s(job, r.gpus - 1, cross=True)
    # with the cluster reserved until the deadline, it cannot be admitted
    assert reserve(jt, job.deadline_s, 0.0, [Reservation(16, 0.0, job.deadline_s)], 16) is None


def test_elasticflow_lends_leftovers_and_counts_rescalings_as_migrations():
    wl = DeadlineWorkload(paper_cluster(1, 4), (DeadlineJob("a", "ResNet-50", 0, 1.5, 2),
                                                DeadlineJob("b", "ResNet-50", 600, 1.5, 2)))
    run = simulate(wl, scheduler="elasticflow-fixed")
    a, b = run.job_objects
    assert run.admission.reservations[a.id].gpus == 1 and a.segments[0][2].gpus == 4   # reserved 1, lent 3 more
    assert run.custom["deadline"]["deadlines_met"] == 2 and run.custom["deadline"]["declined"] == 0
    if b.arrival_s < a.completion_s:
        assert a.migrations >= 1 and run.custom["deadline"]["migrations"] >= 1


def test_elasticflow_admission_alone_holds_nothing():
    adm = ElasticFlowAdmission()
    assert adm.holding == 0 and adm.declined == []


# -- LAS, Tiresias and the conversion ------------------------------------------------------------------------
def test_requests_and_the_workload_conversion():
    wl = DeadlineWorkload(paper_cluster(), (DeadlineJob("u", "ResNet-50", 0, 0.5, 5),
                                            DeadlineJob("r", "ResNet-50", 0, 1.5, 5),
                                            DeadlineJob("x", "AlexNet", 0, 0.5, 5)))
    reqs = [request_gpus(wl, j) for j in wl.jobs]
    assert reqs[1] == 1 and reqs[0] > 1
    # AlexNet cannot meet alpha = 0.5: it asks for the count with the shortest run time
    big = max(wl.capacities)
    x = wl.jobs[2]
    assert reqs[2] == min(range(1, 17), key=lambda n: wl.run_time_s(x, n, n > big))
    w = to_workload(wl)
    assert [j.gpus for j in w.jobs] == reqs and w.jobs[0].deadline_s == wl.jobs[0].deadline_s
    assert w.jobs[0].iterations == wl.jobs[0].work_batches and w.jobs[0].spec is wl.jobs[0]
    assert [j.gpus for j in to_workload(wl, "one").jobs] == [1, 1, 1]
    with pytest.raises(InstanceError, match="request"):
        to_workload(wl, "all")


@pytest.mark.parametrize("policy", ["las", "tiresias"])
def test_blox_policies_run_deadline_workloads_on_their_requested_gpus(policy):
    wl = deadline_workload(lam=4, window_h=6, nodes=2, seed=2)
    run = simulate(wl, scheduler=policy)
    want = {j.id: j.gpus for j in to_workload(wl).jobs}
    for j in run.job_objects:
        assert all(pl.gpus == want[j.id] for *_, pl, _ in j.segments)
    assert run.custom["deadline"]["jobs"] == len(wl)


# -- registry, metrics -----------------------------------------------------------------------------------------
def test_policies_and_the_ring_model_are_registered_by_name():
    for name in ("drs", "norm", "edf", "deadline-fifo", "themis", "elasticflow-fixed", "elasticflow"):
        assert build_scheduling(name).name == name and name in scheduler_names("deadline")
    assert isinstance(build_perf({"name": "ring", "intra_bandwidth": 10, "inter_bandwidth": 6}), RingPerf)
    wl = tiny_deadline_workload(3, seed=1)
    r = simulate(to_workload(wl), wl.cluster, scheduler="drs", perf={"name": "ring"}, mode="event")
    assert r.summary["jobs"] == 3
    with pytest.raises(InstanceError, match="unknown scheduler policy"):
        simulate(wl, scheduler="sjf")


def test_the_policies_plan_with_whatever_performance_model_runs():
    # Blox's constant model: a GPU more never helps, so DRS (eq. 11) and ElasticFlow give every job one GPU
    wl = deadline_workload(lam=4, window_h=4, nodes=2, seed=8)
    for name in ("drs", "elasticflow-fixed"):
        r = simulate(to_workload(wl), wl.cluster, scheduler=name, mode="event")  # ElasticFlow with its admission
        assert all(pl.gpus == 1 for j in r.job_objects for *_, pl, _ in j.segments), name


def test_metrics_by_hand():
    # one GPU, two 1-epoch TSN jobs arriving together: the first is on time, the second waits T1 and is late
    wl = DeadlineWorkload(paper_cluster(1, 1), (DeadlineJob("a", "TSN", 0, 1.0, 1), DeadlineJob("b", "TSN", 0, 1.5, 1)))
    run = simulate(wl, scheduler="deadline-fifo")
    t1 = wl.jobs[0].run_time_1gpu_s
    m = run.custom["deadline"]
    assert (m["jobs"], m["deadlines_met"], m["declined"], m["unfinished"]) == (2, 1, 0, 0)
    assert m["r_trace"] == 0.5 and m["avg_wait_s"] == pytest.approx(t1 / 2)
    assert m["avg_completion_s"] == pytest.approx(1.5 * t1)
    assert m["r_trace_urgency"] == pytest.approx(1.0 / (1.0 + 1 / 1.5))   # a (weight 1) met, b (2/3) missed
    assert m["utilisation"] == pytest.approx(1.0)
    u = utilisation_series(run, bin_s=t1)
    assert u["utilisation"].iloc[:2].tolist() == pytest.approx([1.0, 1.0])
    assert deadline_metrics(run)["deadlines_met"] == 1       # alphas read from the specs


def test_a_heterogeneous_cluster_runs():
    c = Cluster((Server("big", 4), Server("small", 2)), intra_bandwidth=10.0, inter_bandwidth=6.0)
    wl = DeadlineWorkload(c, deadline_workload(lam=4, window_h=4, seed=6).jobs)
    for p in ("drs", "edf", "themis", "elasticflow-fixed", "elasticflow"):
        assert simulate(wl, scheduler=p).custom["deadline"]["jobs"] == len(wl)


def test_elasticflow_keeps_a_job_that_overruns_its_reservation_by_a_rounding_error():
    # found by hypothesis (tests/properties/test_drs_props.py): on one GPU, t2 (360 s of work, deadline 360 s)
    # completes at 360 + 6e-14 s, just after the round at 360 s where t0's reservation begins; preempting t2 there
    # made it finish at 480 s. It must keep its GPU to completion, and t0 start right after it.
    from optsched.problems.deadline import MODELS

    def job(jid, model, arrival, alpha, units):
        return DeadlineJob(jid, model, arrival, alpha, units * 60.0 / MODELS[model].epoch_time_1gpu_s)

    wl = DeadlineWorkload(paper_cluster(1, 1), (job("t0", "AlexNet", 300.0, 1.5, 2), job("t1", "AlexNet", 0.0, 0.5, 2),
                                                job("t2", "TSM", 0.0, 1.0, 6)), time_unit_s=60.0)
    run = simulate(wl, scheduler="elasticflow-fixed", round_s=60.0)
    admitted = {j.id: j for j in run.job_objects if j.id in run.admission.reservations}
    assert sorted(admitted) == ["t0", "t2"]
    assert all(meets_deadline(j.completion_s, j.deadline_s) for j in admitted.values())
    assert run.custom["deadline"]["preemptions"] == 0 and run.custom["deadline"]["deadlines_met"] == 2
