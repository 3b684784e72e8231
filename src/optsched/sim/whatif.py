"""What-if policy switching: Blox's automatic scheduler synthesizer (paper section 6.3, digest 002 section 5).

At chosen instants (every ``period_s``, Blox: every 10 rounds of 5 minutes) the live simulator is copied
([`clone`][optsched.sim.engine.Simulator.clone]: the engine's supported copy, which leaves the original untouched),
every candidate (scheduler x admission) pair is simulated forward on its own copy for ``horizon_s``, and the live
simulator switches to the pair with the best score for the next period. Rules and readings:
``docs/algorithms/whatif.md``.

* **Switching mid-run** is done by two wrappers the live simulator is built with:
  [`SwitchingPolicy`][optsched.sim.whatif.SwitchingPolicy]
  (delegates to the active scheduling policy; a policy switched in is reset and rebuilds its state from the view
  at its next decision: [`Composed`][optsched.sim.base.Composed], Gavel and Optimus do) and
  [`SwitchingAdmission`][optsched.sim.whatif.SwitchingAdmission] (hands the jobs the old admission policy still holds to
  the new one, first).
  The decision point at which the switch happens has already applied the old admission policy (the simulator
  applies admission before it asks for a decision), so an admission switch takes effect at the next one; the
  scheduling switch decides this very point.
* **Lookahead.** ``lookahead="workload"`` (default, the issue's reading): a copy runs the workload as it is,
  future arrivals included (an oracle on arrivals, as on job sizes: the copies know every job's work).
  ``lookahead="present"`` (Blox's code, ``predict_simulation.py``): a copy sees only the jobs that have arrived
  (later arrivals are held back by its admission wrapper and never admitted).
* **Score** (lower is better), over the jobs present at the instant or arriving within the horizon:
  ``"jct"`` the time they spend in the system within [now, now + horizon] (the share of their JCTs that the
  window decides: minimising it minimises the average number of jobs in the system, Little's law);
  ``"responsiveness"`` the time they wait for their first start within the window; ``"both"`` the sum (Blox's
  appendix A minimises JCT and responsiveness together).
* **Cost** (issue 29; none of this changes a point, a score, a choice or the run: ``tests/sim/test_whatif_shortcuts.py``
  compares with the plain method). A copy copies only what its candidate's run can touch
  ([`_copy_for`][optsched.sim.whatif._copy_for]: that candidate's policy, run without the wrapper; the run's random
  generator shared and put back after each copy). With lookahead ``workload`` and ``horizon_s <= period_s``
  (``live_runs_one``), the live run runs its active candidate's window itself instead of a copy, and the chosen
  run, stopped at the live run's next point, goes on as the live run (the live run switched to the choice would
  simulate that very window again); not while the live run could end in the window on its tracked jobs (all of
  them able to finish in it by [`_Settled`][optsched.sim.whatif._Settled]'s bound). With the
  score ``jct`` and the constant performance model a window stops once its score is settled (no job it scores can
  finish before its end: [`_Settled`][optsched.sim.whatif._Settled]); the chosen run pauses there instead and is
  resumed to the next point. A copy that never goes on as the live run (lookahead ``present``, or
  ``live_runs_one=False``) runs lean ([`Simulator`][optsched.sim.engine.Simulator]'s ``lean``: no time series, no
  collectors): only its jobs are read. A point's first window that takes only decisions every candidate takes
  alike from the same state (at most one waiting job, which fits; [`_Forced`][optsched.sim.whatif._Forced]) is every
  candidate's window: the others get its score without a run (candidate 0, the choice among equal scores, runs
  its own if it was not the first).

```pycon
>>> from optsched.generators.workload import synthetic_workload
>>> wl = synthetic_workload(40, load_jph=6.0, seed=1)
>>> res = run_whatif(wl, "4x4", [("fifo", "accept-all"), ("srtf", "accept-all")], period_s=3600, horizon_s=3600)
>>> out = res.custom["whatif"]
>>> out.n_points > 0, len(out.choices) == len(out.scores) == out.n_points
(True, True)
>>> out.copies + out.reused + out.skipped == 2 * out.n_points
True
>>> int(res.summary["finished_tracked"]), res.summary["switch_points"] == out.n_points
(40, True)

```
"""

from __future__ import annotations

import copy
import heapq
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, cast

import numpy as np

from ..cluster import Cluster, as_cluster
from ..errors import InstanceError
from ..limits import paused_gc
from ..params import Params
from ..perf.constant import ConstantPerf
from ..problems.workload import Workload, as_workload
from .base import AdmissionPolicy, Composed, Decision, LaunchMechanism, PlacementPolicy, SchedulerPlacer
from .engine import SimulationStalled, Simulator
from .metrics import SimResult
from .policies import AcceptAll, AcceptK, Consolidated, FirstFree, Scattered
from .registry import build_admission, build_policy
from .runner import simulator
from .state import RUNNING, Job, SimView

__all__ = ["LOOKAHEADS", "SCORES", "SwitchingAdmission", "SwitchingPolicy", "WhatIfRecord", "run_whatif", "score"]

LOOKAHEADS = ("workload", "present")
SCORES = ("jct", "responsiveness", "both")
# parts of a simulator that hold nothing but their parameters: a copy shares them (exact types: a subclass
# may keep state)
_STATELESS = (ConstantPerf, LaunchMechanism, AcceptAll)
_ATOMS = (type(None), bool, int, float, str)
# admissions a copy runs without the switching wrapper when it has nothing to hand over (exact types: what the
# wrapper passes on is then all they see)
_BARE = (AcceptAll, AcceptK)
# placements whose find() reads the free GPUs alone on a cluster of one GPU type (exact types; _Forced)
_FORCED_PLACEMENTS = (Consolidated, FirstFree, Scattered)


