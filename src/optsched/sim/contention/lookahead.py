"""One-step lookahead schedulers for paper 004's round model, the richer observation and the agent that reads it
(issue 24).

The predicted total throughput of a round's board is the sum over the placed jobs (running ones and this round's
launches) of each job's *normalised* speed: the isolated throughput of its split x its predicted ratio / the
job's mean isolated throughput (1 = the speed its size was set for), the ratios computed from the measured table
as the engine will (pairwise worst neighbour, floor), a running job keeping its sticky ratio unless the
new placement lowers it. That is [`ContentionGreedy`][optsched.sim.contention.policies.ContentionGreedy]'s score; what
differs
is the choice.

=============================  ====================================================================================
name                           rule
=============================  ====================================================================================
``contention-lookahead``       repeatedly the valid action of the agent's action space (a node pair, all nodes;
                               the job is the first candidate that fits,
                               [`.encoding.resolve`][optsched.sim.contention.encoding.resolve]) whose
                               placement gives the highest predicted total throughput, until no action is valid:
                               it never idles (it places even when the total falls)
``contention-lookahead-small`` the same, restricted to the actions that place the smallest demand among the
                               placeable candidates (small-demand first, then the best action for it)
``rl-agent``                   a trained agent (numpy) on the observation and action space its file names
                               (``meta["observation"]``: ``paper``, ``rich`` or ``plan``;
                               ``meta["work_conserving"]``:
                               "nothing" masked while a placement is valid); the shipped one is
                               ``rl/data/normal-wc.npz`` when present
=============================  ====================================================================================

``space="placements"`` widens either lookahead from the agent's 7 actions to every legal multi-node placement
of each of the K = 3 candidates.

**Richer observation** ([`rich_observation`][optsched.sim.contention.lookahead.rich_observation],
[`RICH_SIZE`][optsched.sim.contention.lookahead.RICH_SIZE] floats): per action (7): valid, the GPUs of
the job it places / 8, that job's predicted ratio and normalised speed, the change of the predicted total
throughput, the lowest predicted ratio of the jobs already placed, whether a ratio would reach the threshold;
then free GPUs per node / GPUs per node; running GPUs per model / all GPUs; the mean ratio of running jobs;
per candidate (demand 2, 4, 8) present and a one-hot of its model; the queue's job counts per type
(``log1p / 4``).

**Plan observation** (``observation="plan"``, [`plan_size`][optsched.sim.contention.lookahead.plan_size] floats):
the richer one, then per action a short deterministic look
([`plan_features`][optsched.sim.contention.lookahead.plan_features]: the action placed and the round filled by
the lookahead, then one round run at the predicted speeds and the rest estimated by a fluid rule), then per node
the GPUs that free up within 1, 3 and 6 rounds ([`node_features`][optsched.sim.contention.lookahead.node_features]).
About 8 CPU ms per decision against under 1 ms for the rich one.

Their names are in the simulator's registry ([`optsched.sim.registry`][], family ``contention``).

```pycon
>>> from optsched.generators.contention import random_contention_instance
>>> from optsched.sim import simulate
>>> inst = random_contention_instance(jobs=6, seed=1, hours=0.25)
>>> m = simulate(inst, scheduler="contention-lookahead").custom["contention"]
>>> m["finished"], m["avg_jct_s"] >= 900
(6, True)

```
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ...errors import InstanceError
from ...problems.contention import DEMANDS, MODELS
from ..base import Decision
from ..state import Job, Placement, SimView
from .agent import NumpyPolicy, load_policy
from .encoding import (
    Board,
    action_mask,
    all_placements,
    candidates,
    n_actions,
    node_actions,
    observe,
    resolve,
)
from .policies import NoContention, RoundPolicy, _perf, place_unencodable

# these doctests read the shared DeepShare tables: skipped when they are absent (conftest.py at the root)
__doctest_requires__ = {"*": "deepshare-contention"}

SHIPPED_WC = "normal-wc"  # the shipped agent of issue 24 (work-conserving actions, rich observation)
# the shipped learned scheduler is that network plus decision-time search (optsched.rl.planner, which needs the
# environment): the network's 2 best actions, 6 rounds of the network then a fluid estimate, only where the
# network's action is not the lookahead's (session 8: chosen on two 256-job Normal sets of seeds 3,000,000 and
# 3,000,001, neither held out nor trained on, with 4 rounds; session 17: 6 rounds the best of 4, 6 and 8 on 16 tuning
# sets of seeds 3,000,000-3,000,015; session 18: that search beat the lookahead on 40 fresh Normal sets in a test
# decided in advance, docs/results/rl_fresh.md); where at most 8 jobs are unfinished (a small set's whole episode, a
# large set's tail), every valid action followed to the end by the network and both lookaheads, and in the
# first round two decisions deep (session 9: chosen on 15 small sets of seeds 5,000,000-5,000,004, 6-8 jobs, no
# optimum needed; docs/algorithms/rl-contention.md), that endgame search fortified (session 9b: it keeps the best
# trajectory it has scored, leaving it only for a strictly better one), with no secondary tie-break among tied
# trajectories (session 10: each of TIEBREAKS was no better than none on 27 proven tuning sets of seeds 5,000,000+),
# and at each round's start of the endgame stopping each running job is tried too (session 15: stops of at most 1 and
# of at most 2 jobs gave the same values on the 15 tuning sets of 6-8 jobs, seeds 5,000,000-5,000,004, both 1.6 %
# below no stops, improving 5 and worsening none; the cheaper one is shipped)
SHIPPED_PLANNER: dict[str, object] = {"horizon": 6, "top": 2, "gate": "disagree", "endgame": 8, "deep": 8,
                                     "fortify": True, "tiebreak": None, "stops": 1}
# the planner's endgame tie-breaks among complete trajectories of tied scores (optsched.rl.planner.tie_value): the
# exact (unrounded) average JCT, or the exact makespan
TIEBREAKS = ("exact-jct", "makespan")
# the planner's named gates (optsched.rl.planner.plan_episode's ``gate``; here so that the CLI reads them without
# the environment): plan where the agent's action is not the lookahead's (``disagree``) or not either lookahead's
# (``disagree-any``), or, with any base, where the two lookaheads' actions differ (``experts``: a gate that needs no
# network, the non-learned control of session 12)
GATES = ("disagree", "disagree-any", "experts")
OBSERVATIONS = ("paper", "rich", "plan")
PER_ACTION = 7
PLAN_PER_ACTION = 4


def rich_size(nodes: int) -> int:
    """Length of [`rich_observation`][optsched.sim.contention.lookahead.rich_observation] for ``nodes`` nodes (4 nodes:
    99).

    ```pycon
    >>> rich_size(4)
    99

    ```
    """
    return (n_actions(nodes) - 1) * PER_ACTION + nodes + len(MODELS) + 1 + len(DEMANDS) * (1 + len(MODELS)) \
        + len(MODELS) * len(DEMANDS)


RICH_SIZE = rich_size(4)


PLAN_PER_NODE = 3
PLAN_ROUNDS = (1, 3, 6)  # the node features' horizons, in rounds


def plan_size(nodes: int) -> int:
    """Length of the ``plan`` observation (the rich one, then
    [`plan_features`][optsched.sim.contention.lookahead.plan_features] per action, then
    [`node_features`][optsched.sim.contention.lookahead.node_features] per node) for ``nodes`` nodes (4 nodes: 139).

    ```pycon
    >>> plan_size(4)
    139

    ```
    """
    return rich_size(nodes) + (n_actions(nodes) - 1) * PLAN_PER_ACTION + nodes * PLAN_PER_NODE


def obs_size(kind: str, nodes: int, gpus_per_node: int) -> int:
    """The number of floats of the observation ``kind`` (``paper``, ``rich``, ``plan``)."""
    if kind == "rich":
        return rich_size(nodes)
    if kind == "plan":
        return plan_size(nodes)
    return nodes * 2 * gpus_per_node


class ThroughputModel:
    """Predicted ratios and normalised speeds of a board (module docstring). ``running_now``: ids of the jobs
    running before this round's decision (their sticky ratio can only fall)."""

    def __init__(self, view_or_perf: Any, running_now: set[str], threshold: float | None = 0.6):
        perf = _perf(view_or_perf) if isinstance(view_or_perf, SimView) else view_or_perf
        self.perf = perf
        self.blind = isinstance(perf, NoContention)
        self.running_now = set(running_now)
        self.threshold = -1.0 if threshold is None else float(threshold)
        self._keys: dict[tuple[str, Placement], Any] = {}
        self._speed: dict[tuple[str, Placement], float] = {}

    def _entry(self, job: Job, pl: Placement):
        k = (job.id, pl)
        if k not in self._keys:
            self._keys[k] = (self.perf.table_key(job.model, pl.gpus, len(pl.servers), job.id)[0], pl.servers)
            self._speed[k] = 1.0 if self.blind else \
                self.perf.throughput(job.model, pl.gpus, len(pl.servers)) * job.iteration_time_s
        return self._keys[k]

    def ratios(self, placed: Sequence[tuple[Any, Placement]]) -> dict[str, float]:
        fresh = self.perf.fresh_ratios({j.id: self._entry(j, pl) for j, pl in placed})
        return {i: (min(r, self.perf.ratio_of(i)) if i in self.running_now else r) for i, r in fresh.items()}

    def total(self, placed: Sequence[tuple[Any, Placement]], ratios: dict[str, float]) -> float:
        return float(sum(self._speed[(j.id, pl)] * ratios[j.id] for j, pl in placed))

    def speed(self, job: Any, pl: Placement, ratio: float) -> float:
        self._entry(job, pl)
        return self._speed[(job.id, pl)] * ratio


