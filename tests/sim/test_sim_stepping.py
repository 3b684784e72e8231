"""The steppable engine (reset / advance / decide / apply / done / result), outside drivers, and policy reset.

Hand-computed traces use the constant performance model with iteration time 1 s (iterations read as seconds).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from tests.sim.test_sim_invariants import cases

from optsched.cluster import Cluster
from optsched.errors import ScheduleError
from optsched.sim import (
    Decision,
    LaunchMechanism,
    MetricCollector,
    Placement,
    SimulationStalled,
    Simulator,
    Workload,
    WorkloadJob,
    build_admission,
    build_perf,
    build_policy,
    simulate,
)
from optsched.sim.registry import scheduler_names

COLS = ["first_start_s", "completion_s", "preemptions", "launches", "attained_gpu_s", "admitted_s"]
# a: 2 GPUs, 100 s at 0; b: 1 GPU, 50 s at 10; c: 1 GPU, 30 s at 20 (one server of 2 GPUs)
ABC = Workload((WorkloadJob("a", 0, 2, 100, 1.0), WorkloadJob("b", 10, 1, 50, 1.0),
                WorkloadJob("c", 20, 1, 30, 1.0)))


def _sim(wl=ABC, scheduler="fifo", mode="event", servers=1, gpus=2, **kw):
    cl = Cluster.homogeneous(servers, gpus)
    return Simulator(wl, cl, policy=build_policy(scheduler, kw.pop("placement", "consolidated")),
                     admission=build_admission(kw.pop("admission", "accept-all")),
                     perf=build_perf(kw.pop("perf", None)), mode=mode, **kw)


def _times(result):
    return {j.id: (j.first_start_s, j.completion_s) for j in result.job_objects}


@settings(max_examples=40)
@given(cases())
def test_stepping_with_the_policys_decisions_is_run(case):
    wl, cluster, cfg = case
    cfg = dict(cfg)
    whole = simulate(wl, cluster, **cfg)
    policy = build_policy(cfg.pop("scheduler"), cfg.pop("placement"))
    sim = Simulator(wl, cluster, policy=policy, admission=build_admission(cfg.pop("admission")),
                    launch=LaunchMechanism(restore_s=cfg["restore_s"]), perf=cfg["perf"], mode=cfg["mode"],
                    round_s=cfg["round_s"])
    view = sim.reset()
    assert view.now == 0.0 and not sim.done and not view.jobs.active
    points = 0
    while (view := sim.advance()) is not None:
        assert sim.decision_due and view.now == sim.now
        sim.apply(sim.decide())   # the policy's decision: the engine knows it is the policy's own
        points += 1
    assert sim.done and sim.advance() is None
    stepped = sim.result()
    assert np.array_equal(stepped.jobs[COLS].to_numpy(), whole.jobs[COLS].to_numpy(), equal_nan=True)
    assert points == stepped.summary["decisions"] == whole.summary["decisions"]
    assert stepped.summary["events"] == whole.summary["events"]
    # a driver that asks the policy itself is an outside driver to the engine: the policy may then be asked at
    # more decision points (no round skipped on its promise), with the same per-job results
    sim.reset()
    while (view := sim.advance()) is not None:
        sim.apply(policy.decide(view))
    driven = sim.result()
    assert np.array_equal(driven.jobs[COLS].to_numpy(), whole.jobs[COLS].to_numpy(), equal_nan=True)
    assert driven.summary["decisions"] >= whole.summary["decisions"]


def test_advance_until_stops_between_decision_points():
    # FIFO on ABC, event mode: decision points at 0, 10, 20, 100, 130, 150.
    sim = _sim()
    sim.reset()
    assert sim.advance(until=-5) is None and sim.now == 0.0 and not sim.done  # nothing at or before -5
    assert sim.advance(until=5).now == 0.0
    sim.apply(sim.decide())
    assert sim.advance(until=5) is None and sim.now == 5.0 and not sim.done
    a = next(j for j in sim.jobs if j.id == "a")
    assert a.executed_at(sim.now) == 5.0 and a.running
    assert sim.advance(until=10).now == 10.0
    sim.apply(sim.decide())
    while sim.advance() is not None:
        sim.apply(sim.decide())
    assert _times(sim.result()) == {"a": (0, 100), "b": (100, 150), "c": (100, 130)}


def test_stepping_misuse_is_a_clear_error():
    sim = _sim()
    with pytest.raises(RuntimeError, match="reset"):
        sim.advance()
    sim.reset()
    with pytest.raises(RuntimeError, match="no decision is due"):
        sim.apply(Decision())
    view = sim.advance()
    with pytest.raises(RuntimeError, match="apply"):
        sim.advance()
    a = view.jobs.active["a"]
    sim.apply(Decision(launch={a: Placement.of({0: 2})}))
    sim.advance()
    with pytest.raises(ScheduleError, match="not waiting"):   # a is running already
        sim.apply(Decision(launch={a: Placement.of({0: 2})}))


def test_outside_driver_waits_then_the_policy_takes_over():
    # the driver decides nothing at t=0; FIFO takes over at the next decision point (b's arrival at 10): a starts
    # at 10 (b blocked behind it), a ends at 110, then b 110-160 and c 110-140.
    sim = _sim()
    sim.reset()
    sim.advance()
    sim.apply(Decision())
    while sim.advance() is not None:
        sim.apply(sim.decide())
    assert _times(sim.result()) == {"a": (10, 110), "b": (110, 160), "c": (110, 140)}


def test_outside_empty_decision_does_not_let_the_engine_skip_rounds():
    # one job, round mode (10 s). FIFO promises "no change without an event" after its own decisions, which
    # lets the engine skip rounds; after the driver's empty decision at 0 that promise does not hold: the next
    # round (10) is a decision point, FIFO starts the job then, done at 110. (Had the promise been kept, no
    # decision point would ever come and the run would stall.)
    wl = Workload((WorkloadJob("a", 0, 1, 100, 1.0),))
    sim = _sim(wl, mode="round", round_s=10)
    sim.reset()
    assert sim.advance().now == 0
    sim.apply(Decision())
    assert sim.advance().now == 10
    sim.apply(sim.decide())
    assert sim.advance() is None and _times(sim.result()) == {"a": (10, 110)}


def test_outside_driver_preempts_and_launches_composed():
    # LAS, event mode, ABC. At t=10 (b arrives) the driver, instead of LAS (which would preempt a for b), keeps
    # a running. At t=20 (c arrives) LAS decides: attained a 20, b 0, c 0 -> b preempts a, c takes the other
    # GPU: b 20-, c 20-50. At 50 (c done): a (20) < b (30): a preempts b and runs 50-130 (80 left); b (30 done)
    # resumes at 130, done at 150. One preemption each for a and b.
    sim = _sim(scheduler="las")
    sim.reset()
    sim.advance()
    sim.apply(sim.decide())           # t=0: a starts
    assert sim.advance().now == 10
    sim.apply(Decision())             # the driver keeps a running
    while sim.advance() is not None:
        sim.apply(sim.decide())
    r = sim.result()
    assert _times(r) == {"a": (0, 130), "b": (20, 150), "c": (20, 50)}
    assert r.jobs.set_index("id")["preemptions"].to_dict() == {"a": 1, "b": 1, "c": 0}


def test_outside_driver_with_a_srpt_starts_a_job_before_its_virtual_completion():
    # A-SRPT (virtual sizes a 10, b 2 on one 2-GPU server) would start b at 2 and a at 12. The driver starts a
    # at 0 instead; A-SRPT queues b at 2 (no GPU free), starts it when a ends at 10 (10-14) and never starts a
    # a second time when a completes on the virtual machine at 12.
    wl = Workload((WorkloadJob("a", 0, 2, 10, 1.0, predicted_iterations=10),
                   WorkloadJob("b", 0, 1, 4, 1.0, predicted_iterations=4)))
    sim = _sim(wl, scheduler="a-srpt")
    view = sim.reset()
    view = sim.advance()
    sim.apply(Decision(launch={view.jobs.active["a"]: Placement.of({0: 2})}))
    while sim.advance() is not None:
        sim.apply(sim.decide())
    assert _times(sim.result()) == {"a": (0, 10), "b": (10, 14)}


def test_outside_preemption_requeues_a_job_of_an_ordered_baseline():
    # wcs-subtime on one 2-GPU server: a (2 GPUs, 10 s), b (1 GPU, 4 s), c (1 GPU, 20 s) at 0; d (1 GPU, 1 s)
    # at 5. The policy starts a at 0. At 5 the driver preempts a and starts d; the policy decides again at 5
    # (after a preemption): a (requeued, arrival 0) needs 2 GPUs, 1 is free: b (next by submission) starts,
    # 5-9. d ends at 6: c starts 6-26. b ends at 9: a still needs 2. c ends at 26: a resumes (5 left): 26-31.
    wl = Workload((WorkloadJob("a", 0, 2, 10, 1.0), WorkloadJob("b", 0, 1, 4, 1.0),
                   WorkloadJob("c", 0, 1, 20, 1.0), WorkloadJob("d", 5, 1, 1, 1.0)))
    sim = _sim(wl, scheduler="wcs-subtime")
    sim.reset()
    sim.advance()
    sim.apply(sim.decide())
    view = sim.advance()
    assert view.now == 5
    act = view.jobs.active
    sim.apply(Decision(launch={act["d"]: Placement.of({0: 1})}, preempt=[act["a"]]))
    while sim.advance() is not None:
        sim.apply(sim.decide())
    r = sim.result()
    assert _times(r) == {"a": (0, 31), "b": (5, 9), "c": (6, 26), "d": (5, 6)}
    assert r.jobs.set_index("id").loc["a", "preemptions"] == 1


def test_own_decisions_are_checked_for_a_stall_outside_ones_are_not():
    # event mode, one job: a driver deciding nothing leaves nothing that could happen: advance() reports the
    # stall; a policy that starts nothing is caught right after its decision (as before the stepping API)
    wl = Workload((WorkloadJob("a", 0, 1, 10, 1.0),))
    sim = _sim(wl)
    sim.reset()
    sim.advance()
    sim.apply(Decision())
    with pytest.raises(SimulationStalled, match="nothing runs or arrives"):
        sim.advance()


# -- reset: one policy object, two runs ------------------------------------------------------------------------
def _reset_workload() -> Workload:
    return Workload(tuple(WorkloadJob(f"j{i}", float(7 * i), 1 + i % 3, float(20 + 13 * i), 1.0,
                                      predicted_iterations=float(15 + 11 * i)) for i in range(9)))


# the RL policies warn, as documented, that their agent cannot see a 2 x 2 cluster and place FIFO instead
@pytest.mark.filterwarnings("ignore:rl-(base|hybrid). the agent was trained for:UserWarning")
def test_every_registered_scheduler_runs_twice_with_one_object():
    wl = _reset_workload()
    names = scheduler_names()
    assert {"fifo", "las", "srtf", "tiresias", "a-srpt", "a-srpt-perfect", "spjf", "spwf", "wcs-duration",
            "wcs-workload", "wcs-subtime"} <= set(names)
    for name in names:
        for mode in ("event", "round"):
            policy = build_policy(name, "first-free")
            adm = build_admission("accept-1.0")
            runs = [simulate(wl, servers=2, gpus_per_server=2, scheduler=policy, admission=adm, mode=mode,
                             round_s=15) for _ in range(2)]
            fresh = simulate(wl, servers=2, gpus_per_server=2, scheduler=name, placement="first-free",
                             admission="accept-1.0", mode=mode, round_s=15)
            for r in runs:
                assert np.array_equal(r.jobs[COLS].to_numpy(), fresh.jobs[COLS].to_numpy(), equal_nan=True), \
                    (name, mode)


class Counting(MetricCollector):
    """Counts the decisions it is called at (``result.custom["n"]``); reset before each run."""

    name = "n"

    def reset(self):
        self.n = 0

    def collect(self, view):
        self.n += 1

    def result(self):
        return self.n


def test_simulator_reset_twice_and_collectors_reset():
    c = Counting()
    sim = Simulator(ABC, Cluster.homogeneous(1, 2), mode="event", collectors=[c],
                    policy=build_policy("a-srpt"))
    a, b = sim.run(), sim.run()
    assert a.custom == b.custom == {"n": a.summary["decisions"]}
    assert np.array_equal(a.jobs[COLS].to_numpy(), b.jobs[COLS].to_numpy(), equal_nan=True)
