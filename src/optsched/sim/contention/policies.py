"""Paper 004's schedulers under the repository's round semantics, registered by name in the simulator.

Every policy here is a combined [`SchedulerPlacer`][optsched.sim.base.SchedulerPlacer] that decides once per round
(``every_round``: the engine asks even when nothing waits, so the threshold rule runs every round) and needs
[`MeasuredPerf`][optsched.perf.measured.MeasuredPerf] as the performance model (it reads each running job's ratio).
Placements are always the repository's multi-node splits (2 GPUs: 2 x 1; 4: 2 x 2 or 4 x 1; 8: 2 x 4 or
4 x 2): the table measures no single-node placement.

=======================  ============================================================================
name                     rule
=======================  ============================================================================
``contention-las``       each round: every job re-placed from an empty cluster in order of least attained
                         service, widest-split first fit, stop at the first that does not fit (the
                         repository's ``preempt_all`` + sort + head-of-line blocking); ``repo_keys=True``:
                         the repository's inverted key (most attained service first)
``contention-srtf``      the same with shortest remaining time (remaining samples at the mean isolated
                         speed) first; ``repo_keys=True``: least fraction trained first (the repository's)
``widest-first-fit``     queued jobs in FIFO order, widest-split first fit, skipping what does not fit
``contention-random``    uniformly random valid placement actions (the RL action space) until none is valid
``contention-greedy``    queued jobs in FIFO order, each on the placement that maximises the predicted total
                         normalised throughput of all running jobs (measured table, sticky ratios); a job is
                         left waiting if no placement raises it or one would push a ratio to the threshold
``rl-base``              the agent's actions until it picks "nothing" (it may idle; ``idle_guard``, on by
                         default, places one candidate greedily when it would leave the cluster empty, so
                         a run cannot stall)
``rl-hybrid``            the same, but on "nothing" a greedy widest-split first fit of the candidates
=======================  ============================================================================

The round semantics need round mode. In event mode the threshold rule is off and LAS/SRTF keep a job whose
placement does not change (a restart would call for another decision at the same instant, forever).

With another performance model the policies run contention-blind (every ratio 1,
[`NoContention`][optsched.sim.contention.policies.NoContention]); a demand
without a measured split (not 2, 4, 8, 16, 32 GPUs) is placed on the first free GPUs in node order.

All but LAS and SRTF keep running jobs where they are and apply the repository's threshold rule first: a running
job whose ratio is at or below ``threshold`` (0.6) is preempted and re-queued at the back (it may be placed
again in the same decision). LAS and SRTF re-place every job every round, so the rule never applies to them.

```pycon
>>> from optsched.generators.contention import random_contention_instance
>>> from optsched.sim import simulate
>>> inst = random_contention_instance(jobs=6, seed=1, hours=0.25)
>>> run = simulate(inst, scheduler="contention-srtf")
>>> m = run.custom["contention"]
>>> m["jobs"], m["avg_jct_s"] >= 900
(6, True)

```
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...errors import InstanceError
from ...problems.contention import DEMANDS, MODELS
from ..base import Decision, DecisionBuilder, SchedulerPlacer
from ..state import QUEUED, RUNNING, Job, Placement, SimView
from .agent import NumpyPolicy, load_policy
from .encoding import (
    Board,
    action_mask,
    all_placements,
    candidates,
    n_actions,
    observe,
    resolve,
    widest_first_fit,
)

# these doctests read the shared DeepShare tables: skipped when they are absent (conftest.py at the root)
__doctest_requires__ = {"*": "deepshare-contention"}


class NoContention:
    """What the policies read of a performance model that is not the measured table: every ratio 1, the throughput
    of a job its profiled one (so the contention policies still run, contention-blind, on any workload)."""

    def __init__(self, perf: Any):
        self.perf = perf

    def ratio_of(self, job_id: str) -> float:
        return 1.0

    def fresh_ratios(self, entries) -> dict[str, float]:
        return dict.fromkeys(entries, 1.0)

    def table_key(self, model: str, gpus: int, servers: int, job: str | None = None):
        return (model, gpus, servers), 1.0

    def speed(self, job: Job, pl: Placement, ratio: float) -> float:
        return ratio


def _perf(view: SimView):
    """The measured model of the view, or [`NoContention`][optsched.sim.contention.policies.NoContention] around any
    other model."""
    perf = view.perf
    if not hasattr(perf, "ratio_of") or not hasattr(perf, "fresh_ratios"):
        return NoContention(perf)
    return perf


def encodable(job: Any) -> bool:
    """Whether the agent's observation can show ``job`` (a profiled model with 2, 4 or 8 GPUs)."""
    return job.model in MODELS and job.gpus in DEMANDS