class SwitchingPolicy(SchedulerPlacer):
    """One of several scheduling policies at a time; [`switch`][optsched.sim.whatif.SwitchingPolicy.switch] changes
    which one decides.

    ```pycon
    >>> from optsched.sim.registry import build_policy
    >>> sp = SwitchingPolicy([build_policy("fifo"), build_policy("las")])
    >>> sp.name, sp.switch(1), sp.name
    ('fifo+consolidated', None, 'las+consolidated')

    ```
    """

    def __init__(self, candidates: Sequence[SchedulerPlacer], active: int = 0):
        self.candidates = list(candidates)
        if not self.candidates:
            raise InstanceError("needs at least one candidate policy", field="candidates")
        self.initial = self._check(active)
        self.active = self.initial

    def _check(self, i: int) -> int:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < len(self.candidates):
            raise InstanceError(f"must be a candidate index 0..{len(self.candidates) - 1}, got {i!r}", field="active")
        return int(i)

    @property
    def current(self) -> SchedulerPlacer:
        return self.candidates[self.active]

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.current.name

    @property
    def every_round(self) -> bool:  # type: ignore[override]
        return bool(self.current.every_round)

    @property
    def elastic(self) -> bool:  # type: ignore[override]
        return bool(self.current.elastic)

    def switch(self, i: int) -> None:
        """Make candidate ``i`` decide from now on; it is reset (it rebuilds its state from the view). The one
        switched out is reset too: it would be reset before it decided again, and its stale state (priority
        lists, heaps) would only make every copy of the simulator slower."""
        i = self._check(i)
        if i != self.active:
            old = self.current
            self.active = i
            self.current.reset()
            old.reset()

    def reset(self) -> None:
        for c in self.candidates:
            c.reset()
        self.active = self.initial

    def decide(self, view: SimView) -> Decision:
        return self.current.decide(view)

    def on_admit(self, jobs, view: SimView) -> None:
        self.current.on_admit(jobs, view)

    def on_completion(self, job: Job, view: SimView) -> None:
        self.current.on_completion(job, view)

    def after_apply(self, decision: Decision, view: SimView, own: bool) -> None:
        self.current.after_apply(decision, view, own)

    def next_wakeup(self, now: float) -> float:
        return self.current.next_wakeup(now)

    def idle_until(self, view: SimView) -> float:
        return self.current.idle_until(view)

    def describe(self) -> dict:
        return {"name": "switching", "candidates": [c.describe() for c in self.candidates]}


def _take_held(adm: AdmissionPolicy) -> list[Job]:
    """The jobs an admission policy holds, in its order (it is reset afterwards)."""
    if adm.holding == 0:
        return []
    if isinstance(adm, AcceptK):
        return list(adm.queue[adm._head:])
    raise InstanceError(f"cannot switch away from admission {adm.name!r} while it holds jobs (only accept-k's "
                        "holding queue can be handed over)", field="admission")


class SwitchingAdmission(AdmissionPolicy):
    """One of several admission policies at a time; [`switch`][optsched.sim.whatif.SwitchingAdmission.switch] hands the
    jobs the old one holds to the new
    one (ahead of new arrivals). ``cutoff_s``: jobs arriving after it are held back for good (the ``present``
    lookahead of a what-if copy).

    ```pycon
    >>> from optsched.sim.registry import build_admission
    >>> sa = SwitchingAdmission([build_admission("accept-all"), build_admission("accept-1.2")])
    >>> sa.name, sa.holding
    ('accept-all', 0)

    ```
    """

    def __init__(self, candidates: Sequence[AdmissionPolicy], active: int = 0):
        self.candidates = list(candidates)
        if not self.candidates:
            raise InstanceError("needs at least one candidate admission policy", field="admissions")
        if isinstance(active, bool) or not isinstance(active, (int, np.integer)) \
                or not 0 <= active < len(self.candidates):
            raise InstanceError(f"must be a candidate index, got {active!r}", field="active")
        self.initial = int(active)
        self.reset()

    @property
    def current(self) -> AdmissionPolicy:
        return self.candidates[self.active]

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.current.name

    def reset(self) -> None:
        for c in self.candidates:
            c.reset()
        self.active = self.initial
        self._carry: list[Job] = []
        self._future: list[Job] = []
        self.cutoff_s: float | None = None

    def switch(self, i: int) -> None:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < len(self.candidates):
            raise InstanceError(f"must be a candidate index, got {i!r}", field="active")
        if int(i) != self.active:
            held = _take_held(self.current)
            self.current.reset()
            self._carry = held + self._carry
            self.active = int(i)

    def admit(self, new_jobs, view: SimView) -> list[Job]:
        jobs = list(new_jobs)
        if self._carry:
            jobs = self._carry + jobs
            self._carry = []
        if self.cutoff_s is not None:
            cut = self.cutoff_s
            self._future += [j for j in jobs if j.arrival_s > cut]
            jobs = [j for j in jobs if j.arrival_s <= cut]
        return self.current.admit(jobs, view)

    @property
    def holding(self) -> int:
        return self.current.holding + len(self._carry) + len(self._future)

    @property
    def present_holding(self) -> int:
        """Jobs held that arrived before the cutoff."""
        return self.current.holding + len(self._carry)

    def __deepcopy__(self, memo: dict) -> SwitchingAdmission:
        # a what-if copy copies the wrapper once per candidate: its candidates (those in ``memo`` are shared) and its
        # lists of jobs (the copy's jobs, from ``memo``) are copied, plain values shared, anything else deep-copied
        # (what copy.deepcopy's generic path did, at a fifth of its cost)
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        d = new.__dict__
        for k, v in self.__dict__.items():
            if k == "candidates":
                v = [copy.deepcopy(c, memo) for c in v]
            elif k in ("_carry", "_future"):
                v = [copy.deepcopy(j, memo) for j in v] if v else []
            elif not isinstance(v, _ATOMS):
                v = copy.deepcopy(v, memo)
            d[k] = v
        return new

    def describe(self) -> dict:
        return {"name": "switching", "candidates": [c.describe() for c in self.candidates]}


