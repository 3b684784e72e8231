"""Paper 003's guarantees on random tiny instances (hypothesis):

* the exact grid optimum (CP-SAT) equals the brute force, and the energy bound is at least both;
* no policy beats the optimum: a run in round mode on the exact model's grid that starts jobs only at round
  times and never preempts, migrates or rescales one is a feasible grid schedule, so its deadlines met are at
  most the optimum (the ElasticFlow-style policy's wake-ups at reservation starts can fall between rounds, so
  its runs are compared only when they do not: hypothesis found such a run beating the grid); every run,
  preemptive, migrating and elastic ones included, is at most the upper bound;
* ElasticFlow-style admission: every admitted job meets its deadline;
* the plan decision (section 3.1): a chosen plan is one of its list's plans, fits the free GPUs, passes the
  speed-up filter; an expected plan has the largest score among its list's expected plans; an unexpected plan
  is chosen only when neither list has an expected one; the allocation (3.2) of the chosen plan succeeds.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.exact.deadline import brute_force_deadline, deadline_upper_bound, solve_deadline_cpsat
from optsched.perf.ring import RingPerf, candidate_plans, get_score
from optsched.problems.deadline import ALPHAS, MODELS, DeadlineJob, DeadlineWorkload, paper_cluster
from optsched.sim import simulate
from optsched.sim.deadline.common import JobTimes, allocate
from optsched.sim.deadline.drs import plan_decision

UNIT = 60.0


@st.composite
def tiny(draw):
    nodes = draw(st.integers(1, 2))
    g = draw(st.integers(1, 3))
    n = draw(st.integers(1, 4))
    jobs = []
    for i in range(n):
        model = MODELS[draw(st.sampled_from(sorted(MODELS)))]
        units = draw(st.integers(2, 12))
        jobs.append(DeadlineJob(f"t{i}", model.name, draw(st.integers(0, 6)) * UNIT, draw(st.sampled_from(ALPHAS)),
                                units * UNIT / model.epoch_time_1gpu_s))
    return DeadlineWorkload(paper_cluster(nodes, g), tuple(jobs), time_unit_s=UNIT)


def wl_time(job, n, cross):
    """The problem's own eq. (1) on the paper's bandwidths (independent of the ring model's code path)."""
    return DeadlineWorkload(paper_cluster(), (job,)).run_time_s(job, n, cross)


@settings(max_examples=25)
@given(wl=tiny())
def test_no_policy_beats_the_optimum_and_nothing_beats_the_bound(wl):
    opt = solve_deadline_cpsat(wl, time_limit=20)
    assert opt.status.value == "optimal"
    assert opt.objective == brute_force_deadline(wl).objective
    bound = deadline_upper_bound(wl).value
    assert opt.objective <= bound + 1e-9
    for name in ("drs", "norm", "edf", "deadline-fifo", "themis", "elasticflow-fixed", "las", "tiresias"):
        run = simulate(wl, scheduler=name, round_s=UNIT)
        m = run.custom["deadline"]
        assert m["deadlines_met"] <= bound + 1e-9, name
        # a run that starts jobs only on the grid (a policy's wake-ups may fall between rounds) and never moves
        # one is a grid schedule
        on_grid = all(float(t0 / UNIT).is_integer() for j in run.job_objects for t0, *_ in j.segments)
        if on_grid and m["migrations"] == 0 and m["preemptions"] == 0:
            assert m["deadlines_met"] <= opt.objective, name
        if name == "elasticflow-fixed":
            for j in run.job_objects:
                if j.id in run.admission.reservations:
                    assert j.completion_s <= j.deadline_s + 1e-6


@settings(max_examples=40)
@given(wl=tiny())
def test_elasticflow_admitted_jobs_meet_their_deadlines_in_event_mode(wl):
    run = simulate(wl, scheduler="elasticflow-fixed")
    admitted = [j for j in run.job_objects if j.id in run.admission.reservations]
    assert all(j.completion_s <= j.deadline_s + 1e-6 for j in admitted)
    assert run.custom["deadline"]["deadlines_met"] >= len(admitted)


@given(free=st.lists(st.integers(0, 4), min_size=1, max_size=4).filter(lambda f: sum(f) > 0),
       model=st.sampled_from(sorted(MODELS)), epochs=st.floats(0.05, 50), alpha=st.sampled_from(ALPHAS),
       waited=st.floats(0, 20000), fragment=st.sampled_from(["plan", "node"]))
def test_plan_decision(free, model, epochs, alpha, waited, fragment):
    cap = np.full(len(free), 4)
    free_a = np.array(free)
    job = DeadlineJob("j", model, 0.0, alpha, epochs)
    perf = RingPerf(10.0, 6.0)
    jt = JobTimes(lambda n, cross: perf.batch_time_s(job.t_cal, job.n_params, n, cross), job.work_batches,
                  job.max_gpus)
    score = get_score("slack-per-gpu")
    c = plan_decision(jt, job.deadline_s, waited, free_a, cap, score, "j", True, fragment)
    assert c is not None
    ls, lm = candidate_plans(jt.run_time_s, job.deadline_s, waited, free_a, jt.max_gpus,
                             lambda n, cross: perf.useful(job.t_cal, job.n_params, n, cross))
    p = c.plan
    assert p in (lm if p.cross else ls)
    assert perf.useful(job.t_cal, job.n_params, p.n_gpu, p.cross)                   # eq. 11
    assert p.run_time_s == pytest.approx(wl_time(job, p.n_gpu, p.cross))
    assert (p.n_gpu <= free_a.sum()) if p.cross else (p.n_gpu <= free_a.max())
    if p.cross:
        assert (free_a > 0).sum() > 1
    if c.kind.endswith("-expected") and not c.kind.endswith("unexpected"):
        same = [q for q in (lm if p.cross else ls) if q.expected]
        assert score(p) == max(score(q) for q in same)
    elif fragment == "plan":
        assert not any(q.expected for q in ls + lm)
    else:
        assert not any(q.expected for q in ls)
    assert allocate(free_a, p.n_gpu, p.cross) is not None