def place_unencodable(board: Board) -> int:
    """Jobs the observation cannot show are outside the action space: place them FIFO, widest split first (or
    first free), after the actions; returns how many were placed."""
    n = 0
    for j in [x for x in board.queue if not encodable(x)]:
        pl = widest_first_fit(j, board.free)
        if pl is not None:
            board.place(j, pl)
            n += 1
    return n


def fifo_key(job: Job) -> tuple[float, int]:
    """The repository's queue order: by the time a job last entered the queue (arrival or preemption)."""
    return (job.wait_since_s, job.index)


def _placed_order(job: Job) -> tuple[float, int]:
    since = job.running_since_s
    return (since if since is not None else 0.0, job.index)


def threshold_victims(view: SimView, threshold: float | None, perf: Any = None) -> list[Job]:
    """Running jobs whose ratio is at or below ``threshold`` (the repository's ``preempt``), in placement order."""
    if threshold is None:
        return []
    perf = perf if perf is not None else _perf(view)
    return sorted((j for j in view.jobs.active.values() if j.status == RUNNING and perf.ratio_of(j.id) <= threshold),
                  key=_placed_order)


def round_board(view: SimView, victims: list[Job]) -> Board:
    """The round's [`Board`][optsched.sim.contention.encoding.Board]: running jobs other than ``victims`` stay placed,
    the victims' GPUs are free,
    the queue is FIFO ([`fifo_key`][optsched.sim.contention.policies.fifo_key]) with the victims at the back."""
    running = sorted((j for j in view.jobs.active.values() if j.status == RUNNING and j not in victims),
                     key=_placed_order)
    builder = DecisionBuilder(view)
    for v in victims:
        builder.preempt(v)
    queue = sorted((j for j in view.jobs.active.values() if j.status == QUEUED), key=fifo_key) + victims
    placed: list[tuple[Any, Placement]] = [(j, j.placement) for j in running if j.placement is not None]
    return Board(builder.free, int(view.cluster.capacity.max()), placed, queue, builder)


def greedy_candidate(board: Board, cands: list[Any] | None = None) -> tuple[Any, Placement] | None:
    """RL-Hybrid's fallback: the first candidate (demand 2, 4, 8) with a widest-split first fit."""
    for c in (candidates(board.queue) if cands is None else cands):
        if c is not None:
            pl = widest_first_fit(c, board.free)
            if pl is not None:
                return c, pl
    return None


class RoundPolicy(SchedulerPlacer):
    """Base class of the round policies: the threshold parameter, the counters, and
    [`board`][optsched.sim.contention.policies.RoundPolicy.board], the round's
    [`Board`][optsched.sim.contention.encoding.Board] with the threshold rule applied; a policy writes ``decide(view)``:
    ``board = self.board(view)``,
    its placements, ``return board.decision()`` (module docstring)."""

    name = "round"
    family = "contention"
    every_round = True
    uses_threshold = True

    def __init__(self, threshold: float | None = 0.6):
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                      or not 0 <= threshold <= 1):
            raise InstanceError(f"must be a number in [0, 1] or None, got {threshold!r}", field="threshold")
        self.threshold = None if threshold is None else float(threshold)
        self.stats = {"threshold_preemptions": 0, "rounds": 0}

    def board(self, view: SimView) -> Board:
        """The round's board: the threshold rule's victims preempted (at the back of the queue), the rest placed."""
        perf = _perf(view)
        self.stats["rounds"] += 1
        # the threshold rule is a per-round rule: in event mode (no rounds) a victim placed again at the same
        # instant could be preempted again forever, so it is off there
        rounds = view.round_s is not None
        victims = threshold_victims(view, self.threshold if (self.uses_threshold and rounds) else None, perf)
        self.stats["threshold_preemptions"] += len(victims)
        return round_board(view, victims)