@dataclass
class Option:
    """One valid choice: the action index (-1 outside the agent's space), job, placement and its prediction."""

    action: int
    job: Any
    placement: Placement
    total: float          # predicted total normalised throughput after the placement
    ratio: float          # the placed job's predicted ratio
    speed: float          # the placed job's predicted normalised speed
    others_min: float     # the lowest predicted ratio of the jobs already on the board (1 if none)
    hits_threshold: bool  # some ratio would be at or below the threshold (a preemption next round)


def options(board: Board, model: ThroughputModel, cands: Sequence[Any] | None = None,
            space: str = "actions") -> tuple[list[Option], float]:
    """The valid choices on ``board`` with their predictions, and the board's predicted total now."""
    cands = candidates(board.queue) if cands is None else cands
    base = model.ratios(board.placed)
    total0 = model.total(board.placed, base)
    pairs: list[tuple[int, Any, Placement]] = []
    if space == "actions":
        for a in range(len(node_actions(board.nodes))):
            step = resolve(a, board, cands)
            if step is not None:
                pairs.append((a, *step))
    elif space == "placements":
        for c in cands:
            if c is not None:
                pairs += [(-1, c, pl) for pl in all_placements(c, board.free)]
    else:
        raise InstanceError(f"must be 'actions' or 'placements', got {space!r}", field="space")
    out = []
    for a, job, pl in pairs:
        placed = [*board.placed, (job, pl)]
        r = model.ratios(placed)
        others = [r[j.id] for j, _ in board.placed]
        out.append(Option(a, job, pl, model.total(placed, r), r[job.id], model.speed(job, pl, r[job.id]),
                          min(others, default=1.0), min(r.values()) <= model.threshold))
    return out, total0


