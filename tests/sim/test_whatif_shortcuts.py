"""What-if switching's shortcuts change nothing: ``run_whatif`` with its own copies (``whatif._evaluate``: the
copies share what a candidate's run cannot touch) gives the same points, scores, choices and per-job results as
the plain method, written out here: one whole ``Simulator.clone()`` per candidate, switched with the wrappers'
``switch``, and the live run stepped by itself (``live_runs_one=False``; by default, with lookahead "workload" and
a window not past the next point, the live run runs one candidate's window itself and the chosen run goes on as
the live run). A policy that draws from the run's random generator (``view.extra["rng"]``) is among the candidates,
so a shared generator that was not put back would change its draws and the choices. The plain method copies the
switching admission by copy.deepcopy's generic path, not by its own ``__deepcopy__`` (a shortcut too), and the runs
compare their own figures as well (decisions, events, queue)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from tests.sim.test_sim_stepping import Counting

from optsched.cluster import Cluster
from optsched.generators.workload import synthetic_workload
from optsched.problems.workload import Workload
from optsched.sim import whatif as wi
from optsched.sim.base import DecisionBuilder, SchedulerPlacer
from optsched.sim.engine import SimulationStalled, Simulator
from optsched.sim.fitting import first_free
from optsched.sim.registry import build_scheduling
from optsched.sim.state import QUEUED, Placement


class RandomOrder(SchedulerPlacer):
    """Waiting jobs in an order drawn from the run's generator, each (with probability 3/4, also drawn) on the
    first free GPUs that fit; never preempts (a test policy whose decisions depend on ``view.extra["rng"]``)."""

    name = "test-random-order"

    def decide(self, view):
        b = DecisionBuilder(view)
        waiting = sorted((j for j in view.active() if j.status == QUEUED), key=lambda j: j.index)
        rng = view.extra["rng"]
        for k in rng.permutation(len(waiting)):
            if rng.random() >= 0.75:
                continue
            got = first_free(b.free, waiting[k].gpus)
            if got is not None:
                b.launch(waiting[k], Placement.of(got))
        return b.build()


def _plain_evaluate(live, n, horizon_s, lookahead, metric, out, shared=(), unfinished=None, resets=(), forced=None):
    """The method without shortcuts: a whole clone per candidate, switched by the wrappers, run to the window's end
    (``shared``, ``unfinished``, ``resets`` and ``forced`` ignored: nothing is run in place, the jobs scored are found
    by a scan of every job, nothing is reset by hand, and every window is run)."""
    t0 = live.now
    t1 = t0 + horizon_s
    last = t0 if lookahead == "present" else t1
    idx = [j.index for j in live.jobs if math.isnan(j.completion_s) and j.arrival_s <= last]
    scores = []
    for i in range(n):
        twin = live.clone()
        twin.stop_when_tracked_done = False
        out.copies += 1
        twin.policy.switch(i)
        twin.admission.switch(i)
        if lookahead == "present":
            twin.admission.cutoff_s = t0
        try:
            twin.apply(twin.decide())
            while (v := twin.advance(until=t1)) is not None:
                twin.apply(twin.decide())
                if lookahead == "present" and not v.jobs.active and twin.admission.present_holding == 0:
                    break
        except SimulationStalled:
            pass
        scores.append(wi.score([twin.jobs[k] for k in idx], t0, t1, metric))
    return scores


def _plain(monkeypatch):
    """From now on the plain method: whole clones (``_plain_evaluate``), the switching admission copied by
    copy.deepcopy's generic path (not by its own ``__deepcopy__``, a shortcut under test)."""
    monkeypatch.setattr(wi, "_evaluate", _plain_evaluate)
    monkeypatch.delattr(wi.SwitchingAdmission, "__deepcopy__")


