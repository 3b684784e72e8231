"""Migration (Decision.migrate): a running job moves to another placement and keeps its progress; it stalls
LaunchMechanism.migration_s, counts in ``migrations`` (per job and in the summary), never in ``preemptions``.

Hand-computed with the constant model (iteration time 1 s; 1.25 x across servers), two servers of 2 GPUs,
FIFO + consolidated; the outside driver supplies the decision at b's arrival (t=30)."""

from __future__ import annotations

import pytest

from optsched.cluster import Cluster
from optsched.errors import InstanceError, ScheduleError
from optsched.sim import Decision, LaunchMechanism, Placement, Simulator, Workload, WorkloadJob, simulate

# a: 2 GPUs, 100 s at 0 (consolidated: server 0); b: 1 GPU, 10 s at 30; c: 2 GPUs, 50 s at 30
WL = Workload((WorkloadJob("a", 0, 2, 100, 1.0), WorkloadJob("b", 30, 1, 10, 1.0), WorkloadJob("c", 30, 2, 50, 1.0)))


def _drive(decide_at_30, wl=WL, migration_s=5.0, restore_s=100.0):
    sim = Simulator(wl, Cluster.homogeneous(2, 2), mode="event",
                    launch=LaunchMechanism(restore_s=restore_s, migration_s=migration_s))
    sim.reset()
    driven = False
    while (view := sim.advance()) is not None:
        if view.now == 30 and not driven:   # the first decision point at 30 is the driver's
            driven = True
            sim.apply(decide_at_30(view))
        else:
            sim.apply(sim.decide())
    r = sim.result()
    return {j.id: j for j in r.job_objects}, r


def test_migration_keeps_progress_and_counts_apart():
    # at 30: a moves to server 1 (30 done, stall 5: progress again at 35, 70 left: done at 105), b starts on
    # server 0. c (2 GPUs) then waits: server 0 has 1 free GPU, server 1 none; at 40 b ends, c starts 40-90.
    def move(view):
        act = view.jobs.active
        return Decision(launch={act["b"]: Placement.of({0: 1})}, migrate={act["a"]: Placement.of({1: 2})})

    jobs, r = _drive(move)
    a = jobs["a"]
    assert (a.first_start_s, a.completion_s, a.preemptions, a.launches, a.migrations) == (0, 105, 0, 1, 1)
    assert [(s, e, pl.as_dict(), it) for s, e, pl, it in a.segments] == [(0, 30, {0: 2}, 30), (30, 105, {1: 2}, 70)]
    assert a.attained_gpu_s == 2 * 105          # it holds its GPUs through the migration stall
    assert (jobs["b"].first_start_s, jobs["b"].completion_s) == (30, 40)
    assert (jobs["c"].first_start_s, jobs["c"].completion_s) == (40, 90)
    s = r.summary
    assert (s["migrations"], s["migrations_total"], s["preemptions"], s["preemptions_total"]) == (1, 1, 0, 0)
    assert r.jobs.set_index("id")["migrations"].to_dict() == {"a": 1, "b": 0, "c": 0}
    # capacity at every instant: after the move server 1 holds a's 2 GPUs, server 0 b's one
    assert r.timeseries["busy_gpus"].max() <= 4


def test_migration_changes_speed_with_the_placement():
    # a spread over both servers after 30 (1.25 s per iteration): 70 x 1.25 = 87.5 after the 5 s stall: 122.5
    def spread(view):
        return Decision(migrate={view.jobs.active["a"]: Placement.of({0: 1, 1: 1})})

    jobs, _ = _drive(spread, wl=Workload(WL.jobs[:1] + (WorkloadJob("b", 30, 1, 10, 1.0),)))
    assert jobs["a"].completion_s == pytest.approx(122.5) and jobs["a"].iteration_now_s == 1.25


def test_two_jobs_swap_servers_in_one_decision():
    # x (2 GPUs, 100 s) on server 0, y (2 GPUs, 100 s) on server 1, both from 0; at 30 (z arrives) they swap:
    # both release first, then both take the other server; 5 s stall each: done at 105.
    wl = Workload((WorkloadJob("x", 0, 2, 100, 1.0), WorkloadJob("y", 0, 2, 100, 1.0),
                   WorkloadJob("z", 30, 1, 1, 1.0)))

    def swap(view):
        act = view.jobs.active
        return Decision(migrate={act["x"]: Placement.of({1: 2}), act["y"]: Placement.of({0: 2})})

    jobs, r = _drive(swap, wl=wl)
    assert [jobs[k].segments[-1][2].as_dict() for k in "xy"] == [{1: 2}, {0: 2}]
    assert jobs["x"].completion_s == jobs["y"].completion_s == 105 and r.summary["migrations_total"] == 2
    assert jobs["z"].first_start_s == 105


