"""What the engine keeps per job (issue 29): segments stored only when a job has more than one, finished jobs as a
list-backed mapping, workload fields read through the workload job, the time series of a finished run kept once;
every one of them must read back exactly as before."""

from __future__ import annotations

import copy
import math
import sys

import pytest

from optsched.problems.workload import Workload, WorkloadJob
from optsched.sim import simulate
from optsched.sim.runner import simulator
from optsched.sim.state import DONE, FinishedJobs, Job, Placement


def _workload(n: int = 40) -> Workload:
    # a mix of sizes and lengths on a small cluster: LAS preempts, large jobs span servers
    jobs = [WorkloadJob(f"j{i}", 37.0 * i, (1, 2, 4, 6)[i % 4], 50.0 + 97.0 * (i % 7), 1.0 + 0.5 * (i % 3),
                        model=("a", "b")[i % 2], deadline_s=5000.0 + i if i % 5 == 0 else None, user=f"u{i % 3}",
                        tracked=i % 9 != 0)
            for i in range(n)]
    return Workload(tuple(jobs))


@pytest.mark.parametrize("scheduler", ["fifo", "las", "tiresias", "srtf"])
def test_segments_tile_each_job_from_first_start_to_completion(scheduler):
    r = simulate(_workload(), servers=3, gpus_per_server=4, scheduler=scheduler, mode="event")
    multi = 0
    for j in r.job_objects:
        assert j.status == DONE
        segs = j.segments
        # one segment per placement taken: a launch or a move
        assert len(segs) == j.launches + j.migrations
        multi += len(segs) > 1
        assert segs[0][0] == j.first_start_s and segs[-1][1] == j.completion_s
        assert segs[-1][2] is j.placement
        assert all(a[1] <= b[0] for a, b in zip(segs, segs[1:]))  # in order, never overlapping
        assert math.isclose(sum(s[3] for s in segs), j.iterations, rel_tol=1e-9)
        for t0, t1, pl, _ in segs:
            assert isinstance(pl, Placement) and pl.gpus == j.gpus and t0 <= t1
    if scheduler == "las":
        assert multi > 0  # the check above covered stored segments too, not only derived ones


def test_a_job_that_ran_once_stores_no_segment_and_one_that_was_preempted_stores_all():
    r = simulate(_workload(), servers=3, gpus_per_server=4, scheduler="las", mode="event")
    for j in r.job_objects:
        if j.launches == 1 and j.migrations == 0:
            assert j._segs == ()
        else:
            # every segment stored: its three numbers in the typed array, its placement in the list
            assert len(j._segs.times) == 3 * len(j._segs.placements) == 3 * len(j.segments)


def test_segments_set_by_hand_read_back():
    j = Job("a", 0.0, 2, 10.0, 1.0)
    segs = [(0.0, 1.0, Placement.of({0: 2}), 0.5), (2.0, 3.0, Placement.of({1: 2}), 1.5)]
    j.segments = segs
    assert j.segments == segs and j.segments is not j.segments
    j.segments = []
    assert j.segments == ()


def test_finished_jobs_in_order_of_completion_by_id():
    sim = simulator(_workload(), servers=3, gpus_per_server=4, scheduler="las", mode="event")
    r = sim.run()
    fin = sim.jstate.finished
    assert isinstance(fin, FinishedJobs) and len(fin) == len(r.job_objects)
    times = [fin[k].completion_s for k in fin]
    assert times == sorted(times)
    assert {k: fin[k] for k in fin} == {j.id: j for j in r.job_objects}
    assert "nope" not in fin and "j3" in fin
    with pytest.raises(KeyError):
        fin["nope"]
    assert [j.id for j in fin.values()] == list(fin)
    assert list(copy.deepcopy(fin)) == list(fin) and fin.copy()["j1"] is fin["j1"]


def test_workload_fields_read_through_the_workload_job():
    wl = _workload(10)
    sim = simulator(wl, servers=3, gpus_per_server=4, scheduler="fifo", mode="event")
    sim.reset()
    for w, j in zip(wl.jobs, sim.jobs):
        assert j.w is w
        for f in ("id", "arrival_s", "gpus", "iterations", "iteration_time_s", "model", "predicted_iterations",
                  "deadline_s", "user", "group", "spec", "tracked", "gpu_type"):
            assert getattr(j, f) == getattr(w, f), f
        assert j.duration_alone_s == w.duration_alone_s
    h = Job("h", 1, 2, 3, 4, model="m", deadline_s=9.0, user="u", group="g", tracked=False, gpu_type="K80")
    assert (h.model, h.deadline_s, h.user, h.group, h.tracked, h.gpu_type, h.iteration_time_s) == \
        ("m", 9.0, "u", "g", False, "K80", 4.0)
    assert copy.deepcopy(h).w is h.w  # read-only: shared by copies
    with pytest.raises(AttributeError):
        h.model = "x"  # type: ignore[misc]  # read-only, like every workload field


def test_a_job_takes_at_most_224_bytes():
    # 24 slots; each slot more is 8 MB at a million jobs (the target: every Blox policy under 1 GB there)
    assert sys.getsizeof(Job("a", 0.0, 1, 1.0, 1.0)) <= 224


def test_results_of_a_finished_run_are_independent_copies():
    sim = simulator(_workload(), servers=3, gpus_per_server=4, scheduler="las", mode="event")
    r1 = sim.run()
    ts = r1.timeseries.copy()
    r1.timeseries.loc[0, "t_s"] = -1.0
    r1.timeseries.iloc[1, 1] = 99
    r2 = sim.result()
    assert r2.timeseries.equals(ts) and r2.summary == r1.summary
    assert r2.jobs.equals(r1.jobs)
    # the same run again from scratch gives the same table
    assert sim.run().timeseries.equals(ts)