def _run(wl, cluster, pairs, **kw):
    res = wi.run_whatif(wl, cluster, pairs, **kw)
    out = res.custom["whatif"]
    s = res.summary  # the run's own figures too: its decisions, events and queue (a shared list would add rounds)
    return (out.times, out.scores, out.choices, res.jobs["completion_s"].tolist(), s["avg_jct_s"],
            (s["decisions"], s["events"], s["mean_queue"], s["max_queue"], s["preemptions_total"], s["end_s"]))


@pytest.mark.parametrize("lookahead", wi.LOOKAHEADS)
@pytest.mark.parametrize("seed, period_s, horizon_s, window", [
    (1, 1200, 2400, None),        # a window past the next point: every candidate on a copy
    (4, 1200, 2400, None),
    (1, 1800, 1800, None),        # window = period: the live run runs one candidate, the choice goes on
    (4, 1500, 1500, (5, 30)),     # ... with tracked jobs, stopping when they are done
    (1, 1800, 1800, (10, 30)),    # ... and a chosen run that ends in its window (the live run steps instead)
    (3, 600, 600, (0, 8)),
    (2, 2400, 1200, (0, 35)),     # a window shorter than the period
])
def test_the_shortcuts_keep_every_choice(monkeypatch, lookahead, seed, period_s, horizon_s, window):
    wl = synthetic_workload(40, load_jph=14.0, seed=seed, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2}, window=window)
    pairs = [("fifo", "accept-all"), (RandomOrder(), "accept-all"), ("las", "accept-all"), ("srtf", "accept-all"),
             ("las", "accept-1.2")]
    kw = dict(period_s=period_s, horizon_s=horizon_s, lookahead=lookahead, seed=seed,
              stop_when_tracked_done=window is not None)
    fast = _run(wl, (1, 4), pairs, **kw)
    _plain(monkeypatch)
    plain = _run(wl, (1, 4), pairs, **kw, live_runs_one=False)  # the live run steps itself, every candidate copied
    assert len(plain[0]) > 5 and len(set(plain[2])) > 1  # several points, and the choice does change
    assert fast[0] == plain[0]  # the same points
    assert fast[1] == plain[1]  # the same scores, exactly
    assert fast[2] == plain[2]  # the same choices
    assert np.array_equal(fast[3], plain[3], equal_nan=True) and fast[4:] == plain[4:]  # the same run


@pytest.mark.parametrize("seed", [1, 3])
def test_a_chosen_copy_that_drew_from_the_generator_goes_on_with_its_draws(seed):
    # window = period: when the random candidate is chosen while another runs (on the live run), its copy goes
    # on as the live run and must keep the generator where its window left it
    wl = synthetic_workload(40, load_jph=6.0, seed=seed, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2}, median_duration_s=1800)
    pairs = [("fifo", "accept-all"), ("las", "accept-all"), (RandomOrder(), "accept-all")]
    kw = dict(period_s=1800, horizon_s=1800, seed=seed)
    fast = wi.run_whatif(wl, (1, 4), pairs, **kw)
    plain = wi.run_whatif(wl, (1, 4), pairs, **kw, live_runs_one=False)
    f, p = fast.custom["whatif"], plain.custom["whatif"]
    assert f.reused > 0 and p.reused == 0
    assert sum(1 for a, b in zip(p.choices, p.choices[1:]) if a != b == 2) > 2  # switches to the random one
    assert (f.times, f.scores, f.choices) == (p.times, p.scores, p.choices)
    assert np.array_equal(fast.jobs["completion_s"], plain.jobs["completion_s"], equal_nan=True)


class Remembering(SchedulerPlacer):
    """First-fit launches of the waiting jobs, skipped at every third decision it has ever made: it counts them in
    ``memory``, a constructor parameter that its ``reset()`` keeps (a list, not a plain value). A copy must not
    run the live run's object of such a policy in place: a reset would not undo the window."""

    name = "test-remembering"

    def __init__(self, memory: list | None = None):
        self.memory = [] if memory is None else memory

    def decide(self, view):
        b = DecisionBuilder(view)
        self.memory.append(view.now)
        if len(self.memory) % 3:
            for j in sorted((j for j in view.active() if j.status == QUEUED), key=lambda j: j.index):
                got = first_free(b.free, j.gpus)
                if got is not None:
                    b.launch(j, Placement.of(got))
        return b.build()