class ContentionLas(RoundPolicy):
    """Least attained service first, every job re-placed each round (module docstring)."""

    name = "contention-las"
    uses_threshold = False

    def __init__(self, repo_keys: bool = False, threshold: float | None = 0.6):
        super().__init__(threshold)
        self.repo_keys = bool(repo_keys)

    def key(self, job: Job, now: float) -> float:
        a = job.attained_at(now)
        return -a if self.repo_keys else a

    def decide(self, view: SimView) -> Decision:
        _perf(view)
        self.stats["rounds"] += 1
        now = view.now
        jobs = sorted(view.jobs.active.values(), key=lambda j: (self.key(j, now), fifo_key(j)))
        free = view.cluster.capacity.copy()
        launch: dict[Job, Placement] = {}
        for j in jobs:
            pl = widest_first_fit(j, free)
            if pl is None:
                break  # head-of-line blocking, as the repository
            free[list(pl.servers)] -= pl.counts
            launch[j] = pl
        running = [j for j in view.jobs.active.values() if j.status == RUNNING]
        # event mode: a job whose placement does not change keeps running (restarting it would call for another
        # decision at the same instant, forever); in rounds every job restarts, as in the repository
        keep = {j for j in running if launch.get(j) == j.placement} if view.round_s is None else set()
        b = DecisionBuilder(view)
        for j in running:
            if j not in keep:
                b.preempt(j)
        for j, p in launch.items():
            if j not in keep:
                b.launch(j, p)
        return b.build()


class ContentionSrtf(ContentionLas):
    """Shortest remaining time first, every job re-placed each round (module docstring)."""

    name = "contention-srtf"

    def key(self, job: Job, now: float) -> float:
        if self.repo_keys:
            return job.executed_at(now) / job.iterations
        return job.remaining_iterations(now) * job.iteration_time_s


class WidestFirstFit(RoundPolicy):
    """FIFO with backfilling, widest-split first fit (``backfill=False``: stop at the first that does not fit)."""

    name = "widest-first-fit"

    def __init__(self, backfill: bool = True, threshold: float | None = 0.6):
        super().__init__(threshold)
        self.backfill = bool(backfill)

    def decide(self, view: SimView) -> Decision:
        board = self.board(view)
        for j in list(board.queue):
            if board.free.sum() < 2:
                break
            pl = widest_first_fit(j, board.free)
            if pl is not None:
                board.place(j, pl)
            elif not self.backfill:
                break
        return board.decision()


class RandomActions(RoundPolicy):
    """Uniformly random valid placement actions of the RL action space until none is valid."""

    name = "contention-random"

    def __init__(self, seed: int | None = 0, threshold: float | None = 0.6):
        super().__init__(threshold)
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def decide(self, view: SimView) -> Decision:
        board = self.board(view)
        while True:
            cands = candidates(board.queue)
            valid = np.flatnonzero(action_mask(board, cands)[:-1])
            if not len(valid):
                place_unencodable(board)
                return board.decision()
            job, pl = resolve(int(self.rng.choice(valid)), board, cands)  # type: ignore[misc]
            board.place(job, pl)


class ContentionGreedy(RoundPolicy):
    """Each queued job (FIFO, backfilling) on the placement with the best predicted total normalised
    throughput; normalised throughput of a job = its split's isolated throughput x its ratio / its mean isolated
    throughput (1 = the speed the job's size was set for). Running jobs keep their sticky ratio unless the new
    job lowers it. A job is left waiting when its best placement does not raise the total, or when it would
    bring its own or a neighbour's ratio to ``threshold`` or below (it would be preempted at once)."""

    name = "contention-greedy"

    def decide(self, view: SimView) -> Decision:
        board = self.board(view)
        perf = _perf(view)
        thr = -1.0 if self.threshold is None else self.threshold

        def speed(job: Job, pl: Placement, ratio: float) -> float:
            if isinstance(perf, NoContention):
                return perf.speed(job, pl, ratio)
            return perf.throughput(job.model, pl.gpus, len(pl.servers)) * ratio * job.iteration_time_s

        def entries():
            return {j.id: (perf.table_key(j.model, pl.gpus, len(pl.servers), j.id)[0], pl.servers)
                    for j, pl in board.placed}

        def current(fresh: dict[str, float], running_now: set[str]) -> dict[str, float]:
            return {i: (min(r, perf.ratio_of(i)) if i in running_now else r) for i, r in fresh.items()}

        running_now = {j.id for j, _ in board.placed}  # running and kept (not this round's victims)
        tried: set[tuple[str, int]] = set()  # (model, gpus) that found nothing on this board
        for j in list(board.queue):
            if board.free.sum() < 2:
                break
            if (j.model, j.gpus) in tried or j.gpus > board.free.sum():
                continue
            base = entries()
            base_r = current(perf.fresh_ratios(base), running_now)
            by_id = {x.id: (x, pl) for x, pl in board.placed}
            total0 = sum(speed(x, pl, base_r[x.id]) for x, pl in board.placed)
            best, best_score = None, total0 + 1e-12
            for pl in all_placements(j, board.free):
                e = dict(base)
                e[j.id] = (perf.table_key(j.model, pl.gpus, len(pl.servers), j.id)[0], pl.servers)
                r = current(perf.fresh_ratios(e), running_now)
                if any(v <= thr for v in r.values()):
                    continue
                score = sum(speed(x, p, r[x.id]) for x, p in by_id.values()) + speed(j, pl, r[j.id])
                if score > best_score:
                    best, best_score = pl, score
            if best is None:
                tried.add((j.model, j.gpus))
            else:
                board.place(j, best)
                tried.clear()
        return board.decision()