def best_option(opts: Sequence[Option], small_first: bool = False) -> Option | None:
    """The option with the highest predicted total (``small_first``: among those placing the smallest demand);
    ties to the lowest action index (the first listed)."""
    if not opts:
        return None
    if small_first:
        g = min(o.job.gpus for o in opts)
        opts = [o for o in opts if o.job.gpus == g]
    return max(opts, key=lambda o: o.total)  # max keeps the first of equal totals


def lookahead_action(board: Board, model: ThroughputModel, cands: Sequence[Any] | None = None,
                     small_first: bool = False) -> int | None:
    """The action ``contention-lookahead`` takes on ``board`` (None: no valid action)."""
    opts, _ = options(board, model, cands)
    best = best_option(opts, small_first)
    return None if best is None else best.action


def rich_observation(board: Board, model: ThroughputModel, cands: Sequence[Any] | None = None,
                     opts: Sequence[Option] | None = None, total0: float | None = None) -> np.ndarray:
    """The richer observation (module docstring) as a flat float32 vector."""
    cands = candidates(board.queue) if cands is None else cands
    if opts is None or total0 is None:
        opts, total0 = options(board, model, cands)
    acts = n_actions(board.nodes) - 1
    per = np.zeros((acts, PER_ACTION), dtype=np.float32)
    for o in opts:
        per[o.action] = (1.0, o.job.gpus / 8.0, o.ratio, o.speed, o.total - total0, o.others_min,
                         float(o.hits_threshold))
    free = board.free / float(board.gpus_per_node)
    total_gpus = float(board.gpus_per_node * board.nodes)
    run_gpus = np.zeros(len(MODELS), dtype=np.float32)
    ratios = model.ratios(board.placed) if board.placed else {}
    for j, pl in board.placed:
        if j.model in MODELS:
            run_gpus[MODELS.index(j.model)] += pl.gpus / total_gpus
    mean_ratio = np.float32(np.mean(list(ratios.values())) if ratios else 1.0)
    cand = np.zeros((len(DEMANDS), 1 + len(MODELS)), dtype=np.float32)
    for i, c in enumerate(cands):
        if c is not None and c.model in MODELS:
            cand[i, 0] = 1.0
            cand[i, 1 + MODELS.index(c.model)] = 1.0
    queue = np.zeros((len(MODELS), len(DEMANDS)), dtype=np.float32)
    for j in board.queue:
        if j.model in MODELS and j.gpus in DEMANDS:
            queue[MODELS.index(j.model), DEMANDS.index(j.gpus)] += 1
    return np.concatenate([per.ravel(), free.astype(np.float32), run_gpus, [mean_ratio], cand.ravel(),
                           np.log1p(queue).ravel() / 4.0]).astype(np.float32)