@pytest.mark.parametrize("lookahead, period_s, horizon_s", [("workload", 1800, 1800), ("present", 1200, 2400)])
def test_a_policy_whose_reset_keeps_state_is_copied_not_run_in_place(monkeypatch, lookahead, period_s, horizon_s):
    assert wi._resets_whole(wi.build_policy("las")) and not wi._resets_whole(Remembering())
    wl = synthetic_workload(40, load_jph=14.0, seed=2, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2})
    pairs = [("fifo", "accept-all"), (Remembering(), "accept-all"), ("srtf", "accept-all")]
    kw = dict(period_s=period_s, horizon_s=horizon_s, lookahead=lookahead, seed=2)
    fast = _run(wl, (1, 4), pairs, **kw)
    _plain(monkeypatch)
    plain = _run(wl, (1, 4), pairs, **kw, live_runs_one=False)
    assert len(set(plain[2])) > 1  # the choice does change
    assert fast[1:3] == plain[1:3]
    assert np.array_equal(fast[3], plain[3], equal_nan=True) and fast[4:] == plain[4:]


@pytest.mark.parametrize("lookahead", wi.LOOKAHEADS)
def test_the_jobs_scored_are_those_a_scan_finds(monkeypatch, lookahead):
    # jobs listed out of arrival order, arriving on the 600 s grid (so some arrive exactly at a window's end): at
    # every point the jobs kept from point to point (_Unfinished) are those a scan of every job finds, in order
    base = synthetic_workload(40, load_jph=10.0, seed=5, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2})
    jobs = [dataclasses.replace(j, arrival_s=600.0 * round(j.arrival_s / 600.0)) for j in base.jobs]
    order = np.random.default_rng(0).permutation(len(jobs))
    wl = Workload(tuple(jobs[k] for k in order))
    seen = []
    at = wi._Unfinished.at

    def checked(self, sim_jobs, last):
        got = at(self, sim_jobs, last)
        seen.append((got, [j.index for j in sim_jobs if math.isnan(j.completion_s) and j.arrival_s <= last]))
        return got

    monkeypatch.setattr(wi._Unfinished, "at", checked)
    wi.run_whatif(wl, (1, 4), [("fifo", "accept-all"), ("srtf", "accept-all")], period_s=1200, horizon_s=1200,
                  lookahead=lookahead, seed=5)
    assert len(seen) > 5 and any(len(a) > 1 for a, _ in seen)
    assert all(a == b for a, b in seen)


@pytest.mark.parametrize("lookahead", wi.LOOKAHEADS)
@pytest.mark.parametrize("seed", [2, 3])
def test_an_admission_that_holds_jobs_is_copied_with_them(monkeypatch, lookahead, seed):
    # an accept-k candidate chosen at some points and switched away from while it holds jobs (the switch hands
    # them over): each copy's admissions and held jobs are its own (SwitchingAdmission.__deepcopy__)
    wl = synthetic_workload(40, load_jph=14.0, seed=seed, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2})
    pairs = [("fifo", "accept-all"), ("srtf", "accept-1.0"), ("las", "accept-all"), ("srtf", "accept-all")]
    kw = dict(period_s=1200, horizon_s=1200, lookahead=lookahead, seed=seed)
    handed = []
    switch = wi.SwitchingAdmission.switch

    def counted(self, i):
        handed.append(int(i) != self.active and self.current.holding > 0)
        switch(self, i)

    monkeypatch.setattr(wi.SwitchingAdmission, "switch", counted)
    fast = _run(wl, (1, 4), pairs, **kw)
    assert 1 in fast[2] and any(handed)  # the accept-k candidate is chosen, and switched away from holding jobs
    _plain(monkeypatch)
    plain = _run(wl, (1, 4), pairs, **kw, live_runs_one=False)
    assert fast[1:3] == plain[1:3]
    assert np.array_equal(fast[3], plain[3], equal_nan=True) and fast[4:] == plain[4:]


