"""A gymnasium environment over the simulator for paper 004 (digest 004, section 2).

One episode is one job set (a [`ContentionInstance`][optsched.problems.contention.ContentionInstance]) simulated by the
package's engine in round mode with the repository's round semantics ([`optsched.sim.contention`][]): the
environment is only an outside driver of the one door's engine ([`optsched.sim.runner.simulator`][], stepped).

* **Observation** (``observation=``): ``"paper"``: ``Box(0, 18, (nodes, 2 x gpus_per_node), float32)``
  ([`observe`][optsched.sim.contention.encoding.observe]): running jobs' type ids left, the K = 3 candidates'
  legal splits right; ``"rich"`` (issue 24): a flat vector of each action's predicted ratio, speed and throughput
  change, free GPUs, running GPUs per model, the candidates' models and the queue's counts per type
  ([`rich_observation`][optsched.sim.contention.lookahead.rich_observation]); ``"plan"``: the rich vector, then
  per action a short deterministic look at the filled round and the next
  ([`plan_features`][optsched.sim.contention.lookahead.plan_features]).
* **Action**: ``Discrete(C(nodes, 2) + 2)``: a node pair, all nodes, or "schedule nothing"; the job is the first
  candidate whose split fits ([`resolve`][optsched.sim.contention.encoding.resolve]).
  [`ContentionEnv.action_masks`][optsched.rl.env.ContentionEnv.action_masks]
  is the mask MaskablePPO reads (valid actions and "nothing"). An invalid action counts as "nothing" (the
  repository's ``is_valid`` returning False). ``work_conserving=True`` masks "nothing" while a placement is
  valid (the agent fills the cluster; it still chooses which job goes where).
  [`ContentionEnv.expert_action`][optsched.rl.env.ContentionEnv.expert_action]
  is the one-step lookahead's action (``contention-lookahead``), the teacher of imitation.
* **Steps and rounds**: a placement action places one job and the same round goes on (the next observation
  shows it), as the repository's inference loop; "nothing" closes the round: the engine applies the round's
  decision (the threshold preemptions of ratios <= 0.6, then the launches) and runs to the next round. Rounds in
  which no action but "nothing" is valid are closed without asking the agent; their rewards are added to the
  next step's reward (no discount between them).
* **Reward** of a round, computed after its decision (``reward=``):

  - ``"paper"`` (eq. 2): ``-W1 x mean CS + (1 - W1) x utilisation``, CS = 1 / ratio over running jobs;
  - ``"repo"``: ``-W1 x mean(1 - ratio) + (1 - W1) x EWMA(utilisation, span 10)`` (``reward_helper.py``);
  - ``"jct"`` (ours): ``-jct_scale x jobs in the system``, whose sum over an episode is minus the total
    round-accounted JCT in rounds x ``jct_scale`` (Little's law), so the return is the average JCT's negative;
  - ``"avg-jct"`` (ours, issue 24): ``-(jobs in the system / jobs in the set) x round hours``: the undiscounted
    return is minus the set's average JCT in hours, whatever the set's size (``docs/algorithms/rl-contention.md``
    says why undiscounted);

  the first two are 0 in a round in which nothing runs, as the repository's.
* ``idle_guard`` (default on): if the agent picks "nothing" while nothing would run, the first candidate is
  placed greedily (widest split first fit), so that an episode always ends (the same guard as ``rl-base``'s).
* ``max_rounds`` truncates an episode (``truncated=True``).
* ``stops=True`` (for searches over a wider space than the agent's, issue 24): the environment also asks at every
  round start at which jobs run, even when no placement is valid, and
  [`stop`][optsched.rl.env.ContentionEnv.stop] may stop running jobs there (their GPUs free, the jobs at the
  queue's back, as the threshold's victims): the round model's moves
  ([`optsched.exact.contention`][]), which the agent's actions cannot make.

```pycon
>>> from optsched.generators.contention import random_contention_instance
>>> env = ContentionEnv([random_contention_instance(jobs=5, seed=0, hours=0.25)], reward="jct")
>>> obs, info = env.reset(seed=0)
>>> obs.shape, int(env.action_space.n), bool(env.action_masks()[-1])
((4, 16), 8, True)
>>> done, total = False, 0.0
>>> while not done:
...     obs, r, term, trunc, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
...     total += r; done = term or trunc
>>> info["summary"]["finished"], round(-total / 0.01 * 300 / 5) == round(info["summary"]["avg_jct_s"])
(5, True)

```
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..errors import InstanceError
from ..generators.contention import random_contention_instance
from ..problems.contention import ContentionInstance
from ..sim.base import Decision, SchedulerPlacer
from ..sim.contention.encoding import N_TYPES, Board, action_mask, candidates, n_actions, observe, resolve
from ..sim.contention.lookahead import (
    OBSERVATIONS,
    ThroughputModel,
    agent_mask,
    best_option,
    node_features,
    obs_size,
    options,
    plan_features,
    rich_observation,
)
from ..sim.contention.policies import greedy_candidate, round_board, threshold_victims
from ..sim.engine import Simulator
from ..sim.runner import simulator

# these doctests read the shared DeepShare tables: skipped when they are absent (conftest.py at the root)
__doctest_requires__ = {"*": "deepshare-contention"}

REWARDS = ("paper", "repo", "jct", "avg-jct")


class _Driven(SchedulerPlacer):
    """The engine's policy while the environment drives: it asks for a decision every round, decides nothing."""

    name = "env"
    every_round = True

    def decide(self, view):
        return Decision()