def _scratch(board: Board) -> Board:
    """A copy of ``board`` without its decision builder (placements on it decide nothing)."""
    return Board(board.free, board.gpus_per_node, list(board.placed), list(board.queue))


def plan_features(board: Board, model: ThroughputModel, now: float, round_s: float,
                  opts: Sequence[Option] | None = None) -> np.ndarray:
    """Per action of the agent's space, a short deterministic look at the rest of the round and the next
    (``(actions, 4)`` floats, zeros for an invalid action): the action is placed on a scratch copy of the board
    and the round is filled by the lookahead (the best predicted total, again and again); then the filled round is
    run for ``round_s`` at the predicted speeds (a job's remaining isolated hours fall by its normalised speed
    x the round's hours) and what is left is estimated as [`optsched.rl.planner.fluid_cost`][] does (shortest
    remaining isolated work first at ``GPUs / mean demand`` job-hours per hour, none before its own remaining
    hours). The four features: the filled round's predicted total minus the board's total now; the jobs placed by
    the fill / 8; the jobs the round completes / 8; the fluid estimate of the jobs' remaining JCT after the round
    (summed over the jobs left, in rounds) minus the lowest of the valid actions', x 10 / the jobs in the
    system (so 0 marks the action the look prefers). Ours (issue 24), a heuristic summary of what the planner's
    rollouts see, not a claim of optimality."""
    if opts is None:
        opts = options(board, model)[0]
    acts = n_actions(board.nodes) - 1
    out = np.zeros((acts, PLAN_PER_ACTION), dtype=np.float32)
    if not opts:
        return out
    total0 = model.total(board.placed, model.ratios(board.placed))
    round_h = round_s / 3600.0
    gpus = float(board.gpus_per_node * board.nodes)
    left_h = {j.id: j.remaining_iterations(now) * j.iteration_time_s / 3600.0
              for j in [*(j for j, _ in board.placed), *board.queue]}
    n_sys = max(len(left_h), 1)
    cost = {}
    for o in opts:
        b = _scratch(board)
        b.place(o.job, o.placement)
        while (best := best_option(options(b, model)[0])) is not None:
            b.place(best.job, best.placement)
        r = model.ratios(b.placed)
        rem = dict(left_h)
        done = 0
        for j, pl in b.placed:
            rem[j.id] -= model.speed(j, pl, r[j.id]) * round_h
            if rem[j.id] <= 1e-9:
                done += 1
                del rem[j.id]
        demand = [j.gpus for j in b.queue] + [j.gpus for j, _ in b.placed if j.id in rem]
        if rem:
            left = np.sort(np.fromiter(rem.values(), dtype=float))
            finish = np.maximum(left, np.cumsum(left) / (gpus / float(np.mean(demand))))
            cost[o.action] = float(finish.sum()) / round_h
        else:
            cost[o.action] = 0.0
        out[o.action, :3] = (model.total(b.placed, r) - total0, (len(b.placed) - len(board.placed)) / 8.0,
                             done / 8.0)
    low = min(cost.values())
    for a, c in cost.items():
        out[a, 3] = 10.0 * (c - low) / n_sys
    return out