def score(jobs: Sequence[Job], t0: float, t1: float, metric: str = "jct") -> float:
    """The what-if score of ``jobs`` over the window [t0, t1] (module docstring), in job-seconds.

    ```pycon
    >>> a, b = Job("a", 0, 1, 1, 1.0), Job("b", 50, 1, 1, 1.0)
    >>> a.completion_s, a.first_start_s, b.first_start_s = 80.0, 10.0, 90.0
    >>> score([a, b], 20.0, 100.0), score([a, b], 20.0, 100.0, "responsiveness")
    (110.0, 40.0)

    ```
    """
    if metric not in SCORES:
        raise InstanceError(f"must be one of {', '.join(SCORES)}, got {metric!r}", field="metric")
    total = 0.0
    if metric == "jct":  # (every point scores its windows: the loop below for this score, with the same floats)
        for j in jobs:
            a = j.w.arrival_s
            if t0 > a:
                a = t0  # max(arrival, t0)
            if a >= t1:
                continue
            c = j.completion_s
            d = (t1 if c != c or t1 < c else c) - a  # min(completion, t1); t1 while unfinished (NaN)
            if d > 0.0:
                total += d
        return total
    for j in jobs:
        a = max(j.arrival_s, t0)
        if a >= t1:
            continue
        if metric in ("jct", "both"):
            c = j.completion_s
            total += max(0.0, (t1 if math.isnan(c) else min(c, t1)) - a)
        if metric in ("responsiveness", "both"):
            f = j.first_start_s
            total += max(0.0, (t1 if math.isnan(f) else min(f, t1)) - a)
    return total


@dataclass
class WhatIfRecord:
    """What the switching did, kept in the run's result as ``custom["whatif"]``: the candidates' names, the index
    chosen at every switching point, the points' times and scores, and the simulation cost (CPU seconds of the
    live run's own steps, of the copies and of the what-if simulations), and the decisions the windows took
    (``window_decisions``, the chosen runs' included: compare with a fixed run's ``decisions``)."""

    names: list[str]
    times: list[float] = field(default_factory=list)
    choices: list[int] = field(default_factory=list)
    scores: list[list[float]] = field(default_factory=list)
    live_s: float = 0.0
    copy_s: float = 0.0
    whatif_s: float = 0.0
    copies: int = 0
    reused: int = 0
    window_decisions: int = 0
    skipped: int = 0

    @property
    def n_points(self) -> int:
        return len(self.times)

    def share(self) -> dict[str, float]:
        """Fraction of switching points at which each candidate was chosen."""
        n = max(1, len(self.choices))
        return {name: self.choices.count(i) / n for i, name in enumerate(self.names)}

    def summary(self) -> dict[str, Any]:
        """The figures the run's summary gets: switching points, switches, copies and their cost."""
        return dict(switch_points=self.n_points,
                    switches=sum(1 for a, b in zip(self.choices, self.choices[1:]) if a != b),
                    live_s=self.live_s, copy_s=self.copy_s, whatif_s=self.whatif_s, copies=self.copies,
                    reused=self.reused, window_decisions=self.window_decisions, skipped=self.skipped,
                    cost_ratio=(self.copy_s + self.whatif_s) / self.live_s if self.live_s > 0 else None)


def _label(scheduler: Any, admission: Any) -> str:
    s = scheduler if isinstance(scheduler, str) else getattr(scheduler, "name", str(scheduler))
    a = admission if isinstance(admission, str) else getattr(admission, "name", str(admission))
    return f"{s}+{a}"