class ContentionEnv(gym.Env):
    """Paper 004's environment (module docstring). ``job_sets``: instances to cycle through (a sequence), or a
    function ``episode index -> instance``; default: Normal job sets of 256 jobs, seeds 0, 1, 2, ..."""

    metadata = {"render_modes": []}
    # the current round (set by _set_board at each round's start)
    board: Board
    victims: list[Any]
    _n0: int
    _model: ThroughputModel

    def __init__(self, job_sets: Sequence[ContentionInstance] | Callable[[int], ContentionInstance] | None = None,
                 *, reward: str = "paper", w1: float = 0.4, jct_scale: float = 0.01, threshold: float | None = None,
                 idle_guard: bool = True, max_rounds: int = 20_000, shuffle: bool = False,
                 observation: str = "paper", work_conserving: bool = False, stops: bool = False):
        if reward not in REWARDS:
            raise InstanceError(f"must be one of {', '.join(REWARDS)}, got {reward!r}", field="reward")
        if isinstance(w1, bool) or not isinstance(w1, (int, float)) or not 0 <= w1 <= 1:
            raise InstanceError(f"must be a number in [0, 1], got {w1!r}", field="w1")
        if job_sets is None:
            job_sets = lambda i: random_contention_instance(jobs=256, mix="normal", seed=i)  # noqa: E731
        if callable(job_sets):
            self._make: Callable[[int], ContentionInstance] = job_sets
            self._count: int | None = None  # a function: no fixed number of job sets
            first = job_sets(0)
        else:
            sets = list(job_sets)
            if not sets:
                raise InstanceError("at least one job set is needed", field="job_sets")
            self._make, self._count, first = (lambda i: sets[i % len(sets)]), len(sets), sets[0]
        self.nodes, self.gpus_per_node = first.nodes, first.gpus_per_node
        self.reward_kind, self.w1, self.jct_scale = reward, float(w1), float(jct_scale)
        self.threshold_override = threshold
        self.idle_guard, self.max_rounds, self.shuffle = bool(idle_guard), int(max_rounds), bool(shuffle)
        if observation not in OBSERVATIONS:
            raise InstanceError(f"must be one of {', '.join(OBSERVATIONS)}, got {observation!r}", field="observation")
        self.observation, self.work_conserving, self.stops = observation, bool(work_conserving), bool(stops)
        if observation in ("rich", "plan"):
            self.observation_space = spaces.Box(-64.0, 64.0, (obs_size(observation, self.nodes, 0),), np.float32)
        else:
            self.observation_space = spaces.Box(0.0, float(N_TYPES), (self.nodes, 2 * self.gpus_per_node),
                                                np.float32)
        self.action_space: spaces.Discrete = spaces.Discrete(n_actions(self.nodes))
        self.n_act = n_actions(self.nodes)
        self._episode = 0
        self.sim: Simulator | None = None

    # -- gymnasium API ---------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = options or {}
        if seed is not None:  # a seed restarts the sequence of job sets: same seed, same episode
            self._episode = 0
        if "instance" in options:
            inst = options["instance"]
        else:
            k = self._episode
            if self.shuffle and self._count:
                k = int(self.np_random.integers(self._count))
            inst = self._make(k)
            self._episode += 1
        if (inst.nodes, inst.gpus_per_node) != (self.nodes, self.gpus_per_node):
            raise InstanceError(f"job set is for {inst.nodes} x {inst.gpus_per_node} GPUs, the environment for "
                                f"{self.nodes} x {self.gpus_per_node}", field="nodes")
        self.instance = inst
        self.threshold = inst.threshold if self.threshold_override is None else self.threshold_override
        # the one door's engine for a contention instance (its measured model, rounds and round accounting),
        # with a policy that decides nothing: the agent's actions are the decisions
        self.sim = simulator(inst, scheduler=_Driven(), seed=seed)
        self.perf: Any = self.sim.perf
        self.recorder = self.sim.collectors[0]  # the kind's round accounting (rounds of GPUs held and ratios)
        self.sim.reset()
        self._rounds = 0
        self._ewma = [0.0, 0.0]
        self._pending_reward = 0.0
        self._done = False
        self._truncated = False
        self._opts_key: tuple | None = None
        self._obs_cache: dict[str, np.ndarray] = {}  # observations of the board of _opts_key
        self._next_round()
        return self._obs(), {}

    def step(self, action):
        if self.sim is None or self._done:
            raise RuntimeError("call reset() first (the episode is over)")
        a = int(action)
        cands = candidates(self.board.queue)
        step = resolve(a, self.board, cands) if a < self.n_act - 1 else None
        if step is None and self.idle_guard and not self.board.placed:
            step = greedy_candidate(self.board, cands)
        closed = True
        if step is not None:
            self.board.place(*step)
            closed = not action_mask(self.board)[:-1].any()
        if closed:
            self._close_round()
            if not self._done:
                self._next_round()
        r, self._pending_reward = self._pending_reward, 0.0
        info: dict[str, Any] = {}
        if self._done:
            info["summary"] = self.sim.result().custom["contention"]
        return self._obs(), float(r), self._done and not self._truncated, self._truncated, info

    def action_masks(self) -> np.ndarray:
        """The valid actions now (MaskablePPO reads this method)."""
        if self._done:
            m = np.zeros(self.n_act, dtype=bool)
            m[-1] = True
            return m
        return agent_mask(self.board, None, self.work_conserving)

    def expert_action(self, small_first: bool = False) -> int:
        """The action ``contention-lookahead`` would take now (the teacher of [`optsched.rl.imitation`][]);
        "nothing" (the last) when no placement is valid."""
        if self._done:
            return self.n_act - 1
        best = best_option(self._options()[0], small_first)
        return self.n_act - 1 if best is None else best.action

    @property
    def round_start(self) -> bool:
        """True at a round's start, before any placement of the round (where
        [`stop`][optsched.rl.env.ContentionEnv.stop] may be called)."""
        return not self._done and self.sim is not None and len(self.board.placed) == self._n0

    def stop(self, job_ids: Sequence[str]) -> None:
        """Stop the running jobs ``job_ids`` at this round's start (``stops=True`` only; before any placement of the
        round): their GPUs are free for this round's placements and they join the queue's back, as the threshold's
        victims do; a job placed again in the same round moves (at no cost, as in the round model).

        ```pycon
        >>> from optsched.generators.contention import random_contention_instance
        >>> env = ContentionEnv([random_contention_instance(jobs=4, seed=3, hours=0.25)], reward="avg-jct",
        ...                     work_conserving=True, stops=True)
        >>> _ = env.reset(seed=0)
        >>> while not (env.round_start and env.board.placed):  # to a round's start at which jobs run
        ...     _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        >>> first = env.board.placed[0][0].id
        >>> env.stop([first])
        >>> first in {j.id for j, _ in env.board.placed}, env.board.queue[-1].id == first
        (False, True)

        ```
        """
        if self.sim is None or self._done:
            raise RuntimeError("call reset() first (the episode is over)")
        if not self.stops:
            raise InstanceError("the environment was built without stops=True", field="stops")
        if not self.round_start:
            raise InstanceError("jobs are stopped at a round's start, before its placements", field="job_ids")
        running = {j.id: j for j, _ in self.board.placed}
        unknown = [i for i in job_ids if i not in running]
        if unknown:
            raise InstanceError("is not running in this round", field="job_ids", job=unknown[0])
        if not job_ids:
            return
        self.victims = self.victims + [running[i] for i in job_ids]
        self._set_board(self.sim.view)

    # -- rounds --------------------------------------------------------------------------------------------
    def _obs(self) -> np.ndarray:
        return self.observe(self.observation)

    def observe(self, kind: str) -> np.ndarray:
        """The observation ``kind`` (``paper``, ``rich`` or ``plan``) of the current state, whatever the
        environment's own (a planner's base agent may read another than its student)."""
        if self._done:
            if kind == "paper":
                return np.zeros((self.nodes, 2 * self.gpus_per_node), dtype=np.float32)
            return np.zeros(obs_size(kind, self.nodes, self.gpus_per_node), dtype=np.float32)
        if kind == "paper":
            return observe(self.board)
        opts, total0 = self._options()  # (re)sets the cache below when the board has changed
        if kind not in self._obs_cache:
            if kind == "rich":
                self._obs_cache[kind] = rich_observation(self.board, self._model, opts=opts, total0=total0)
            else:
                assert self.sim is not None
                now, rs = self.sim.view.now, self.instance.round_s
                self._obs_cache[kind] = np.concatenate([
                    self.observe("rich"), plan_features(self.board, self._model, now, rs, opts).ravel(),
                    node_features(self.board, self._model, now, rs).ravel()])
        return self._obs_cache[kind].copy()

    def _options(self):
        """The lookahead's options on the current board (cached until the board changes)."""
        key = (len(self.board.placed), self._rounds)
        if self._opts_key != key:
            self._opts_key, self._opts = key, options(self.board, self._model)
            self._obs_cache = {}
        return self._opts

    def _next_round(self) -> None:
        """Advance to the next decision point at which the agent has a choice (closing the others)."""
        assert self.sim is not None
        while True:
            view = self.sim.advance()
            if view is None:
                self._done = True
                return
            self.victims = threshold_victims(view, self.threshold, self.perf)
            self._set_board(view)
            if action_mask(self.board)[:-1].any() or (self.stops and self.board.placed):
                return
            self._close_round()
            if self._done:
                return

    def _set_board(self, view: Any) -> None:
        """This round's board: the running jobs but the victims stay, the queue FIFO then the victims."""
        self.board = round_board(view, self.victims)
        self._n0 = len(self.board.placed)
        self._model = ThroughputModel(self.perf, {j.id for j, _ in self.board.placed}, self.threshold)
        self._opts_key = None

    def _close_round(self) -> None:
        assert self.sim is not None
        self.sim.apply(self.board.decision())
        self._pending_reward += self._round_reward()
        self._rounds += 1
        if self._rounds >= self.max_rounds:
            self._done = self._truncated = True

    def _round_reward(self) -> float:
        assert self.sim is not None
        view = self.sim.view
        ratios = [self.perf.ratio_of(j.id) for j in view.jobs.active.values() if j.status == "running"]
        util = view.cluster.busy_gpus / view.cluster.total_gpus
        if self.reward_kind == "jct":
            return -self.jct_scale * len(view.jobs.active)
        if self.reward_kind == "avg-jct":
            return -len(view.jobs.active) / len(self.instance.jobs) * self.instance.round_s / 3600.0
        num, den = self._ewma
        a = 2.0 / 11.0  # pandas ewm(span=10), adjust=True: weights (1 - a)^i, normalised
        self._ewma = [util + (1 - a) * num, 1.0 + (1 - a) * den]
        if self.reward_kind == "paper":
            return paper_reward(ratios, util, self.w1)
        return repo_reward(ratios, self._ewma[0] / self._ewma[1], self.w1)


def paper_reward(ratios: Sequence[float], util: float, w1: float) -> float:
    """Paper 004's eq. 2: ``-W1 x mean CS + (1 - W1) x utilisation`` with CS = 1 / ratio; 0 if nothing runs.

    ```pycon
    >>> round(paper_reward([0.5, 1.0], 0.5, 0.4), 6)     # -0.4 x 1.5 + 0.6 x 0.5
    -0.3

    ```
    """
    if not len(ratios):
        return 0.0
    return float(-w1 * np.mean(1.0 / np.asarray(ratios)) + (1 - w1) * util)


def repo_reward(ratios: Sequence[float], util_ewma: float, w1: float) -> float:
    """The repository's ``compute_rewards``: ``-W1 x mean(1 - ratio) + (1 - W1) x EWMA(util)``; 0 if nothing
    runs.

    ```pycon
    >>> round(repo_reward([0.5, 1.0], 0.5, 0.4), 6)
    0.2

    ```
    """
    if not len(ratios):
        return 0.0
    return float(-w1 * np.mean(1.0 - np.asarray(ratios)) + (1 - w1) * util_ewma)


__all__ = ["REWARDS", "ContentionEnv", "paper_reward", "repo_reward"]
