"""Copies: a simulator copied mid-run (copy.deepcopy / clone) continues exactly like the original and leaves it
untouched; SimResult pickles and deep-copies with the standard library."""

from __future__ import annotations

import copy
import pickle

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.sim.test_sim_invariants import cases

from optsched.cluster import Cluster
from optsched.sim import LaunchMechanism, Simulator, Workload, WorkloadJob, build_admission, build_policy, simulate

COLS = ["first_start_s", "completion_s", "preemptions", "launches", "migrations", "attained_gpu_s", "admitted_s"]


def _finish(sim):
    if sim.decision_due:
        sim.apply(sim.decide())
    while sim.advance() is not None:
        sim.apply(sim.decide())
    return sim.result()


def _state(sim):
    """Everything observable of a simulator mid-run (to check that a copy's run leaves it untouched)."""
    return (sim.now, sim.done, sim.decision_due, sim.cstate.free.tolist(), sim.cstate.busy_gpus,
            [(j.id, j.status, j.executed, j.t_ref, j.rate, j.placement, j.preemptions, j.launches, len(j.segments))
             for j in sim.jobs],
            len(sim._ts), sim.view.extra["rng"].bit_generator.state["state"]["state"])


def _same(a, b):
    assert np.array_equal(a.jobs[COLS].to_numpy(), b.jobs[COLS].to_numpy(), equal_nan=True)
    assert a.timeseries.equals(b.timeseries)
    for k in ("events", "decisions", "preemptions_total", "migrations_total", "avg_jct_s", "end_s"):
        assert a.summary[k] == b.summary[k], k


def _check_copy_mid_run(make_sim, stop_after: int):
    whole = make_sim().run()
    sim = make_sim()
    sim.reset()
    for _ in range(stop_after):
        if sim.advance() is None:
            break
        sim.apply(sim.decide())
    if not sim.done:
        sim.advance()  # copy at a pending decision point, too
    twin = copy.deepcopy(sim)
    before = _state(sim)
    _same(_finish(twin), whole)
    assert _state(sim) == before  # the copy's run did not touch the original
    _same(_finish(sim), whole)


def _maker(case):
    """A factory of fresh simulators of one drawn case (``cases()``), all alike."""
    wl, cluster, cfg = case

    def make():
        c = dict(cfg)
        return Simulator(wl, cluster, policy=build_policy(c["scheduler"], c["placement"]),
                         admission=build_admission(c["admission"]), perf=c["perf"], mode=c["mode"],
                         round_s=c["round_s"], launch=LaunchMechanism(restore_s=c["restore_s"]), seed=3)

    return make


@settings(max_examples=30)
@given(cases(), st.integers(0, 12))
def test_copy_mid_run_continues_like_the_original(case, k):
    _check_copy_mid_run(_maker(case), k)


def test_copy_of_a_srpt_and_a_stateful_admission():
    wl = Workload(tuple(WorkloadJob(f"j{i}", float(5 * i), 1 + i % 3, float(30 + 7 * i), 1.0,
                                    predicted_iterations=float(20 + 9 * i)) for i in range(10)))
    for name in ("a-srpt", "wcs-workload"):
        def make(name=name):
            return Simulator(wl, Cluster.homogeneous(2, 2), policy=build_policy(name),
                             admission=build_admission("accept-1.0"), mode="event")
        _check_copy_mid_run(make, 6)


def test_clone_is_deepcopy_and_shares_the_immutable_inputs():
    wl = Workload((WorkloadJob("a", 0, 1, 10, 1.0), WorkloadJob("b", 1, 1, 5, 1.0)))
    sim = Simulator(wl, Cluster.homogeneous(1, 1), mode="event")
    sim.reset()
    sim.advance()
    twin = sim.clone()
    assert twin.workload is sim.workload and twin.cluster is sim.cluster
    assert twin.policy is not sim.policy and twin.jobs[0] is not sim.jobs[0] and twin.view.jobs is twin.jstate
    twin.apply(twin.decide())
    assert sim.decision_due and not twin.decision_due and sim.jobs[0].status == "queued"


def test_sim_result_pickles_and_deepcopies():
    wl = Workload((WorkloadJob("a", 0, 2, 100, 1.0), WorkloadJob("b", 10, 1, 50, 1.0, deadline_s=500.0),
                   WorkloadJob("c", 20, 1, 30, 1.0)))
    r = simulate(wl, servers=1, gpus_per_server=2, scheduler="las", mode="event", label="x")
    for back in (pickle.loads(pickle.dumps(r)), copy.deepcopy(r)):
        assert back.jobs.equals(r.jobs) and back.timeseries.equals(r.timeseries)
        assert back.summary == r.summary and back.config == r.config and back.custom == r.custom
        assert [(j.id, j.completion_s, j.segments) for j in back.job_objects] == \
            [(j.id, j.completion_s, j.segments) for j in r.job_objects]
    # an A-SRPT result carries pipeline specs and per-stage placements
    from optsched.models import catalogue_job
    from optsched.sim.asrpt import run_asrpt

    run = run_asrpt([("x", 0.0, catalogue_job("VGG19:dp4"), 10, 10)], (1, 4))
    back = pickle.loads(pickle.dumps(run))
    assert back.job_objects[0].segments == run.job_objects[0].segments
    assert copy.deepcopy(run).summary == run.summary


def test_job_copy_covers_every_field_and_separates_the_containers():
    from optsched.sim.state import Job, Placement

    j = Job("a", 3.0, 2, 10, 1.5, model="m")
    j.segments = [(0.0, 1.0, Placement.of({0: 2}), 0.5)]  # (an empty tuple until the engine ends one)
    j.held_gpus, j.migrations, j.placement = 2, 1, Placement.of({0: 2})
    c = copy.deepcopy(j)
    for n in Job.__slots__:
        a, b = getattr(c, n), getattr(j, n)
        assert a == b or (a != a and b != b), n   # NaN (not yet admitted / started / done) equals NaN
    assert c.segments is not j.segments
    assert c.placement is j.placement  # immutable: shared
