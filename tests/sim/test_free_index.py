"""Issue 29's engine shortcuts against their plain references.

* ``fitting.FreeIndex`` (servers by free GPU count, one per placement walk) gives the placement of the plain
  ``consolidated`` rule on the same free GPUs after any sequence of placements taken through it (``take``,
  ``taken`` or ``claim``, which finds and takes at once);
* ``ClusterState``'s list of free counts (what ``occupy`` and ``release`` read) stays equal to its array, in
  copies too; ``engine._settle_young`` leaves a caller's frozen objects frozen;
* a run whose walk asks ``Consolidated.find`` itself (a subclass with its own ``find`` gets no finder) gives the
  same per-job results as one whose walk uses the index;
* ``AdmissionPolicy.admits_all`` (the engine then skips ``admit``) is not inherited by a subclass with its own
  ``admit``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.sim.test_sim_invariants import cases

from optsched.sim import Workload, WorkloadJob, build_policy, simulate
from optsched.sim.base import Composed
from optsched.sim.fitting import FreeIndex, consolidated
from optsched.sim.policies import AcceptAll, Consolidated
from optsched.sim.state import ClusterState, JobState, SimView

COLS = ["first_start_s", "completion_s", "preemptions", "launches", "migrations", "attained_gpu_s"]


@st.composite
def walks(draw):
    uniform = draw(st.booleans())
    n = draw(st.integers(1, 12))
    if uniform:
        caps = [draw(st.integers(1, 8))] * n
    else:
        caps = draw(st.lists(st.integers(1, 8), min_size=n, max_size=n))
    free = [draw(st.integers(0, c)) for c in caps]
    demands = draw(st.lists(st.integers(1, sum(caps) + 2), min_size=1, max_size=15))
    return (np.array(caps, dtype=np.int64), np.array(free, dtype=np.int64), demands,
            draw(st.sampled_from(["take", "taken", "claim"])))


@settings(max_examples=300)
@given(walks())
def test_free_index_answers_as_the_plain_rule_while_placements_are_taken(case):
    cap, free, demands, how = case
    max_cap, uniform = int(cap.max()), bool((cap == cap.max()).all())
    ix = FreeIndex(free, cap, max_cap, uniform)
    ref = free.copy()
    for g in demands:
        want = consolidated(g, ref.copy(), cap, max_cap, uniform)
        got = ix.claim(g) if how == "claim" else ix.consolidated(g)  # (claim: found and taken at once)
        assert got == want
        if got is None:
            continue
        for s, c in zip(want.servers, want.counts):
            ref[s] -= c
        if how == "taken":  # the caller takes the GPUs itself, then tells the index
            for s, c in zip(got.servers, got.counts):
                free[s] -= c
            ix.taken(got)
        elif how == "take":
            ix.take(got)
        assert free.tolist() == ref.tolist()


class FindItself(Consolidated):
    """Consolidated with a find of its own (the same rule): its walk gets no finder and asks find every time."""

    def find(self, job, free, view):
        return super().find(job, free, view)


@settings(max_examples=60)
@given(cases())
def test_a_walk_with_the_index_decides_what_find_decides(case):
    wl, cluster, cfg = case
    cfg = dict(cfg)
    opts = {k: v for k, v in cfg.pop("placement").items() if k != "name"}
    sched = build_policy(cfg.pop("scheduler"), "consolidated").scheduling
    got = simulate(wl, cluster, scheduler=Composed(sched, Consolidated(**opts)), **cfg)
    sched2 = type(sched)(**sched.get_params())
    ref = simulate(wl, cluster, scheduler=Composed(sched2, FindItself(**opts)), **cfg)
    view = SimView(0.0, ClusterState(cluster), JobState(), None)
    assert FindItself().walk_finder(view.cluster.free, view) is None
    assert Consolidated().walk_finder(view.cluster.free, view) is not None or cluster.gpus_by_type.__len__() > 1
    assert np.array_equal(got.jobs[COLS].to_numpy(), ref.jobs[COLS].to_numpy(), equal_nan=True)


def test_admits_all_is_not_inherited_by_an_own_admit():
    class Hold(AcceptAll):  # admits one job per decision: the engine must ask it
        def __init__(self):
            self.queue = []

        def admit(self, new_jobs, view):
            self.queue.extend(new_jobs)
            return [self.queue.pop(0)] if self.queue else []

        @property
        def holding(self):
            return len(self.queue)

    assert AcceptAll.admits_all and not Hold.admits_all
    wl = Workload(tuple(WorkloadJob(f"j{i}", 0.0, 1, 10.0, 1.0) for i in range(3)))
    held = simulate(wl, servers=1, gpus_per_server=4, admission=Hold(), mode="event")
    free = simulate(wl, servers=1, gpus_per_server=4, mode="event")
    # accept-all: the three start at once; the holding admission (asked at every decision point: t = 0, then
    # each completion) lets one in at a time
    assert free.jobs["completion_s"].tolist() == [10.0, 10.0, 10.0]
    assert held.jobs["completion_s"].tolist() == [10.0, 20.0, 30.0]


@settings(max_examples=100)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 4), st.integers(1, 3)), min_size=1, max_size=30),
       st.integers(0, 29))
def test_the_list_of_free_counts_stays_the_array(moves, copy_at):
    import copy

    from optsched.cluster import Cluster
    from optsched.errors import ScheduleError
    from optsched.sim.state import Placement

    cs = ClusterState(Cluster.homogeneous(6, 4))
    held: list[tuple[str, Placement]] = []
    for k, (s, n, width) in enumerate(moves):
        if k == copy_at:
            cs = copy.deepcopy(cs)
        if held and k % 3 == 2:  # a release of the oldest placement
            jid, pl = held.pop(0)
            cs.release(jid, pl)
        else:
            pl = Placement.of({(s + i) % 6: n for i in range(width)})
            try:
                cs.occupy(f"j{k}", pl)
                held.append((f"j{k}", pl))
            except ScheduleError:  # (too few free GPUs: nothing changes)
                pass
        assert cs._fl == cs.free.tolist()
        assert cs.busy_gpus == 24 - sum(cs._fl)


def test_settle_young_keeps_a_callers_frozen_objects():
    import gc

    from optsched.sim.engine import _settle_young

    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        _settle_young()
        assert gc.get_freeze_count() == frozen > 0
    finally:
        gc.unfreeze()
    _settle_young()
    assert gc.get_freeze_count() == 0
