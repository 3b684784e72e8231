"""Copies share what neither simulator will write (issue 29): finished jobs, and jobs that have not arrived until
they arrive in either. Whichever of the two runs first, each continues exactly like an uncopied run, and a run of
one never shows in the other's jobs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.sim.test_sim_copy import _finish, _maker, _same, _state
from tests.sim.test_sim_invariants import cases

from optsched.cluster import Cluster
from optsched.sim import Simulator, Workload, WorkloadJob


def _jobs(sim):
    return [(j.id, j.status, j.executed, j.completion_s, j.launches, list(j.segments)) for j in sim.jobs]


def _stepped(make, k):
    sim = make()
    sim.reset()
    for _ in range(k):
        if sim.advance() is None:
            break
        sim.apply(sim.decide())
    return sim


@settings(max_examples=30)
@given(cases(), st.integers(0, 12), st.booleans())
def test_original_first_then_copy_and_copy_of_copy(case, k, chain):
    make = _maker(case)
    whole = make().run()
    sim = _stepped(make, k)
    twin = sim.clone()
    if chain:  # a copy of the copy, made after the copy moved on (the what-if pattern, nested)
        if twin.advance() is not None:
            twin.apply(twin.decide())
        twin = twin.clone()
    frozen = _jobs(twin)
    state = _state(twin)
    _same(_finish(sim), whole)           # the original runs to the end first ...
    assert _jobs(twin) == frozen and _state(twin) == state  # ... and the copy's jobs did not move
    _same(_finish(twin), whole)          # then the copy runs to the end: the same run


def test_finished_jobs_are_shared_and_arrivals_are_private():
    wl = Workload(tuple(WorkloadJob(f"j{i}", float(10 * i), 1, 5.0, 1.0) for i in range(6)))
    sim = Simulator(wl, Cluster.homogeneous(1, 1), mode="event")
    sim.reset()
    while sim.now < 25 and sim.advance() is not None:
        sim.apply(sim.decide())
    twin = sim.clone()
    done = [i for i, j in enumerate(sim.jobs) if j.status == "done"]
    assert done and all(twin.jobs[i] is sim.jobs[i] for i in done)
    _finish(twin)
    _finish(sim)
    # every job that had not finished at the copy ends as a different object in each simulator
    assert all(twin.jobs[i] is not sim.jobs[i] for i in range(6) if i not in done)
    assert [j.completion_s for j in twin.jobs] == [j.completion_s for j in sim.jobs] == [
        10.0 * i + 5.0 for i in range(6)]