def _spy_windows(monkeypatch):
    """Count the windows that stopped or paused once their score was settled, and the chosen runs resumed."""
    seen = {"paused": 0, "resumed": 0}
    forward = wi._forward

    def spied(sim, t1, stop_s, settled=None, forced=None):
        stall, paused = forward(sim, t1, stop_s, settled, forced)
        seen["paused"] += paused
        seen["resumed"] += settled is None
        return stall, paused

    monkeypatch.setattr(wi, "_forward", spied)
    return seen


@pytest.mark.parametrize("seed, window", [(1, None), (4, (5, 30))])
def test_windows_stop_once_their_score_is_settled_and_the_chosen_one_resumes(monkeypatch, seed, window):
    # long jobs, so that late in a window none of the scored jobs can finish before its end: the windows stop
    # there (and the chosen run, paused, goes on to the next point), with every score, choice and completion as
    # the plain method's, which runs every window to its end
    wl = synthetic_workload(40, load_jph=10.0, seed=seed, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2}, median_duration_s=5400,
                            window=window)
    pairs = [("fifo", "accept-all"), (RandomOrder(), "accept-all"), ("las", "accept-all"), ("srtf", "accept-all"),
             ("las", "accept-1.2")]
    kw = dict(period_s=1800, horizon_s=1800, seed=seed, stop_when_tracked_done=window is not None)
    seen = _spy_windows(monkeypatch)
    fast = _run(wl, (1, 4), pairs, **kw)
    assert seen["paused"] > 10 and seen["resumed"] > 2  # the shortcut is taken, also by chosen runs
    _plain(monkeypatch)
    plain = _run(wl, (1, 4), pairs, **kw, live_runs_one=False)
    assert len(set(plain[2])) > 1
    assert fast[:3] == plain[:3]
    assert np.array_equal(fast[3], plain[3], equal_nan=True) and fast[4:] == plain[4:]


def test_a_window_stopped_too_early_would_be_seen(monkeypatch):
    # the comparison can fail: a window that stops at its first decision after the point (as if its score were
    # settled there) changes the scores
    wl = synthetic_workload(40, load_jph=10.0, seed=1, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2}, median_duration_s=5400)
    pairs = [("fifo", "accept-all"), ("las", "accept-all"), ("srtf", "accept-all")]
    kw = dict(period_s=1800, horizon_s=1800, seed=1)
    right = _run(wl, (1, 4), pairs, **kw)
    monkeypatch.setattr(wi._Settled, "__call__", lambda self, now: now > self.lim - 1800)
    wrong = _run(wl, (1, 4), pairs, **kw)
    assert wrong[1] != right[1]


@pytest.mark.parametrize("name", ["fifo", "las", "srtf", "tiresias"])
def test_the_cheap_reset_leaves_what_reset_leaves(name):
    # a policy that ran part of a run, reset cheaply (wi._Reset), holds what Params.reset leaves; a part that kept
    # state, or an attribute a run added, falls back on reset()
    wl = synthetic_workload(30, load_jph=14.0, seed=3, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2})
    a, b = wi.build_policy(name), wi.build_policy(name)
    r = wi._Reset(a)
    assert r.fast
    for p in (a, b):
        sim = wi.simulator(wl, (1, 4), scheduler=p, mode="round", seed=3)
        sim.reset()
        for _ in range(12):
            if sim.advance() is None:
                break
            sim.apply(sim.decide())
    assert a._q or a._r or a._entry  # it holds run state
    r(a)
    b.reset()

    def state(p):
        return ({k: (v if k not in ("scheduling", "placement") else vars(v)) for k, v in vars(p).items()})

    assert state(a) == state(b)
    a.scheduling.cache = {1: 2}  # a part that keeps state: reset() runs
    a.extra = 1
    r(a)
    assert not hasattr(a.scheduling, "cache") and not hasattr(a, "extra") and state(a) == state(b)