def test_restart_is_a_preemption_and_a_launch_not_a_migration():
    # a preempted and launched again in one decision (at 30, on server 1): one preemption, two launches, no
    # migration, and the resume stall (restore_s = 100): progress again at 130, 70 left: done at 200.
    def restart(view):
        a = view.jobs.active["a"]
        return Decision(preempt=[a], launch={a: Placement.of({1: 2})})

    jobs, r = _drive(restart, wl=Workload(WL.jobs[:2]))
    a = jobs["a"]
    assert (a.completion_s, a.preemptions, a.launches, a.migrations) == (200, 1, 2, 0)
    assert (r.summary["preemptions"], r.summary["migrations"]) == (1, 0)


@pytest.mark.parametrize("make, words", [
    (lambda act: Decision(migrate={act["a"]: Placement.of({0: 1, 1: 2})}), "placement has 3 GPUs"),
    (lambda act: Decision(migrate={act["b"]: Placement.of({1: 1})}), "not running"),
    (lambda act: Decision(preempt=[act["a"]], migrate={act["a"]: Placement.of({1: 2})}), "preempted in the same"),
    (lambda act: Decision(launch={act["b"]: Placement.of({1: 1})}, migrate={act["a"]: Placement.of({1: 2})}),
     "server 's1'"),
])
def test_bad_migrations_are_clear_errors(make, words):
    # capacity: a's 2 GPUs onto server 1 while b takes one of them is over capacity (launches follow migrations)
    with pytest.raises(ScheduleError, match=words):
        _drive(lambda view: make(view.jobs.active), wl=Workload(WL.jobs[:2]))


def test_migration_cost_parameter_is_validated_and_recorded():
    with pytest.raises(InstanceError) as ei:
        LaunchMechanism(migration_s=-1)
    assert ei.value.field == "migration_s"
    r = simulate(WL, servers=2, gpus_per_server=2, launch=LaunchMechanism(migration_s=7), mode="event")
    assert r.config["launch"]["migration_s"] == 7.0 and r.summary["migrations"] == 0


def test_migration_with_a_colocation_aware_model():
    # iteration time 1 s alone on a server, 2 s when another job shares it. x and y (1 GPU, 100 s) both start on
    # server 0 (consolidated) at 0 and share it: 15 iterations each by 30. At 30 the driver moves y to server 1
    # (no stall) and starts z (1 GPU, 1 iteration) beside it. x is alone: 85 left, done at 115. y and z share
    # server 1: z needs 2 s (done at 32), y does 1 iteration meanwhile, then 84 alone: done at 116.
    from optsched.perf.base import PerfModel

    class Crowded(PerfModel):
        colocation_aware = True

        def alone_time_s(self, job, placement):
            return job.iteration_time_s

        def iteration_times_s(self, running, cluster):
            return {j.id: j.iteration_time_s * (2.0 if cluster.colocated(j.placement, exclude=j.id) else 1.0)
                    for j in running}

    wl = Workload((WorkloadJob("x", 0, 1, 100, 1.0), WorkloadJob("y", 0, 1, 100, 1.0),
                   WorkloadJob("z", 30, 1, 1, 1.0)))
    sim = Simulator(wl, Cluster.homogeneous(2, 2), mode="event", perf=Crowded())
    sim.reset()
    while (view := sim.advance()) is not None:
        if view.now == 30:
            act = view.jobs.active
            assert act["y"].executed_at(30) == 15 and act["y"].placement.as_dict() == {0: 1}
            sim.apply(Decision(launch={act["z"]: Placement.of({1: 1})}, migrate={act["y"]: Placement.of({1: 1})}))
        else:
            sim.apply(sim.decide())
    done = {j.id: j.completion_s for j in sim.result().job_objects}
    assert done == pytest.approx({"x": 115, "y": 116, "z": 32})