def node_features(board: Board, model: ThroughputModel, now: float, round_s: float) -> np.ndarray:
    """Per node, the GPUs (/ GPUs per node) held by the jobs already on the board that will have ended within
    1, 3 and 6 rounds if they keep their predicted speed (their remaining isolated hours / normalised speed):
    when each node frees up, which the planner's rollouts see and the per-action features do not
    (``(nodes, 3)`` floats; ours, issue 24)."""
    out = np.zeros((board.nodes, PLAN_PER_NODE), dtype=np.float32)
    if not board.placed:
        return out
    r = model.ratios(board.placed)
    for j, pl in board.placed:
        speed = model.speed(j, pl, r[j.id])
        left = j.remaining_iterations(now) * j.iteration_time_s / 3600.0
        rounds = left / max(speed, 1e-9) / (round_s / 3600.0)
        for k, h in enumerate(PLAN_ROUNDS):
            if rounds <= h:
                for srv, c in zip(pl.servers, pl.counts):
                    out[srv, k] += c / board.gpus_per_node
    return out


class Lookahead(RoundPolicy):
    """The one-step lookahead (module docstring); ``space``: ``"actions"`` (the agent's) or ``"placements"``."""

    name = "contention-lookahead"
    small_first = False

    def __init__(self, space: str = "actions", threshold: float | None = 0.6):
        if space not in ("actions", "placements"):
            raise InstanceError(f"must be 'actions' or 'placements', got {space!r}", field="space")
        super().__init__(threshold)
        self.space = space

    def decide(self, view: SimView) -> Decision:
        board = self.board(view)
        self.fill(board, view)
        return board.decision()

    def fill(self, board: Board, view: SimView) -> None:
        """Place on ``board`` the best option, again and again, until none is left (never idling)."""
        model = ThroughputModel(view, {j.id for j, _ in board.placed}, self.threshold)
        while True:
            opts, _ = options(board, model, space=self.space)
            best = best_option(opts, self.small_first)
            if best is None:
                break
            board.place(best.job, best.placement)
        place_unencodable(board)


class LookaheadSmall(Lookahead):
    """The lookahead among the placements of the smallest placeable demand (module docstring)."""

    name = "contention-lookahead-small"
    small_first = True


def agent_mask(board: Board, cands: Sequence[Any] | None, work_conserving: bool) -> np.ndarray:
    """The action mask of the agent's space (``cands`` None: the queue's candidates); ``work_conserving``:
    "nothing" masked while a placement is valid."""
    m = action_mask(board, cands)
    if work_conserving and m[:-1].any():
        m[-1] = False
    return m


def agent_observation(kind: str, board: Board, model: ThroughputModel, cands: Sequence[Any],
                      view: SimView | None = None) -> np.ndarray:
    """The observation ``kind`` (``paper``: the ``(nodes, 2 x 8)`` tensor; ``rich``:
    [`rich_observation`][optsched.sim.contention.lookahead.rich_observation]; ``plan``: the rich one, then
    [`plan_features`][optsched.sim.contention.lookahead.plan_features], which read the time and round length of
    ``view``)."""
    if kind == "paper":
        return observe(board, cands)
    if kind == "rich":
        return rich_observation(board, model, cands)
    if kind == "plan":
        if view is None or view.round_s is None:
            raise InstanceError("the plan observation needs the decision point's view in round mode", field="view")
        opts, total0 = options(board, model, cands)
        return np.concatenate([rich_observation(board, model, cands, opts, total0),
                               plan_features(board, model, view.now, view.round_s, opts).ravel(),
                               node_features(board, model, view.now, view.round_s).ravel()])
    raise InstanceError(f"must be one of {', '.join(OBSERVATIONS)}, got {kind!r}", field="observation")