@pytest.mark.parametrize("metric", ["responsiveness", "both"])
def test_windows_scored_on_first_starts_run_to_their_end(monkeypatch, metric):
    # a later decision may still start a job: with a score that counts first starts no window stops early
    wl = synthetic_workload(40, load_jph=10.0, seed=1, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2}, median_duration_s=5400)
    pairs = [("fifo", "accept-all"), ("las", "accept-all"), ("srtf", "accept-all")]
    kw = dict(period_s=1800, horizon_s=1800, seed=1, metric=metric)
    seen = _spy_windows(monkeypatch)
    fast = _run(wl, (1, 4), pairs, **kw)
    assert seen["paused"] == 0
    _plain(monkeypatch)
    plain = _run(wl, (1, 4), pairs, **kw, live_runs_one=False)
    assert fast[:3] == plain[:3]
    assert np.array_equal(fast[3], plain[3], equal_nan=True) and fast[4:] == plain[4:]


@pytest.mark.parametrize("seed, period_s, horizon_s", [(2, 1200, 2400), (3, 1200, 2400), (2, 1200, 1200)])
def test_accept_k_copies_run_bare_with_their_held_jobs(monkeypatch, seed, period_s, horizon_s):
    # a copy whose candidate admits by accept-k, with nothing to hand over, runs the copy's accept-k itself
    # (without the switching wrapper); when that candidate is the live run's active one its copy holds jobs, and
    # must hold the very same (a horizon past the next point puts the active candidate on a copy too)
    wl = synthetic_workload(40, load_jph=14.0, seed=seed, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2})
    pairs = [("fifo", "accept-all"), ("srtf", "accept-1.0"), ("las", "accept-all"), ("las", "accept-1.0")]
    kw = dict(period_s=period_s, horizon_s=horizon_s, seed=seed)
    bare = {"k": 0, "holding": 0}
    copy_for = wi._copy_for

    def spied(live, i, shared=(), **kw):
        twin = copy_for(live, i, shared, **kw)
        if type(twin.admission) is wi.AcceptK:
            assert twin.admission is not live.admission.candidates[i]  # the copy's own
            bare["k"] += 1
            bare["holding"] += twin.admission.holding > 0
        return twin

    monkeypatch.setattr(wi, "_copy_for", spied)
    fast = _run(wl, (1, 4), pairs, **kw)
    assert bare["k"] > 5 and (bare["holding"] > 0 or horizon_s <= period_s)
    monkeypatch.setattr(wi, "_copy_for", copy_for)
    _plain(monkeypatch)
    plain = _run(wl, (1, 4), pairs, **kw, live_runs_one=False)
    assert len(set(plain[2])) > 1 and {1, 3} & set(plain[2])  # an accept-k candidate is chosen
    assert fast[:3] == plain[:3]
    assert np.array_equal(fast[3], plain[3], equal_nan=True) and fast[4:] == plain[4:]