class RlBase(RoundPolicy):
    """The agent's actions until it picks "nothing" (``deterministic``: masked argmax; else sampled with
    ``seed``). ``policy``: a [`NumpyPolicy`][optsched.sim.contention.agent.NumpyPolicy], an ``.npz`` path or a shipped
    name (default: the shipped policy)."""

    name = "rl-base"
    hybrid = False
    learned = True  # an agent, not a baseline (runner.baseline_names)

    def __init__(self, policy: Any = None, deterministic: bool = True, seed: int | None = 0,
                 threshold: float | None = 0.6, idle_guard: bool = True):
        super().__init__(threshold)
        self.agent: NumpyPolicy = load_policy(policy)
        self.policy = policy if policy is not None else self.agent  # recorded by its name (NumpyPolicy.name)
        self.idle_guard = bool(idle_guard)
        self.deterministic, self.seed = bool(deterministic), seed
        self.rng = np.random.default_rng(seed)
        self.stats.update(agent_actions=0, agent_nothing=0, fallback=0, idle_guard=0, unencodable=0, other_cluster=0)

    def decide(self, view: SimView) -> Decision:
        board = self.board(view)
        shape_ok = self.agent.n_inputs == board.nodes * 2 * board.gpus_per_node
        if self.agent.n_actions != n_actions(board.nodes) or not shape_ok:
            # the agent cannot see this cluster: every job is placed as an unencodable one (and the user is told)
            if not self.stats["other_cluster"]:
                warnings.warn(f"{self.name}: the agent was trained for {self.agent.n_actions} actions and "
                              f"{self.agent.n_inputs} inputs; this cluster ({board.nodes} x {board.gpus_per_node} "
                              "GPUs) needs others: placing FIFO, widest split first, instead", stacklevel=2)
            self.stats["other_cluster"] += 1
            for j in list(board.queue):
                pl = widest_first_fit(j, board.free)
                if pl is not None:
                    board.place(j, pl)
            return board.decision()
        while True:
            cands = candidates(board.queue)
            mask = action_mask(board, cands)
            if not mask[:-1].any():
                break
            a = self.agent.act(observe(board, cands), mask, self.deterministic, self.rng)
            self.stats["agent_actions"] += 1
            step = resolve(a, board, cands)
            if step is None:
                self.stats["agent_nothing"] += 1
                idle = not board.placed
                if not (self.hybrid or (self.idle_guard and idle)):
                    return board.decision()
                step = greedy_candidate(board, cands)
                if step is None:
                    break
                self.stats["fallback" if self.hybrid else "idle_guard"] += 1
            board.place(*step)
        self.stats["unencodable"] += place_unencodable(board)
        return board.decision()


class RlHybrid(RlBase):
    """RL-Hybrid: the agent, with a greedy widest-split first fit of the candidates when it picks "nothing"."""

    name = "rl-hybrid"
    hybrid = True


__all__ = ["ContentionGreedy", "ContentionLas", "ContentionSrtf", "RandomActions", "RlBase", "RlHybrid",
           "RoundPolicy", "WidestFirstFit", "fifo_key", "greedy_candidate", "round_board", "threshold_victims"]