def run_whatif(workload: Workload | Any, cluster: Cluster | Any, candidates: Sequence[tuple[Any, Any]], *,
               placement: Any = "consolidated", period_s: float = 3000.0, horizon_s: float = 3000.0,
               lookahead: str = "workload", metric: str = "jct", initial: int = 0, perf: Any = None,
               round_s: float = 300.0, restore_s: float = 0.0, stop_when_tracked_done: bool = False,
               max_time_s: float | None = None, seed: int | None = 0, on_switch=None,
               live_runs_one: bool = True) -> SimResult:
    """Run ``workload`` on ``cluster`` (round mode), switching among ``candidates`` (pairs of scheduler and
    admission, names or dicts as for [`simulate`][optsched.sim.simulate]) by what-if simulation every ``period_s``
    (module docstring). The live engine is the one door's ([`simulator`][optsched.sim.runner.simulator]), driven
    step by step; returns its [`SimResult`][optsched.sim.metrics.SimResult], with a
    [`WhatIfRecord`][optsched.sim.whatif.WhatIfRecord] in ``custom["whatif"]`` and the
    record's figures (switching points, copies, cost) in the summary. ``on_switch(t, scores, choice)`` is
    called at every point. ``live_runs_one`` (default): with lookahead ``workload`` and ``horizon_s <=
    period_s``, the live run runs its active candidate's window itself instead of a copy, and the chosen run goes
    on as the live run (the same points, scores, choices and run; one copy and one window fewer per point); False:
    every candidate on a copy and the live run stepped by itself.
    """
    wl = as_workload(workload)
    cl = as_cluster(cluster)
    if lookahead not in LOOKAHEADS:
        raise InstanceError(f"must be one of {', '.join(LOOKAHEADS)}, got {lookahead!r}", field="lookahead")
    if metric not in SCORES:
        raise InstanceError(f"must be one of {', '.join(SCORES)}, got {metric!r}", field="metric")
    for name, v in (("period_s", period_s), ("horizon_s", horizon_s)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or math.isnan(v):
            raise InstanceError(f"must be a positive number of seconds, got {v!r}", field=name)
    if not candidates:
        raise InstanceError("needs at least one (scheduler, admission) pair", field="candidates")
    pols = [build_policy(s, placement, seed=seed) for s, _ in candidates]
    adms = [build_admission(a) for _, a in candidates]
    names = [_label(s, a) for s, a in candidates]
    # one wrapper of each kind; candidate i is (policy i, admission i): admissions shared by name are copies
    policy = SwitchingPolicy(pols, initial)
    shared = [_resets_whole(p) for p in pols]  # candidates a copy runs itself, reset after its window
    resets = [_Reset(p) for p in pols]  # (how: as reset() would, cheaply where that is exact)
    forced = _Forced.for_run(pols, adms)  # (windows every candidate runs alike: one run for all)
    unfinished = _Unfinished([j.arrival_s for j in wl.jobs])  # the jobs each point scores
    admission = SwitchingAdmission(adms, initial)
    live = simulator(wl, cl, scheduler=policy, admission=admission, perf=perf, mode="round", round_s=round_s,
                     seed=seed, restore_s=restore_s, stop_when_tracked_done=stop_when_tracked_done,
                     max_time_s=max_time_s)
    live.config["scheduler"] = {"name": "what-if", "candidates": names, "period_s": period_s,
                                "horizon_s": horizon_s, "lookahead": lookahead, "metric": metric}
    out = WhatIfRecord(names=names)
    # the live run can run one candidate's window itself (and the chosen copy go on as the live run) when the
    # copies run what the live run would: the whole workload (lookahead "workload"), a window not past the next
    # point, and no chance of the live run ending in it on its tracked jobs (one arrives after the window, or one
    # cannot finish in it whatever is decided)
    tracked = [k for k, j in enumerate(wl.jobs) if getattr(j, "tracked", True)]
    last_tracked = max((wl.jobs[k].arrival_s for k in tracked), default=-math.inf)
    # the cyclic collector paused, as Simulator.run pauses it for a fixed run: the copies and windows allocate
    # short-lived acyclic objects only (reference counting frees them), and its passes over the run's jobs found
    # nothing (about 1.3 % of a what-if run's instructions on the benchmark's seed 0)
    with paused_gc():
        t_start = time.process_time()
        spent_aside = 0.0
        next_point = 0.0
        live.reset()
        view = live.advance()
        while view is not None:
            if view.now >= next_point:
                t_aside = time.process_time()
                t0 = view.now
                reuse = live_runs_one and lookahead == "workload" and horizon_s <= period_s
                if reuse:
                    # (may the live run end in the window on its tracked jobs? then its own candidate runs on a copy
                    # too, and if the chosen run did end there, the live run is switched and steps as below)
                    # (not if one of them cannot finish in the window whatever is decided: _Settled's bound)
                    may_end = stop_when_tracked_done and t0 + horizon_s >= last_tracked
                    if may_end:
                        tracked = [k for k in tracked if math.isnan(live.jobs[k].completion_s)]
                        may_end = not _some_cannot_finish(live, tracked, t0 + horizon_s)
                    scores, kept, best = _evaluate_reusing(live, len(candidates), horizon_s, metric, out,
                                                           t0 + period_s, shared, unfinished=unfinished,
                                                           may_end=may_end, resets=resets, forced=forced)
                    if kept is None:
                        reuse = False
                        policy.switch(best)
                        admission.switch(best)
                    else:
                        live = kept
                        admission = cast(SwitchingAdmission, live.admission)
                else:
                    scores = _evaluate(live, len(candidates), horizon_s, lookahead, metric, out, shared,
                                       unfinished=unfinished, resets=resets, forced=forced)
                    best = int(np.argmin(scores))
                    policy.switch(best)
                    admission.switch(best)
                out.times.append(t0)
                out.choices.append(best)
                out.scores.append(scores)
                if on_switch is not None:
                    on_switch(t0, scores, best)
                next_point = t0 + period_s
                spent_aside += time.process_time() - t_aside
                if reuse:  # the live run stands at its next point (a decision due), between points, or at its end
                    view = live.view if live.decision_due else live.advance()
                    continue
            live.apply(live.decide())
            view = live.advance()
        out.live_s = time.process_time() - t_start - spent_aside
        res = live.result()
    res.custom["whatif"] = out
    res.summary.update(out.summary())
    return res


class _Unfinished:
    """The workload indices of the jobs a point's score looks at: unfinished at the point and arrived by ``last``,
    in index order (what a scan of every job finds), kept from point to point: a job once finished stays
    finished, and ``last`` only grows, so each point filters the few jobs still open and adds those arrived since.

    ```pycon
    >>> from optsched.problems.workload import Workload, WorkloadJob
    >>> from optsched.sim.state import jobs_from_workload
    >>> jobs = jobs_from_workload(Workload((WorkloadJob("a", 0, 1, 1, 1.0), WorkloadJob("b", 50, 1, 1, 1.0))).jobs)
    >>> u = _Unfinished([j.arrival_s for j in jobs])
    >>> u.at(jobs, 10.0)
    [0]
    >>> jobs[0].completion_s = 30.0
    >>> u.at(jobs, 60.0)
    [1]

    ```
    """

    def __init__(self, arrivals: Sequence[float]):
        self._order = sorted(range(len(arrivals)), key=arrivals.__getitem__)
        self._arr = [arrivals[k] for k in self._order]
        self._next = 0
        self._open: list[int] = []
        self._last = -math.inf

    def at(self, jobs: Sequence[Job], last: float) -> list[int]:
        if last < self._last:
            raise ValueError("the window's end went back in time")  # (never: points only move on)
        self._last = last
        isnan = math.isnan
        op = [k for k in self._open if isnan(jobs[k].completion_s)]
        p, order, arr = self._next, self._order, self._arr
        new = False
        while p < len(arr) and arr[p] <= last:
            if isnan(jobs[order[p]].completion_s):
                op.append(order[p])
                new = True
            p += 1
        self._next = p
        if new:
            op.sort()
        self._open = op
        return list(op)


def _compact_heap(sim: Simulator) -> None:
    """Drop the dead entries of ``sim``'s completion heap, in place, before it is copied.

    The engine deletes lazily: an entry ``(t, seq, version, job)`` whose job has moved on (another version, or
    not running: preempted, done) stays until it reaches the top. A preempting policy leaves hundreds (LAS on the
    benchmark: up to 282 entries, 3 to 12 of them alive), and every copy of the simulator copied them and popped
    them again in its window. An entry once dead never comes back (versions only grow), and the live entries keep
    their keys (``seq`` is unique), so the heap pops the same entries in the same order. Only the engine's own
    heap layout is touched: if it is not that list of 4-tuples, nothing is done.
    """
    heap = getattr(sim, "_heap", None)
    if type(heap) is not list or not heap or len(heap[0]) != 4:
        return
    alive = [e for e in heap if e[3].version == e[2] and e[3].status == RUNNING]
    if len(alive) < len(heap):
        heapq.heapify(alive)
        heap[:] = alive


def _resets_whole(obj: Any) -> bool:
    """True if ``obj`` is a [`Params`][optsched.params.Params] object whose ``reset()`` forgets everything a run
    wrote into it: every constructor parameter is a plain value (or a tuple of them) or such an object, reset with
    its owner (a fitted predictor, which keeps its fit across runs, is not). A reset candidate policy of that kind
    can run a copy's window itself and be reset afterwards instead of being copied
    ([`_copy_for`][optsched.sim.whatif._copy_for]).

    ```pycon
    >>> from optsched.sim.registry import build_policy
    >>> _resets_whole(build_policy("tiresias")), _resets_whole(object())
    (True, False)

    ```
    """
    if not isinstance(obj, Params):
        return False
    for v in obj.get_params().values():
        if isinstance(v, Params):
            if not v.reset_with_owner or not _resets_whole(v):
                return False
        elif isinstance(v, tuple):
            if not all(isinstance(x, _ATOMS) for x in v):
                return False
        elif not isinstance(v, _ATOMS):
            return False
    return True


def _frozen(v: Any) -> bool:
    return type(v) in _ATOMS or (type(v) is tuple and all(type(x) in _ATOMS for x in v))


class _Reset:
    """``p.reset()`` for candidate policy ``p``, cheaper where that is exact: a window's copy resets the candidate
    it ran (and a switch the policy switched out) at every point, and ``Params.reset`` builds the object anew from
    its parameters (about 15-25 µs for a [`Composed`][optsched.sim.base.Composed] policy).

    For a ``Composed`` policy (exact type) whose two parts hold nothing but plain values once reset (the built-in
    policies), resetting is clearing its run state (``_clear``, which its constructor ends with): the template
    taken from ``p`` in its reset state says what everything else must equal; ``__call__`` clears, compares the
    policy's other values and both parts' values with it, and falls back on ``p.reset()`` if anything differs
    (a part that kept state, an attribute added by a run). Any other policy is reset by ``p.reset()``.

    ```pycon
    >>> from optsched.sim.registry import build_policy
    >>> p = build_policy("las"); r = _Reset(p)
    >>> p._q.append(1); p._seq = 7; r(p)
    >>> p._q, p._seq, r.fast
    ([], 0, True)

    ```
    """

    __slots__ = ("_tmpl",)

    def __init__(self, p: Any):
        self._tmpl: tuple | None = None
        if type(p) is not Composed:
            return
        p.reset()
        states = []
        for part in (p.scheduling, p.placement):
            d = dict(part.__dict__)
            if not all(map(_frozen, d.values())):
                return
            states.append((type(part), d))
        own = {k: v for k, v in p.__dict__.items() if k not in ("scheduling", "placement")}
        p._clear()
        for k, v in p.__dict__.items():  # every other value plain, or a container made anew by _clear
            if k not in ("scheduling", "placement") and (k not in own or not (_frozen(v) or v is not own[k])):
                return
        self._tmpl = (own, *states)

    @property
    def fast(self) -> bool:
        return self._tmpl is not None

    def __call__(self, p: Any) -> None:
        t = self._tmpl
        if t is not None and type(p) is Composed:
            p._clear()
            own, (ts, ds), (tp, dp) = t
            d = p.__dict__
            s, pl = d.get("scheduling"), d.get("placement")
            if (type(s) is ts and type(pl) is tp and s.__dict__ == ds and pl.__dict__ == dp
                    and d == dict(own, scheduling=s, placement=pl)):
                return
        p.reset()


def _reset(resets: Sequence[Callable[[Any], None]], i: int, p: Any) -> None:
    """Reset candidate ``i``'s policy object ``p`` (by ``resets[i]``, a [`_Reset`][optsched.sim.whatif._Reset], if
    there is one)."""
    if i < len(resets):
        resets[i](p)
    else:
        p.reset()


def _copy_for(live: Simulator, i: int, shared: Sequence[bool] = (), bare: bool = False) -> Simulator:
    """A copy of ``live`` (as [`clone`][optsched.sim.engine.Simulator.clone] makes it) that runs candidate ``i``:
    only what candidate ``i``'s run can touch is copied.

    The copy runs candidate ``i``'s scheduling policy itself, not through the switching wrapper (which only
    passes every call on): that policy is copied with its state if it is ``live``'s active one; another
    candidate's is in its reset state (a switch resets the policy it switches out), so when ``shared[i]`` (its
    ``reset()`` forgets a whole run: [`_resets_whole`][optsched.sim.whatif._resets_whole]) the copy runs that very
    object, which the caller resets after the window unless the copy goes on as the live run; else it is copied
    and reset, as a switch would. The wrapper and the other candidates' policies are not copied at all. Of the
    admissions, the active one and candidate ``i``'s are copied (the switch hands the held jobs over) and the rest
    shared. The run's random generator (``view.extra["rng"]``) is shared too:
    [`_evaluate`][optsched.sim.whatif._evaluate] puts its state back after every copy's run, so each copy draws
    what its own copy of the generator would have given and ``live`` is left untouched. So are the run's
    configuration (read only, by the result) and a constant performance model and a plain launch mechanism (their
    parameters are all they hold). Copying the five candidates' policies and the generator was about four fifths
    of a clone. ``bare`` (lookahead ``workload``): a candidate whose admission is accept-all or accept-k, with no
    held jobs handed over, runs with that admission itself (accept-k: the copy's copy of it), not through the
    switching wrapper (which would pass every job on to it, and be asked at every event how many it holds: what
    the admission holds); the copy's view keeps the wrapper, which [`_wrap`][optsched.sim.whatif._wrap] puts back
    on a copy that goes on as the live run.
    """
    pol, adm = live.policy, live.admission
    assert isinstance(pol, SwitchingPolicy) and isinstance(adm, SwitchingAdmission)
    memo: dict[int, Any] = {id(pol): pol}  # (replaced below: the copy never sees the wrapper)
    memo.update((id(c), c) for k, c in enumerate(adm.candidates)
                if (k != i and k != adm.active) or type(c) in _STATELESS)
    rng = live.view.extra.get("rng")
    if rng is not None:
        memo[id(rng)] = rng
    memo[id(live.config)] = live.config
    for part in (live.perf, live.launcher):
        if type(part) in _STATELESS:
            memo[id(part)] = part
    twin = copy.deepcopy(live, memo)  # what Simulator.clone does, with the shared objects in the memo
    if i != pol.active and i < len(shared) and shared[i]:
        mine = pol.candidates[i]  # in its reset state: run as it is, reset by the caller after the window
    else:
        mine = copy.deepcopy(pol.candidates[i], memo)  # (the same memo: its jobs are the copy's)
        if i != pol.active:
            mine.reset()
    twin.policy = mine
    ta = twin.admission
    assert isinstance(ta, SwitchingAdmission)
    ta.switch(i)
    if bare and type(ta.current) in _BARE and not ta._carry and not ta._future and ta.cutoff_s is None:
        twin.admission = ta.current  # (the view keeps the wrapper: _wrap puts it back on a copy kept)
    return twin


def _wrap(sim: Simulator) -> None:
    """Give a copy made ``bare`` by [`_copy_for`][optsched.sim.whatif._copy_for] its switching admission back (the
    view's), before it goes on as the live run."""
    adm = sim.view.admission
    assert isinstance(adm, SwitchingAdmission) and (sim.admission is adm or sim.admission is adm.current)
    sim.admission = adm


def _evaluate(live: Simulator, n: int, horizon_s: float, lookahead: str, metric: str,
              out: WhatIfRecord, shared: Sequence[bool] = (), unfinished: _Unfinished | None = None,
              resets: Sequence[Callable[[Any], None]] = (), forced: _Forced | None = None) -> list[float]:
    t0 = live.now
    t1 = t0 + horizon_s
    # the jobs the score looks at: unfinished at t0 and arriving by t1 (present only: arrived by t0)
    last = t0 if lookahead == "present" else t1
    _compact_heap(live)
    idx = (unfinished.at(live.jobs, last) if unfinished is not None else
           [j.index for j in live.jobs if math.isnan(j.completion_s) and j.arrival_s <= last])
    rng = live.view.extra.get("rng")
    rng_state = rng.bit_generator.state if rng is not None else None
    settles = _settles(live, metric)
    watch = forced.start(live) if forced is not None else None
    scores: list[float] = []
    for i in range(n):
        if i == 1 and watch is not None and watch.ok:  # the first window was every candidate's (_Forced)
            scores += [scores[0]] * (n - 1)
            out.skipped += n - 1
            break
        w = watch if i == 0 else None
        tc = time.process_time()
        twin = _copy_for(live, i, shared, bare=lookahead == "workload")
        twin.stop_when_tracked_done = False  # a copy runs its whole horizon (the score counts every job)
        twin.lean = True  # (its jobs alone are read, for the score: no time series, no collectors)
        out.copy_s += time.process_time() - tc
        out.copies += 1
        tw = time.process_time()
        adm = twin.view.admission
        assert isinstance(adm, SwitchingAdmission)
        if lookahead == "present":
            adm.cutoff_s = t0
        settled = _Settled(twin.jobs, idx, t1) if settles else None
        d0 = twin._decisions
        try:
            if settled is None or not settled(t0):  # (settled: nothing decided from here on changes the score)
                if w is not None and not w(twin):
                    w = None
                twin.apply(twin.decide())
                while (v := twin.advance(until=t1)) is not None:
                    if v.now >= t1 or (settled is not None and settled(v.now)):
                        break  # (a decision at the window's end changes no score: nothing it starts ends by then)
                    if w is not None and not w(twin):
                        w = None
                    twin.apply(twin.decide())
                    if lookahead == "present" and not v.jobs.active and adm.present_holding == 0:
                        break  # every job present at t0 is done; the rest are held back
        except SimulationStalled:
            pass  # nothing more can happen in this copy (present lookahead: only held-back jobs remain)
        finally:
            if rng is not None and rng.bit_generator.state != rng_state:
                rng.bit_generator.state = rng_state  # the shared generator back where live left it
            if twin.policy is cast(SwitchingPolicy, live.policy).candidates[i]:  # shared: back to its reset state
                _reset(resets, i, twin.policy)
        scores.append(score([twin.jobs[k] for k in idx], t0, t1, metric))
        out.window_decisions += twin._decisions - d0
        out.whatif_s += time.process_time() - tw
    return scores


class _Settled:
    """Says, at a decision point of a window, whether the window's score is already settled: none of the jobs it
    scores can complete before the window's end ``t1``, whatever is decided from now on. Then a window may stop
    there (a copy that is not kept) or pause (one that may go on as the live run), with the very score its whole
    run gives: a job completing at or after ``t1``, or not at all, counts ``t1 - max(arrival, t0)`` alike.

    Only for the score ``jct`` (a later decision may still start a job: ``responsiveness`` would change) and the
    constant performance model (exact type), where no job ever runs faster than its profiled iteration time: by
    ``now`` a job that has arrived needs at least ``now + (iterations - executed) x iteration_time_s`` (stalls and
    a spread placement only add), one still to arrive ``arrival + iterations x iteration_time_s``. Such a lower
    bound only grows with ``now``, so a job found unable to finish in time (with a margin of ``1e-9`` relative
    for the engine's rounding) is not looked at again; the jobs are read by index, as the copy replaces the job
    objects it shares with the live run when they arrive.

    ```pycon
    >>> from optsched.problems.workload import WorkloadJob
    >>> from optsched.sim.state import jobs_from_workload
    >>> jobs = jobs_from_workload([WorkloadJob("a", 0, 1, 100, 1.0), WorkloadJob("b", 50, 1, 500, 1.0)])
    >>> s = _Settled(jobs, [0, 1], 400.0)
    >>> s(0.0), s(320.0)   # a could still finish by 400 at t = 0, not when it has not run by t = 320
    (False, True)

    ```
    """

    __slots__ = ("_jobs", "_open", "lim")

    def __init__(self, jobs: Sequence[Job], idx: Sequence[int], t1: float):
        self._jobs = jobs
        self._open = list(idx)
        self.lim = t1 + 1e-9 * max(1.0, abs(t1))  # (a bound at or past it: the job cannot finish before t1)

    @staticmethod
    def earliest(j: Job, now: float) -> float:
        """A lower bound on the completion time of unfinished job ``j`` seen at ``now`` (class docstring)."""
        w = j.w
        a = w.arrival_s
        if a > now:
            return a + w.iterations * w.iteration_time_s
        return now + (w.iterations - j.executed_at(now)) * w.iteration_time_s

    def __call__(self, now: float) -> bool:
        jobs, lim, open_ = self._jobs, self.lim, self._open
        for n, k in enumerate(open_):
            j = jobs[k]
            if j.completion_s == j.completion_s:  # done (not NaN): its share of the score is fixed
                continue
            w = j.w  # (earliest(j, now), inline: a window asks at every decision; the call cost 0.4 %)
            a = w.arrival_s
            if a > now:
                lb = a + w.iterations * w.iteration_time_s
            else:
                lb = now + (w.iterations - j.executed_at(now)) * w.iteration_time_s
            if lb < lim:
                if n:
                    del open_[:n]  # the ones before it are done or cannot finish in time: for good
                return False
        open_.clear()
        return True


def _some_cannot_finish(sim: Simulator, idx: Sequence[int], t1: float) -> bool:
    """True if one of the jobs ``idx`` of ``sim`` (by workload index, unfinished) cannot complete before ``t1``
    whatever is decided from ``sim.now`` on: [`_Settled`][optsched.sim.whatif._Settled]'s bound, and only where it
    holds (the constant performance model, exact type); False otherwise. A run stopping when its tracked jobs are
    done cannot end before ``t1`` then.

    ```pycon
    >>> from optsched.problems.workload import Workload, WorkloadJob
    >>> wl = Workload((WorkloadJob("a", 0, 1, 100, 1.0), WorkloadJob("b", 50, 1, 500, 1.0)))
    >>> sim = Simulator(wl, Cluster.homogeneous(1, 1), perf=ConstantPerf(), mode="event")
    >>> _ = sim.reset()
    >>> _some_cannot_finish(sim, [0, 1], 400.0), _some_cannot_finish(sim, [0, 1], 600.0)
    (True, False)

    ```
    """
    if type(sim.perf) is not ConstantPerf:
        return False
    s = _Settled(sim.jobs, (), t1)
    now = sim.now
    return any(s.earliest(sim.jobs[k], now) >= s.lim for k in idx)


def _settles(sim: Simulator, metric: str) -> bool:
    """True if a window of ``sim`` may stop once its score is settled ([`_Settled`][optsched.sim.whatif._Settled])."""
    return metric == "jct" and type(sim.perf) is ConstantPerf


class _Forced:
    """Watches the first window of a point: ``ok`` stays True while every decision it takes is one that every
    candidate would take alike from the same state, so that every candidate's window is that very window (the
    same states, decisions and completions: the same score) up to where it stops or pauses.

    Built only when every candidate is a [`Composed`][optsched.sim.base.Composed] policy (exact type) with the base
    class's walk ([`place_ranked`][optsched.sim.base.PlacementPolicy.place_ranked]), equal placement policies
    (one of the built-in ones, exact type: ``find`` reads the free GPUs alone) on a cluster of one GPU type, no
    decision every round and no scheduling hook at admission, and admits by accept-all or accept-k (exact types),
    holding no job at the point ([`for_run`][optsched.sim.whatif._Forced.for_run]). A decision is then the same for
    every candidate when (``__call__``, before it is taken) at most one admitted job waits and it fits the free
    GPUs: the walk launches it on the placement's ``find`` (none waiting: nothing), whatever the priority order;
    nothing waits after it, so no candidate decides again before the next event, and every candidate's engine
    skips the same rounds. The admission decides alike too: the window's own admission holds nothing, and an
    accept-k would have admitted every job admitted at this point (the test before each add, with the active
    jobs' demand, is met for the last one: checked with the smallest, a sufficient test). The point's own
    decision follows the live run's admission, the same for every copy.

    ```pycon
    >>> from optsched.sim.registry import build_admission, build_policy
    >>> pols = [build_policy(s, "consolidated") for s in ("fifo", "las")]
    >>> adms = [build_admission(a) for a in ("accept-all", "accept-1.2")]
    >>> f = _Forced.for_run(pols, adms)
    >>> f is not None, f.limit_gpus
    (True, 1.2)
    >>> _Forced.for_run([pols[0], build_policy("fifo", "first-free")], adms[:1]) is None   # placements differ
    True

    ```
    """

    __slots__ = ("place", "limit_gpus", "ok", "t0")

    def __init__(self, place: Any, limit_gpus: float | None):
        self.place, self.limit_gpus = place, limit_gpus  # (limit_gpus: the smallest accept-k's k, per cluster GPU)
        self.ok, self.t0 = True, -math.inf

    @classmethod
    def for_run(cls, pols: Sequence[Any], adms: Sequence[AdmissionPolicy]) -> _Forced | None:
        """The watch for a run with these candidates, or None when its rule does not hold for them (class
        docstring)."""
        if not pols or any(type(p) is not Composed for p in pols):
            return None
        pl0 = pols[0].placement
        if type(pl0) not in _FORCED_PLACEMENTS or pl0.elastic:
            return None
        for p in pols:
            pl, sc = p.placement, p.scheduling
            if (type(pl) is not type(pl0) or pl.__dict__ != pl0.__dict__ or p.every_round
                    or type(pl).place_ranked is not PlacementPolicy.place_ranked
                    or getattr(sc, "on_admit", None) is not None):
                return None
        if any(type(a) not in _BARE for a in adms):
            return None
        ks = [a.k for a in adms if type(a) is AcceptK]
        return cls(pl0, min(ks) if ks else None)

    def start(self, live: Simulator) -> _Forced | None:
        """Armed for a point of ``live`` (its decision due), or None when the point's state rules it out."""
        if live.cstate.typed or live.admission.holding:
            return None
        self.ok, self.t0 = True, live.now
        return self

    def __call__(self, sim: Simulator) -> bool:
        """Whether the decision due in ``sim`` is every candidate's (it sets ``ok`` to False when not)."""
        adm = sim.admission
        if (adm.present_holding if isinstance(adm, SwitchingAdmission) else adm.holding):
            self.ok = False
            return False
        active = sim.jstate.active
        nq = len(active) - len(sim._running)
        if nq > 1:
            self.ok = False
            return False
        now = sim.now
        if self.limit_gpus is not None and now > self.t0:  # (the point's own admission was the live run's)
            new = [j.gpus for j in active.values() if j.admitted_s == now]
            if new and sum(j.gpus for j in active.values()) - min(new) > self.limit_gpus * sim.cstate.total_gpus:
                self.ok = False
                return False
        if nq == 1:
            job = next(j for j in active.values() if j.status != RUNNING)
            if self.place.find(job, sim.cstate.free, sim.view) is None:
                self.ok = False
                return False
        return True


def _forward(sim: Simulator, t1: float, stop_s: float, settled: _Settled | None = None,
             forced: _Forced | None = None) -> tuple[SimulationStalled | None, bool]:
    """Run ``sim`` (at a point, its decision due) with its policy's decisions up to ``t1``, stopping at a decision
    point at or after ``stop_s`` without deciding it (a decision at ``t1`` changes no score: nothing it launches
    finishes or starts before ``t1``). With ``settled``, it pauses at the first decision point where the score is
    settled, that decision due (the same call without ``settled`` goes on from there as if it had not paused).
    With ``forced``, every decision taken is shown to it first, until one is not every candidate's
    ([`_Forced`][optsched.sim.whatif._Forced]). Returns the stall that ended the run early, if one did, and whether
    it paused."""
    try:
        if settled is not None and settled(sim.now):
            return None, True
        if forced is not None and not forced(sim):
            forced = None
        sim.apply(sim.decide())
        while (v := sim.advance(until=t1)) is not None:
            if v.now >= stop_s:
                break
            if settled is not None and settled(v.now):
                return None, True
            if forced is not None and not forced(sim):
                forced = None
            sim.apply(sim.decide())
    except SimulationStalled as e:
        return e, False
    return None, False


def _evaluate_reusing(live: Simulator, n: int, horizon_s: float, metric: str, out: WhatIfRecord,
                      stop_s: float, shared: Sequence[bool] = (), unfinished: _Unfinished | None = None,
                      may_end: bool = False, resets: Sequence[Callable[[Any], None]] = (),
                      forced: _Forced | None = None) -> tuple[list[float], Simulator | None, int]:
    """[`_evaluate`][optsched.sim.whatif._evaluate] for lookahead ``workload`` when the window ends at or before the
    next point (``stop_s``): the other candidates run on copies, then the live run runs its own active candidate's
    window itself, and the chosen run, stopped at the live run's next point (or at the window's end), goes on as
    the live run, with the switching wrappers. Returns the scores, that simulator and the choice: what switching
    the live run to the choice and stepping it would give, one copy and one window's simulation fewer.

    ``may_end``: the live run may end inside the window on its tracked jobs (``stop_when_tracked_done``), which a
    window (run to its end for the score) would run past. Then every candidate runs on a copy, the live run is left
    as it is, and the chosen copy goes on as the live run only if its tracked jobs are not all done; if they are
    (the live run would have ended in the window), the simulator returned is None: the caller switches the live run
    and steps it (one window fewer than [`_evaluate`][optsched.sim.whatif._evaluate] and the live run's own steps
    but at a run's last point).

    ``forced`` ([`_Forced`][optsched.sim.whatif._Forced]): if every decision of the first window run is every
    candidate's, every window is that window: the others get its score without a run, but candidate 0 (the choice
    among equal scores), whose window runs as usual if it was not the first."""
    pol, adm = live.policy, live.admission
    assert isinstance(pol, SwitchingPolicy) and isinstance(adm, SwitchingAdmission)
    t0 = live.now
    t1 = t0 + horizon_s
    _compact_heap(live)
    idx = (unfinished.at(live.jobs, t1) if unfinished is not None else
           [j.index for j in live.jobs if math.isnan(j.completion_s) and j.arrival_s <= t1])
    rng = live.view.extra.get("rng")
    rng_state = rng.bit_generator.state if rng is not None else None
    k = pol.active
    stop_tracked = live.stop_when_tracked_done
    scores = [0.0] * n
    best, best_i = math.inf, -1
    keep: Simulator | None = None
    keep_rng: Any = None
    keep_stall: SimulationStalled | None = None
    keep_paused = False
    settles = _settles(live, metric)
    watch = forced.start(live) if forced is not None else None
    same: float | None = None  # every window's score, once the first is known to be every candidate's
    for i in [*(i for i in range(n) if i != k), k]:
        if same is not None and i != 0:
            scores[i] = same
            out.skipped += 1
            continue
        if i != k or may_end:
            tc = time.process_time()
            twin = _copy_for(live, i, shared, bare=True)
            out.copy_s += time.process_time() - tc
            out.copies += 1
        else:
            twin = live  # the live run's own candidate: no copy
            out.reused += 1
        tw = time.process_time()
        twin.stop_when_tracked_done = False
        d0 = twin._decisions
        stall, paused = _forward(twin, t1, stop_s, _Settled(twin.jobs, idx, t1) if settles else None, watch)
        out.window_decisions += twin._decisions - d0
        sc = score([twin.jobs[j] for j in idx], t0, t1, metric)
        scores[i] = sc
        if watch is not None:
            if watch.ok:
                same = sc
            watch = None
        won = sc < best or (sc == best and i < best_i)  # np.argmin: the first lowest
        if won:
            best, best_i, keep, keep_stall, keep_paused = sc, i, twin, stall, paused
        if rng is not None and twin is not live:
            if won:
                keep_rng = rng.bit_generator.state
            if rng.bit_generator.state != rng_state:
                rng.bit_generator.state = rng_state  # the shared generator back where live left it
        out.whatif_s += time.process_time() - tw
    assert keep is not None
    if keep_paused:  # the chosen run paused once its score was settled: it goes on to the live run's next point
        tw = time.process_time()
        if rng is not None and keep is not live:
            rng.bit_generator.state = keep_rng  # (where its window paused)
        d0 = keep._decisions
        keep_stall = _forward(keep, t1, stop_s)[0]
        out.window_decisions += keep._decisions - d0
        if rng is not None and keep is not live:
            keep_rng = rng.bit_generator.state
        out.whatif_s += time.process_time() - tw
    if may_end and all(not j.tracked or not math.isnan(j.completion_s) for j in keep.jobs):
        best_i, keep = -1, None  # the chosen run ended in the window: nothing goes on (every shared one reset)
    for i, c in enumerate(pol.candidates):  # the shared candidates that ran a window not kept: reset
        if i != k and i != best_i and c is not None and i < len(shared) and shared[i]:
            _reset(resets, i, c)
    if keep is None:
        return scores, None, int(np.argmin(scores))
    if keep_stall is not None:
        raise keep_stall  # the live run, switched to the choice, would stop here with it
    if keep is not live:  # the chosen copy goes on as the live run, with the wrappers
        if rng is not None:
            rng.bit_generator.state = keep_rng
        mine = keep.policy
        _reset(resets, k, pol.candidates[k])  # switched out (SwitchingPolicy.switch)
        pol.candidates[best_i] = mine
        pol.active = best_i
        keep.policy = pol
        _wrap(keep)
    keep.stop_when_tracked_done = stop_tracked
    return scores, keep, best_i