@pytest.mark.parametrize("seed, window", [(1, (0, 12)), (4, (5, 30))])
def test_the_live_run_runs_its_window_after_the_last_tracked_arrival(monkeypatch, seed, window):
    # after the last tracked arrival the live run might end in a window on its tracked jobs; where one of them
    # cannot finish in the window whatever is decided (wi._some_cannot_finish), it still runs its own window
    # itself (and the choice goes on), with every score, choice and completion as the plain method's. (Were the
    # bound wrong, test_the_shortcuts_keep_every_choice's chosen runs that end in their window would differ.)
    wl = synthetic_workload(40, load_jph=10.0, seed=seed, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2}, median_duration_s=5400,
                            window=window)
    last = max(j.arrival_s for j in wl.jobs if j.tracked)
    pairs = [("fifo", "accept-all"), (RandomOrder(), "accept-all"), ("las", "accept-all"), ("srtf", "accept-all")]
    kw = dict(period_s=1800, horizon_s=1800, seed=seed, stop_when_tracked_done=True)
    late = []
    reusing = wi._evaluate_reusing

    def spied(live, n, horizon_s, *a, may_end=False, **k):
        if live.now + horizon_s >= last:
            late.append(may_end)
        return reusing(live, n, horizon_s, *a, may_end=may_end, **k)

    monkeypatch.setattr(wi, "_evaluate_reusing", spied)
    fast = _run(wl, (1, 4), pairs, **kw)
    assert late.count(False) > 2  # the live run ran its own window at late points
    _plain(monkeypatch)
    plain = _run(wl, (1, 4), pairs, **kw, live_runs_one=False)
    assert len(set(plain[2])) > 1
    assert fast[:3] == plain[:3]
    assert np.array_equal(fast[3], plain[3], equal_nan=True) and fast[4:] == plain[4:]


@pytest.mark.parametrize("mode", ["round", "event"])
def test_a_lean_copy_runs_as_a_recording_one_without_records(mode):
    # the engine's lean flag: a copy set lean mid-run gives the same jobs and counters as one that is not, keeps no
    # time series records and calls no collectors from there on (the original, not lean, goes on recording)
    wl = synthetic_workload(30, load_jph=14.0, seed=2, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2})
    sim = Simulator(wl, Cluster.homogeneous(1, 4), scheduling=build_scheduling("las"), mode=mode,
                    collectors=[Counting()])
    sim.reset()
    for _ in range(12):
        sim.apply(sim.decide()) if sim.advance() is not None else None
    full, lean = sim.clone(), sim.clone()
    lean.lean = True
    at, calls = len(sim._ts), sim.collectors[0].n
    for s in (full, lean):
        while s.advance() is not None:
            s.apply(s.decide())
    assert not sim.lean and not full.lean and full.done and lean.done
    assert len(full._ts) > at and len(lean._ts) == at  # (four numbers a record)
    assert full.collectors[0].n > calls and lean.collectors[0].n == calls
    for a, b in zip(full.jobs, lean.jobs):
        assert (a.completion_s, a.first_start_s, a.preemptions, a.attained_gpu_s) == \
            (b.completion_s, b.first_start_s, b.preemptions, b.attained_gpu_s)
    assert (full._decisions, full._events, full._preemptions, full.now) == \
        (lean._decisions, lean._events, lean._preemptions, lean.now)


def test_the_copies_that_never_go_on_run_lean_and_the_live_run_never(monkeypatch):
    # lookahead "present" (and live_runs_one=False): every window runs on a copy that is only scored: lean, and its
    # window writes no record. The live run stays recording (the shortcut tests above compare its queue figures,
    # read from the time series, with the plain method's); a copy that may go on as the live run (lookahead
    # "workload" with live_runs_one) is never lean
    copies: list = []
    copy_for = wi._copy_for

    def spied(live, i, shared=(), bare=False):
        assert not live.lean
        twin = copy_for(live, i, shared, bare)
        copies.append((twin, len(twin._ts)))
        return twin

    monkeypatch.setattr(wi, "_copy_for", spied)
    wl = synthetic_workload(40, load_jph=14.0, seed=1, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2})
    pairs = [("fifo", "accept-all"), ("las", "accept-all"), ("srtf", "accept-all")]
    for look, reuse in (("present", True), ("workload", False), ("workload", True)):
        copies.clear()
        wi.run_whatif(wl, (1, 4), pairs, period_s=1800, horizon_s=1800, lookahead=look, live_runs_one=reuse, seed=1)
        assert sum(twin._decisions > 0 for twin, _ in copies) > 10
        if look == "workload" and reuse:
            assert not any(twin.lean for twin, _ in copies)
        else:
            assert all(twin.lean and len(twin._ts) == n for twin, n in copies)
