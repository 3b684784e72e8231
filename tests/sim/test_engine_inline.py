"""The engine's inline hot paths (issue 29) against the plain calls they stand for.

The engine does inline, for speed: ``Job.complete``, ``ClusterState.occupy`` / ``release`` of a one-server placement,
the constant model's ``alone_time_s``, ``Composed.on_completion``; ``Composed`` moves a launched job's queued entry to
the running list when the key is fixed (``SchedulingPolicy.fixed_key``) and keys a batch of admissions in one call
(``SchedulingPolicy.keys_at``). Each test below runs the plain path beside the fast one: subclasses of the policy,
the performance model and the cluster state turn the inline paths off (the engine takes them only for the exact
classes), and a stepping driver replays ``Job.complete`` on a copy of every job just before it completes.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from optsched.cluster import Cluster
from optsched.perf.constant import ConstantPerf
from optsched.problems.workload import Workload, WorkloadJob
from optsched.sim import Simulator
from optsched.sim.base import Composed, LaunchMechanism, SchedulingPolicy
from optsched.sim.policies import Consolidated, Fifo, Las
from optsched.sim.state import RUNNING, ClusterState, Job


def _workload(n: int, seed: int) -> Workload:
    rng = np.random.default_rng(seed)
    jobs = []
    t = 0.0
    for i in range(n):
        t += float(rng.exponential(40.0))
        g = int(rng.choice([1, 1, 2, 3, 4, 6, 8]))  # some jobs span two servers of 4
        jobs.append(WorkloadJob(f"j{i}", round(t, 3), g, float(rng.integers(50, 2000)), float(rng.uniform(0.5, 2.0))))
    return Workload(tuple(jobs))


class _PlainCluster(ClusterState):
    """A subclass: the engine calls its occupy and release (no inline one-server path)."""


class _PlainPerf(ConstantPerf):
    """A subclass: the engine calls its alone_time_s (no inline constant model)."""


class _PlainComposed(Composed):
    """Its own on_completion (the same): the engine calls it (no inline removal, no quick loop)."""

    def on_completion(self, job: Job, view) -> None:
        super().on_completion(job, view)


class _PlainFifo(Fifo):
    """FIFO without the fixed-key move: every launch is keyed anew, one key call per admitted job."""

    fixed_key = False

    def keys_at(self, jobs, now):
        return [self.key(j, now) for j in jobs]


def _table(sim: Simulator):
    res = sim.result()
    segs = {j.id: j.segments for j in sim.jobs}
    return res.jobs, res.timeseries, segs


def _run(wl: Workload, plain: bool, sched: str, mode: str, starvation_s: float) -> tuple:
    if sched == "fifo":
        sp: SchedulingPolicy = (_PlainFifo if plain else Fifo)(starvation_s=starvation_s)
    else:
        sp = Las(starvation_s=starvation_s)
    policy = (_PlainComposed if plain else Composed)(sp, Consolidated())
    sim = Simulator(wl, Cluster.homogeneous(4, 4), policy=policy, perf=(_PlainPerf if plain else ConstantPerf)(),
                    launch=LaunchMechanism(restore_s=30.0), mode=mode, round_s=60.0)
    sim.reset()
    if plain:
        sim.cstate.__class__ = _PlainCluster  # (the view holds the same object)
    while sim.advance() is not None:
        sim.apply(sim.decide())
    return _table(sim)


@pytest.mark.parametrize("sched, mode, starvation_s", [("fifo", "round", 3600.0 * 1000), ("fifo", "event", 600.0),
                                                       ("fifo", "round", 900.0), ("las", "round", 3600.0 * 1000),
                                                       ("las", "event", 1200.0)])
@pytest.mark.parametrize("seed", [0, 1])
def test_inline_paths_equal_plain_calls(sched, mode, starvation_s, seed):
    wl = _workload(120, seed)
    fast, plain = _run(wl, False, sched, mode, starvation_s), _run(wl, True, sched, mode, starvation_s)
    a, b = fast[0], plain[0]
    assert list(a.columns) == list(b.columns)
    for c in a.columns:  # bit for bit (NaN equals NaN)
        x, y = a[c].to_numpy(), b[c].to_numpy()
        if x.dtype.kind == "f":
            assert x.tobytes() == y.tobytes(), c
        else:
            assert x.tolist() == y.tolist(), c
    assert fast[1].to_numpy().tobytes() == plain[1].to_numpy().tobytes()
    assert fast[2] == plain[2]
    # the case is not trivial: jobs waited, and (with a bump or LAS) some were preempted
    assert (a["first_start_s"] > a["arrival_s"]).any()
    if sched == "las" or starvation_s < 3600.0:
        assert a["preemptions"].sum() > 0


def test_inline_completion_is_job_complete():
    """Every completion the engine makes inline leaves the job as ``Job.complete`` does (all its slots), on a copy
    of the job taken just before (jobs preempted and resumed, on one server and on two)."""
    wl = _workload(80, 3)
    sim = Simulator(wl, Cluster.homogeneous(4, 4), scheduling=Las(), placement=Consolidated(),
                    launch=LaunchMechanism(restore_s=20.0), mode="round", round_s=60.0)
    sim.reset()
    checked = resumed = 0
    while True:
        before = {j.id: copy.deepcopy(j) for j in sim.jobs if j.status == RUNNING}
        view = sim.advance()
        for ref in before.values():
            job = sim.jobs[ref.index]
            if job.status != RUNNING and job.completion_s == job.completion_s:  # completed in this advance
                pl = ref.complete(job.completion_s)
                assert pl is ref.placement or ref.segments[-1][2] is pl
                for name in Job.__slots__:
                    assert getattr(job, name) == getattr(ref, name) or (
                        getattr(job, name) != getattr(job, name) and getattr(ref, name) != getattr(ref, name)), name
                assert job.segments == ref.segments
                checked += 1
                resumed += job.preemptions > 0
        if view is None:
            break
        sim.apply(sim.decide())
    assert checked == len(wl.jobs) and resumed > 0


def test_keys_at_and_fixed_key_follow_the_key():
    """A subclass that redefines ``key`` alone gets the plain ``keys_at`` and no fixed-key promise back."""

    class ByGpus(Fifo):
        keys_change = "never"

        def key(self, job, now):
            return -job.gpus

    a, b = Job("a", 0, 1, 10, 1.0), Job("b", 5, 4, 10, 1.0)
    assert Fifo.fixed_key and Fifo().keys_at([a, b], 0.0) == [0.0, 5.0]
    assert not ByGpus.fixed_key and ByGpus.keys_at is SchedulingPolicy.keys_at
    assert ByGpus().keys_at([a, b], 0.0) == [-1, -4]