class RlAgent(RoundPolicy):
    """A trained agent on the observation and action space its file records (module docstring; on a cluster
    its network cannot see, the lookahead decides, with a warning); on "nothing"
    (possible only in the paper's space) the round ends, except that an empty cluster gets the lookahead's
    choice (the idle guard). ``policy``: a [`NumpyPolicy`][optsched.sim.contention.agent.NumpyPolicy], an ``.npz`` path
    or a shipped name (default
    ``normal-wc``); ``deterministic``: argmax, else sampled with ``seed``."""

    name = "rl-agent"
    learned = True  # an agent, not a baseline (runner.baseline_names)

    def __init__(self, policy: Any = SHIPPED_WC, deterministic: bool = True, seed: int | None = 0,
                 threshold: float | None = 0.6):
        super().__init__(threshold)
        self.agent: NumpyPolicy = load_policy(policy)
        self.policy = policy
        self.observation = str(self.agent.meta.get("observation", "paper"))
        if self.observation not in OBSERVATIONS:
            raise InstanceError(f"the policy's observation {self.observation!r} is not one of "
                                f"{', '.join(OBSERVATIONS)}", field="policy")
        self.work_conserving = bool(self.agent.meta.get("work_conserving", False))
        self.deterministic, self.seed = bool(deterministic), seed
        self.rng = np.random.default_rng(seed)
        self.stats.update(agent_actions=0, agent_nothing=0, idle_guard=0, unencodable=0, other_cluster=0)

    def decide(self, view: SimView) -> Decision:
        board = self.board(view)
        want = obs_size(self.observation, board.nodes, board.gpus_per_node)
        model = ThroughputModel(view, {j.id for j, _ in board.placed}, self.threshold)
        if self.agent.n_actions != n_actions(board.nodes) or self.agent.n_inputs != want:
            # the agent cannot see this cluster: the lookahead decides instead (and the user is told once), as
            # rl-base falls back to a first fit
            if not self.stats["other_cluster"]:
                warnings.warn(f"{self.name}: the agent takes {self.agent.n_inputs} inputs and {self.agent.n_actions} "
                              f"actions; this cluster ({board.nodes} x {board.gpus_per_node} GPUs) gives {want} and "
                              f"{n_actions(board.nodes)}: the one-step lookahead places instead", stacklevel=2)
            self.stats["other_cluster"] += 1
            while (best := best_option(options(board, model)[0])) is not None:
                board.place(best.job, best.placement)
            self.stats["unencodable"] += place_unencodable(board)
            return board.decision()
        while True:
            cands = candidates(board.queue)
            mask = agent_mask(board, cands, self.work_conserving)
            if not mask[:-1].any():
                break
            a = self.agent.act(agent_observation(self.observation, board, model, cands, view), mask,
                               self.deterministic, self.rng)
            self.stats["agent_actions"] += 1
            step = resolve(a, board, cands)
            if step is None:
                self.stats["agent_nothing"] += 1
                if board.placed:
                    break
                guard = lookahead_action(board, model, cands)
                assert guard is not None
                step = resolve(guard, board, cands)
                self.stats["idle_guard"] += 1
            assert step is not None
            board.place(*step)
        self.stats["unencodable"] += place_unencodable(board)
        return board.decision()


__all__ = ["GATES", "OBSERVATIONS", "RICH_SIZE", "SHIPPED_PLANNER", "SHIPPED_WC", "TIEBREAKS", "Lookahead",
           "LookaheadSmall", "Option", "RlAgent",
           "ThroughputModel", "agent_mask", "agent_observation", "best_option", "lookahead_action", "node_features",
           "obs_size", "options", "plan_features", "plan_size", "rich_observation", "rich_size"]
