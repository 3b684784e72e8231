"""A learned scheduler that plans (issue 24): one-step rollout over a base policy, usually a trained agent.

At each decision with more than one valid action, every valid action is tried on a copy of the environment
(``copy.deepcopy``: the simulator's own copy, [`Simulator.clone`][optsched.sim.engine.Simulator.clone]) and the
*base policy* is followed from there, to the end of the episode (``horizon=None``) or for ``horizon`` more rounds;
the action of the best score is taken (ties: the base policy's own action, then the lowest index). This is
Bertsekas' rollout, one step of policy improvement: with ``horizon=None`` it is never worse than its base policy
from the same state (the environment is deterministic), and the rollout teacher of
[`optsched.rl.imitation.rollout_action`][] is the same search with the lookahead as the base. It is a *planner*:
it simulates the future at every decision (one episode per valid action), so its CPU cost per decision is
orders of magnitude above the network's alone; [`plan_episode`][optsched.rl.planner.plan_episode] measures it.

**The shipped learned scheduler** is the shipped network (``normal-wc``) plus this search, with the settings
[`SHIPPED_PLANNER`][optsched.sim.contention.lookahead.SHIPPED_PLANNER]: the network's 2 best actions (``top``), 6
rounds of the network then the fluid estimate (``horizon``), and only in the states where the network's action is
not the one-step lookahead's (``gate="disagree"``; elsewhere the network's own action); where at most 8 jobs of the
set are unfinished (``endgame``: a small set's whole episode, a large set's tail), every valid action, each followed
to the end by the network and both lookaheads and scored by the best, and in the episode's first round two
decisions deep (``deep``); that endgame search is fortified (``fortify``: it keeps the best trajectory it has
scored and leaves it only for a strictly better one, so on ties it does not fall back to the network's action), and at
each round's start it also tries stopping each running job (``stops=1``, a move the network's actions do not have:
[`stop_options`][optsched.rl.planner.stop_options]).
The network is the learned part; the search uses it, as a policy network is used by a planner.
``optsched rl evaluate --planner`` runs it (``rl-planner``). More bases (``also=``: a parallel rollout,
each tried action followed by every base and scored by the best) make it never worse than any of them from the
start with full rollouts.

The score is the average-JCT return (``reward="avg-jct"``: minus the jobs in the system over the jobs in the
set, times the round's hours, summed), so a full rollout scores exactly minus the set's average JCT in hours.
A truncated rollout (``horizon`` rounds) adds a value-free estimate of what is left
([`fluid_cost`][optsched.rl.planner.fluid_cost]): the jobs still in the system finish, shortest remaining work
first, at a fluid rate of ``total GPUs / mean demand`` isolated job-hours per hour (and none before its own
remaining isolated hours).

```pycon
>>> from optsched.generators.contention import random_contention_instance
>>> inst = random_contention_instance(jobs=4, seed=5, hours=0.25)
>>> planned = plan_episode(inst, "lookahead")
>>> plain = plan_episode(inst, "lookahead", plan=False)
>>> planned["avg_jct_h"] <= plain["avg_jct_h"] + 1e-9, planned["decisions"] == plain["decisions"]
(True, True)

```
"""

from __future__ import annotations

import copy
import itertools
import math
import time
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..errors import InstanceError
from ..exact.contention import round_fractions
from ..problems.contention import ContentionInstance
from ..sim.contention.agent import NumpyPolicy, load_policy
from ..sim.contention.lookahead import GATES, SHIPPED_PLANNER, TIEBREAKS
from .env import ContentionEnv

# these doctests read the shared DeepShare tables: skipped when they are absent (conftest.py at the root)
__doctest_requires__ = {"*": "deepshare-contention"}

Base = Callable[[ContentionEnv], int]
# the extra bases of the endgame search (plan_episode's ``endgame``), beside the planner's own
ENDGAME_BASES = ("lookahead", "lookahead-small")
# plan_episode's ``deep`` search looks two decisions deep only in the episode's first DEEP_ROUNDS rounds
DEEP_ROUNDS = 1
SCORE_EPS = 1e-12  # hours per job of the set: scores closer than this are tied (300-s rounds make exact ties)
TIE_EPS = 1e-9  # hours (per job for exact-jct): tie values closer than this are equal


def base_policy(spec: Any) -> Base:
    """The base policy ``env -> action``: ``"lookahead"`` / ``"lookahead-small"`` (the environment's
    [`expert_action`][optsched.rl.env.ContentionEnv.expert_action]) or an agent (a
    [`NumpyPolicy`][optsched.sim.contention.agent.NumpyPolicy], an ``.npz`` path or a shipped name), argmax."""
    if spec in ("lookahead", "lookahead-small"):
        small = spec == "lookahead-small"
        return lambda env: env.expert_action(small)
    pol: NumpyPolicy = load_policy(spec)
    kind = agent_kind(pol)
    return lambda env: pol.act(env.observe(kind), env.action_masks(), True)


def agent_kind(pol: NumpyPolicy) -> str:
    """The observation a planner's agent reads (``rich`` or ``plan``); refuses an agent of the paper's tensor or
    of the paper's action space."""
    kind = pol.meta.get("observation")
    if kind not in ("rich", "plan") or not pol.meta.get("work_conserving"):
        raise InstanceError("the planner's agent must read the rich or plan observation with work-conserving "
                            f"actions (its meta: observation {kind!r}, work_conserving "
                            f"{pol.meta.get('work_conserving')!r})", field="policy")
    return str(kind)


def fluid_cost(env: ContentionEnv) -> float:
    """A value-free estimate (hours, per job of the set, so on the scale of the avg-JCT return) of the average
    JCT still to come for the jobs in the system: shortest remaining isolated work first at a fluid rate of
    ``total GPUs / mean demand`` isolated job-hours per hour; a job finishes no sooner than its own remaining
    isolated hours."""
    assert env.sim is not None
    view = env.sim.view
    jobs = list(view.jobs.active.values())
    if not jobs:
        return 0.0
    now = view.now
    rem = np.sort([j.remaining_iterations(now) * j.iteration_time_s / 3600.0 for j in jobs])
    rate = view.cluster.total_gpus / float(np.mean([j.gpus for j in jobs]))
    finish = np.maximum(rem, np.cumsum(rem) / rate)
    return float(finish.sum()) / len(env.instance.jobs)


def tie_value(env: ContentionEnv, kind: str | None) -> float:
    """The secondary score (higher is better) of the episode ``env`` has finished, used among trajectories of
    tied scores: minus the exact average JCT in hours (``"exact-jct"``: completion instants as the engine
    computes them inside the round, not rounded up to its end), minus the exact makespan in hours
    (``"makespan"``); 0 for ``None`` or an unfinished episode.

    The score itself (the avg-JCT return) counts a job until the end of the round it completes in, so among
    trajectories of one score the one whose jobs finish earliest inside their last rounds is the one closest to
    finishing a job a round earlier: the one a later search is likeliest to improve.

    ```pycon
    >>> from optsched.generators.contention import random_contention_instance
    >>> inst = random_contention_instance(jobs=4, seed=5, hours=0.25)
    >>> env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=True)
    >>> _ = env.reset(options={"instance": inst})
    >>> score = _follow(env, base_policy("lookahead"), None)[0]
    >>> -score - 300 / 3600 < -tie_value(env, "exact-jct") <= -score   # within the last round
    True

    ```
    """
    assert env.sim is not None
    view = env.sim.view
    if kind is None or len(view.jobs.finished) < len(env.instance.jobs):
        return 0.0
    jobs = view.jobs.finished.values()
    if kind == "exact-jct":
        return -sum(j.completion_s - j.arrival_s for j in jobs) / len(env.instance.jobs) / 3600.0
    return -max(j.completion_s for j in jobs) / 3600.0


def _beats(v: tuple[float, float], w: tuple[float, float], tiebreak: str | None) -> bool:
    """Whether the (score, tie value) ``v`` is better than ``w``: without a tie-break, by the score alone (the
    first of exactly equal ones kept); with one, a score better by more than ``SCORE_EPS``, or a tied score and a
    tie value better by more than ``TIE_EPS``."""
    if tiebreak is None:
        return v[0] > w[0]
    return v[0] > w[0] + SCORE_EPS or (v[0] >= w[0] - SCORE_EPS and v[1] > w[1] + TIE_EPS)


def _leaves(scores: dict[int, float], ties: dict[int, float] | None, a: int, value: float, tie: float) -> bool:
    """Whether the fortified search leaves its kept trajectory (score ``value``, tie value ``tie``) for the scored
    action ``a`` (the best of ``scores``): for a better score (by more than ``SCORE_EPS``), or, with tie values,
    for a tied score and a better tie value (by more than ``TIE_EPS``)."""
    if ties is None:
        return max(scores.values()) > value + SCORE_EPS
    return _beats((scores[a], ties[a]), (value, tie), "tie")


def _follow(env: ContentionEnv, base: Base, horizon: int | None, path: list[int] | None = None,
            tiebreak: str | None = None) -> tuple[float, float]:
    """Follow ``base`` from ``env`` (modified) to the end or for ``horizon`` rounds; the return (plus the fluid
    estimate of the rest when cut) and the finished episode's [`tie_value`][optsched.rl.planner.tie_value].
    ``path``: the actions taken are appended to it."""
    total, done = 0.0, env._done
    stop = None if horizon is None else env._rounds + horizon
    while not done:
        if stop is not None and env._rounds >= stop:
            return total - fluid_cost(env), 0.0
        a = base(env)
        if path is not None:
            path.append(a)
        _, r, term, trunc, _ = env.step(a)
        total, done = total + r, term or trunc
    return total, tie_value(env, tiebreak)


def ranked(env: ContentionEnv, spec: Any) -> list[int]:
    """The valid actions, best first, as the base policy ``spec`` ranks them (an agent: by its logits; a
    lookahead: by the predicted total throughput after the placement)."""
    mask = env.action_masks()
    if spec in ("lookahead", "lookahead-small"):
        opts = env._options()[0]
        return [o.action for o in sorted(opts, key=lambda o: -o.total)] or [int(np.flatnonzero(mask)[0])]
    pol = load_policy(spec)
    z = np.where(mask, pol.logits(env.observe(agent_kind(pol))), -np.inf)
    return [int(a) for a in np.argsort(-z, kind="stable") if mask[a]]


def jobs_left(env: ContentionEnv) -> int:
    """The jobs of the episode's set not finished yet (in the system or still to arrive)."""
    assert env.sim is not None
    return len(env.instance.jobs) - len(env.sim.view.jobs.finished)


def _value(env: ContentionEnv, bases: Sequence[Base], horizon: int | None, depth: int,
           path: list[int] | None = None, tiebreak: str | None = None) -> tuple[float, float]:
    """The best return from ``env`` (modified) and its trajectory's tie value: ``depth - 1`` more decisions with
    a choice searched over every valid action (decisions with one valid action are taken as they come), then the
    best of ``bases`` followed (each on its own copy); best by [`_beats`][optsched.rl.planner._beats] with
    ``tiebreak``. ``path``: the actions of the best trajectory are appended to it."""
    total = 0.0
    while depth > 1:
        valid = [int(a) for a in np.flatnonzero(env.action_masks())]
        if len(valid) > 1:
            best, best_path = (-np.inf, -np.inf), None
            for a in valid:
                e = copy.deepcopy(env)
                sub = None if path is None else [a]
                _, r, term, trunc, _ = e.step(a)
                if term or trunc:
                    v = (r, tie_value(e, tiebreak))
                else:
                    rest = _value(e, bases, horizon, depth - 1, sub, tiebreak)
                    v = (r + rest[0], rest[1])
                if _beats(v, best, tiebreak):
                    best, best_path = v, sub
            if path is not None and best_path is not None:
                path.extend(best_path)
            return total + best[0], best[1]
        if path is not None:
            path.append(valid[0])
        _, r, term, trunc, _ = env.step(valid[0])
        total += r
        if term or trunc:
            return total, tie_value(env, tiebreak)
    best, best_path = (-np.inf, -np.inf), None
    for k, b in enumerate(bases):
        e = env if k == len(bases) - 1 else copy.deepcopy(env)
        sub = None if path is None else []
        v = _follow(e, b, horizon, sub, tiebreak)
        if _beats(v, best, tiebreak):
            best, best_path = v, sub
    if path is not None and best_path is not None:
        path.extend(best_path)
    return total + best[0], best[1]


def plan_scores(env: ContentionEnv, base: Base, horizon: int | None = None,
                top: Callable[[ContentionEnv], list[int]] | None = None,
                also: Sequence[Base] = (), depth: int = 1, paths: dict[int, list[int]] | None = None,
                tiebreak: str | None = None, ties: dict[int, float] | None = None) -> tuple[int, dict[int, float]]:
    """The base's own action in ``env``'s current state and the planner's score of each tried action (its
    first reward plus the followed return, on the avg-JCT scale: minus hours per job of the set); no scores
    when only one action would be tried. ``also``: more base policies (parallel rollout): each tried action is
    followed by every base and scored by the best of them. ``depth`` 2 (or more): after each tried action, the
    next ``depth - 1`` decisions with a choice are searched over every valid action before the bases are
    followed (a search tree of that depth with rollouts at its leaves). ``paths``: filled with each tried
    action's scored trajectory (the action sequence, from this state, whose return is its score).
    ``tiebreak`` (one of [`TIEBREAKS`][optsched.rl.planner.TIEBREAKS]): among the bases' (and the deeper
    search's) trajectories of tied scores, the one of the best [`tie_value`][optsched.rl.planner.tie_value] is
    each action's; ``ties``: filled with that trajectory's tie value per tried action."""
    valid = [int(a) for a in np.flatnonzero(env.action_masks())] if top is None else top(env)
    own = int(base(env))
    if own not in valid:
        valid.append(own)
    if len(valid) <= 1:
        return own, {}
    scores = {}
    for a in valid:
        e = copy.deepcopy(env)
        _, r, term, trunc, _ = e.step(a)
        path = None if paths is None else [a]
        if term or trunc:
            v = (r, tie_value(e, tiebreak))
        else:
            rest = _value(e, (base, *also), horizon, depth, path, tiebreak)
            v = (r + rest[0], rest[1])
        scores[a] = v[0]
        if ties is not None:
            ties[a] = v[1]
        if paths is not None and path is not None:
            paths[a] = path
    return own, scores


def best_scored(own: int, scores: dict[int, float], ties: dict[int, float] | None = None) -> int:
    """The planner's choice among ``scores``: the best (within ``SCORE_EPS``); among tied ones, with ``ties``
    (the tie values of [`plan_scores`][optsched.rl.planner.plan_scores]), those of the best tie value (within
    ``TIE_EPS``); then ``own``, then the lowest index.

    ```pycon
    >>> scores = {0: -0.5, 1: -0.4, 2: -0.4}
    >>> best_scored(2, scores), best_scored(2, scores, {0: 0.0, 1: -0.3, 2: -0.35})
    (2, 1)

    ```
    """
    if not scores:
        return own
    best = max(scores.values())
    tied = [a for a in scores if scores[a] >= best - SCORE_EPS]
    if ties is not None:
        top = max(ties[a] for a in tied)
        tied = [a for a in tied if ties[a] >= top - TIE_EPS]
    return own if own in tied else min(tied)


def plan_action(env: ContentionEnv, base: Base, horizon: int | None = None,
                top: Callable[[ContentionEnv], list[int]] | None = None,
                also: Sequence[Base] = (), depth: int = 1) -> tuple[int, int]:
    """The planner's action in ``env``'s current state and how many actions it tried (module docstring);
    ``top``: the actions to try (default: every valid one), for example the base's best few; ``also``: more
    bases, each tried action scored by the best of them; ``depth``: the search depth
    ([`plan_scores`][optsched.rl.planner.plan_scores])."""
    own, scores = plan_scores(env, base, horizon, top, also, depth)
    return best_scored(own, scores), len(scores)


def _stop_sets(env: ContentionEnv, sizes: range) -> Iterator[tuple[str, ...]]:
    """The sets of the running jobs of ``env``'s board, by size (those of ``sizes``), each in board order: what may be
    stopped at a round's start."""
    running = [j.id for j, _ in env.board.placed]
    return itertools.chain.from_iterable(itertools.combinations(running, k) for k in sizes if k <= len(running))


def stop_options(env: ContentionEnv, bases: Sequence[Base], most: int) -> list[tuple[float, tuple[str, ...], list]]:
    """At a round's start of an environment built with ``stops=True``: for every non-empty set of at most ``most``
    running jobs, stopping them (on a copy) and following the best of ``bases`` to the end: its return (the
    avg-JCT scale), the stopped ids and the trajectory (the ids as a tuple, then the bases' actions).

    ```pycon
    >>> from optsched.generators.contention import random_contention_instance
    >>> inst = random_contention_instance(jobs=4, seed=3, hours=0.25)
    >>> env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=True, stops=True)
    >>> _ = env.reset(options={"instance": inst})
    >>> while not (env.round_start and env.board.placed):
    ...     _ = env.step(env.expert_action())
    >>> running = [j.id for j, _ in env.board.placed]
    >>> opts = stop_options(env, [base_policy("lookahead")], 1)
    >>> sorted(ids for _, ids, _ in opts) == [(i,) for i in sorted(running)], opts[0][2][0] == opts[0][1]
    (True, True)

    ```
    """
    out = []
    for ids in _stop_sets(env, range(1, most + 1)):
        e = copy.deepcopy(env)
        e.stop(list(ids))
        path: list[Any] = [ids]
        out.append((_value(e, bases, None, 1, path)[0], ids, path))
    return out


def confidence(env: ContentionEnv, pol: NumpyPolicy) -> float:
    """The agent's probability of its own (argmax) action among the valid ones now (masked softmax)."""
    mask = env.action_masks()
    z = np.where(mask, pol.logits(env.observe(agent_kind(pol))).astype(np.float64), -np.inf)
    p = np.exp(z - z.max())
    return float(p.max() / p.sum())


def check_settings(horizon: int | None = None, top: int | None = None, gate: float | str | None = None,
                   endgame: int | None = None, deep: int | None = None, tiebreak: str | None = None,
                   stops: int | None = None, plan: bool = True, **_: Any) -> None:
    """Refuse search settings [`plan_episode`][optsched.rl.planner.plan_episode] cannot run (``InstanceError``
    naming the setting), before any episode: what it checks first, for callers that check ahead of their runs
    (other keys, e.g. ``fortify``, are passed over).

    ```pycon
    >>> check_settings(**{**SHIPPED_PLANNER, "endgame": None, "deep": None})
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: stops: stops are searched by the endgame search: set endgame or deep (and plan)

    ```
    """
    for name, v in (("horizon", horizon), ("top", top), ("endgame", endgame), ("deep", deep), ("stops", stops)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise InstanceError(f"must be a positive integer or None, got {v!r}", field=name)
    if gate is not None and gate not in GATES and (isinstance(gate, (bool, str)) or not 0 < float(gate) <= 1):
        raise InstanceError(f"must be a number in (0, 1], one of {', '.join(GATES)} or None, got {gate!r}",
                            field="gate")
    if tiebreak is not None and tiebreak not in TIEBREAKS:
        raise InstanceError(f"must be one of {', '.join(TIEBREAKS)} or None, got {tiebreak!r}", field="tiebreak")
    if stops is not None and not (plan and max(endgame or 0, deep or 0)):
        raise InstanceError("stops are searched by the endgame search: set endgame or deep (and plan)", field="stops")


def plan_episode(instance: ContentionInstance, base: Any, horizon: int | None = None,
                 plan: bool = True, top: int | None = None, also: Sequence[Any] = (),
                 gate: float | str | None = None, endgame: int | None = None,
                 deep: int | None = None, fortify: bool = False, tiebreak: str | None = None,
                 stops: int | None = None) -> dict[str, Any]:
    """Run the planner over ``base`` (see [`base_policy`][optsched.rl.planner.base_policy]) on ``instance`` from
    its start (``plan=False``: ``base`` alone); ``top``: try only the base's ``top`` best actions
    ([`ranked`][optsched.rl.planner.ranked]; None: every valid action); ``also``: more bases (specs as ``base``)
    for a parallel rollout, each tried action scored by the best base (never worse than any of them from the
    start, with full rollouts); ``gate``: plan only where the base agent is unsure: a number p (its
    [`confidence`][optsched.rl.planner.confidence] below p), ``"disagree"`` (its action is not the
    lookahead's) or ``"disagree-any"`` (not the lookahead's or not lookahead-small's); elsewhere the agent's own
    action; ``"experts"`` (any base, a lookahead too): plan where the lookahead's action is not lookahead-small's,
    elsewhere the base's own action. ``endgame``: in the states where at most this many jobs of the set are
    unfinished, the search is exact rollout with the best base instead: every valid action tried, ungated, each
    followed to the end by ``base``, by each of ``also`` and by both lookaheads
    ([`ENDGAME_BASES`][optsched.rl.planner.ENDGAME_BASES]), scored by the best; ``deep``: where at most this many
    are unfinished and the episode is in its first round
    ([`DEEP_ROUNDS`][optsched.rl.planner.DEEP_ROUNDS]), that search looks two decisions deep (``depth=2`` of
    [`plan_scores`][optsched.rl.planner.plan_scores]; implies the endgame search). ``fortify``: the endgame
    search is a *fortified* rollout (Bertsekas): it keeps the best complete trajectory scored so far (its
    actions and its exact return) and follows it, leaving it only for a strictly better scored one, so that the
    episode is never worse than any trajectory the endgame search has scored (with a deterministic environment,
    following a scored trajectory's actions gives exactly its score). ``tiebreak`` (one of
    [`TIEBREAKS`][optsched.rl.planner.TIEBREAKS] or None): in the endgame search, among complete trajectories of
    tied scores (300-s rounds make exact ties common), the one of the best
    [`tie_value`][optsched.rl.planner.tie_value] is preferred, in each action's score, in the choice and, when
    fortified, in leaving the kept trajectory (for a tied score and a strictly better tie value); without it ties
    go to the network's action, then the lowest index (and a fortified search keeps its trajectory). ``stops``: the
    endgame search may also stop running jobs (a move the agent's actions do not have, issue 24): at each round's
    start in the endgame, every set of at most ``stops`` running jobs is tried
    ([`ContentionEnv.stop`][optsched.rl.env.ContentionEnv.stop]; they join the queue's back), each followed to the
    end by the best of the endgame's bases ([`stop_options`][optsched.rl.planner.stop_options]), and the best set is
    stopped when its score beats (by more than ``SCORE_EPS``, tie values aside) every scored placement of that state
    and, when fortified, the kept trajectory (then kept: the stop's). Returns the
    average JCT in hours (round accounting, as the simulator's ``round_jct_s``), the decisions, how many of them
    had a choice, how many were planned, the actions tried, how many of the planned ones were in the endgame search
    (``endgame_states``), how many times the planner overruled the base, how many times the fortified search
    took a new trajectory (``switches``: the first one included), the CPU seconds (and per decision), the actions
    taken (``actions``: with ``stops``, a tuple of job ids where jobs were stopped), how many times jobs were
    stopped (``stopped``) and the run's contention ``summary`` (the simulator's ``custom["contention"]``)."""
    check_settings(horizon=horizon, top=top, gate=gate, endgame=endgame, deep=deep, tiebreak=tiebreak, stops=stops,
                   plan=plan)
    act = base_policy(base) if not callable(base) else base
    more = [base_policy(b) if not callable(b) else b for b in also]
    end_more = more + [base_policy(b) for b in ENDGAME_BASES if b != base and b not in also]
    end_at = max(endgame or 0, deep or 0)
    pol = None if callable(base) or base in ("lookahead", "lookahead-small") else load_policy(base)
    if gate is not None and gate != "experts" and pol is None:
        raise InstanceError("a gate other than 'experts' needs an agent (a network) as the base", field="gate")
    if top is not None:
        order = base if pol is None else pol
        k = top

        def prune(e: ContentionEnv) -> list[int]:
            return ranked(e, order)[:k]

    def unsure(e: ContentionEnv) -> bool:
        if gate is None:
            return True
        if gate == "experts":
            return bool(e.expert_action() != e.expert_action(True))
        assert pol is not None
        if gate in GATES:
            a = act(e)
            return bool(a != e.expert_action() or (gate == "disagree-any" and a != e.expert_action(True)))
        return confidence(e, pol) < float(gate)

    env = ContentionEnv([instance], reward="avg-jct", observation="rich", work_conserving=True)
    env.reset(options={"instance": instance})
    c0 = time.process_time()
    total, done, info = 0.0, False, {}
    decisions = choices = planned = tried = changed = ended = switches = stopped = 0
    stop_round = -1  # the round whose start was last searched for stops (once a round)
    actions: list[Any] = []
    keep: list[Any] = []  # the fortified search's trajectory from the current state, and its return
    keep_value = keep_tie = 0.0
    while not done:
        mask = env.action_masks()
        left = jobs_left(env) if plan and end_at else end_at + 1
        if left <= end_at:
            if stops is not None and not env.stops:
                # from here on the environment also stops at the round starts where no placement is valid (the
                # endgame never ends: jobs only finish); before, those states would be one-action decisions
                env.stops = True
            two = deep is not None and left <= deep and env._rounds < DEEP_ROUNDS
            paths: dict[int, list[Any]] | None = {} if fortify else None
            ties: dict[int, float] | None = {} if tiebreak else None
            own, scores = plan_scores(env, act, None, None, end_more, 2 if two else 1, paths, tiebreak, ties)
            if stops is not None and env.round_start and env.board.placed and env._rounds != stop_round:
                stop_round = env._rounds
                bases = (act, *end_more)
                here = max(scores.values()) if scores else _value(copy.deepcopy(env), bases, None, 1)[0]
                value, ids, path = max(stop_options(env, bases, stops), key=lambda o: o[0])
                if value > max(here, keep_value if fortify and keep else -np.inf) + SCORE_EPS:
                    env.stop(list(ids))
                    actions.append(ids)
                    stopped += 1
                    if fortify:  # the stop's trajectory is kept (it holds no further stop)
                        keep, keep_value, switches = path[1:], value, switches + 1
                    continue  # the search again, on the board without them
            a, n = best_scored(own, scores, ties), len(scores)
            if fortify:
                if keep and not mask[keep[0]]:  # not expected (a deterministic environment): drop it
                    keep = []
                if keep and (not scores or not _leaves(scores, ties, a, keep_value, keep_tie)):
                    a = keep[0]
                elif scores:
                    assert paths is not None
                    keep, keep_value, switches = paths[a], scores[a], switches + 1
                    keep_tie = 0.0 if ties is None else ties[a]
            if n:
                planned, tried, ended = planned + 1, tried + n, ended + 1
                changed += int(a != act(env))
        elif plan and unsure(env):
            a, n = plan_action(env, act, horizon, None if top is None else prune, more)
            if n:
                planned, tried = planned + 1, tried + n
                changed += int(a != act(env))
        else:
            a = act(env)
        choices += int(mask.sum() > 1)  # counted here, once per decision (a stop searches the state again)
        _, r, term, trunc, info = env.step(a)
        actions.append(int(a))
        if keep and keep[0] == a:
            keep, keep_value = keep[1:], keep_value - r
        else:
            keep = []
        decisions += 1
        total, done = total + r, term or trunc
    cpu = time.process_time() - c0
    return {"avg_jct_h": -total, "decisions": decisions, "choices": choices, "planned": planned, "tried": tried,
            "changed": changed, "endgame_states": ended, "switches": switches, "cpu_s": cpu,
            "cpu_ms_per_decision": 1000.0 * cpu / max(decisions, 1),
            "actions": actions, "stopped": stopped, "summary": info.get("summary", {})}


def _state_key(env: ContentionEnv, perms: Sequence[tuple[int, ...]]) -> tuple:
    """What the rest of ``env``'s episode depends on, the same for states that differ by a relabelling of the
    nodes (all nodes are alike): the round, each active job's progress and ratio, the queue's order and the
    board's placements (canonical: the least over ``perms`` of the relabelled placements)."""
    assert env.sim is not None
    view = env.sim.view
    jobs = tuple(sorted((j.id, round(j.remaining_iterations(view.now), 6), round(env.perf.ratio_of(j.id), 9))
                        for j in view.jobs.active.values()))
    placed = [(j.id, pl.servers, pl.counts) for j, pl in env.board.placed]
    board = min(tuple(sorted((i, tuple(sorted(zip((p[s] for s in servers), counts))))
                             for i, servers, counts in placed)) for p in perms)
    return env._rounds, jobs, tuple(j.id for j in env.board.queue), board


def space_optimum(instance: ContentionInstance, *, work_conserving: bool = True, stops: bool = False,
                  upper: float | None = None, lower: float | None = None, node_limit: int = 100_000) -> dict[str, Any]:
    """The least average JCT any sequence of the agent's actions reaches on ``instance``: a depth-first branch
    and bound over the environment's valid actions (``work_conserving``: the agent's space, "nothing" masked while
    a placement is valid; False: the paper's space), every child a copy of the environment. ``stops=True`` widens
    the space by the round model's moves: at every round's start any set of the running jobs may also be stopped
    ([`ContentionEnv.stop`][optsched.rl.env.ContentionEnv.stop]; such a step is the tuple of their ids in
    ``actions``), a space the agent's actions do not have.

    It prunes a state whose cost so far plus a bound on the rest is not below the best known (each unfinished job
    stays at least the rounds its remaining work needs alone at its fastest split, and at least this one), and a
    state already reached at no higher cost; states that differ by a relabelling of the nodes are one (for at most
    6 nodes). ``upper``: an average JCT (hours) some sequence of actions is known to reach (for example
    [`plan_episode`][optsched.rl.planner.plan_episode]'s): only better ones are searched for; ``lower``: a proven
    lower bound (for example the optimum of
    [`solve_contention_bb`][optsched.exact.contention.solve_contention_bb], whose space is larger: any
    configuration in every round): the search stops when it is reached. Returns ``avg_jct_h`` (the best found,
    or ``upper`` when none is better), ``proven`` (the search finished, or reached ``lower``), ``nodes`` (states
    expanded) and ``actions`` (the best trajectory found: action indices, and with ``stops`` tuples of the job ids
    stopped; None when ``upper`` was not beaten).

    This is the limit of the action space, not of a policy: a policy over these actions (the network, the
    planner) cannot do better, whatever it learns; the distance from it to ``lower`` is what the action space
    itself costs (it places the first queued job of a demand only, and never moves a running job).

    ```pycon
    >>> from optsched.generators.contention import random_contention_instance
    >>> inst = random_contention_instance(jobs=3, seed=5, hours=0.25)
    >>> best = space_optimum(inst)
    >>> plain = plan_episode(inst, "lookahead", plan=False)
    >>> best["proven"], best["avg_jct_h"] <= plain["avg_jct_h"] + 1e-9
    (True, True)

    ```
    """
    if node_limit < 1:
        raise InstanceError(f"must be at least 1, got {node_limit}", field="node_limit")
    env = ContentionEnv([instance], reward="avg-jct", observation="rich", work_conserving=work_conserving,
                        stops=stops)
    env.reset(options={"instance": instance})
    n, round_h = len(instance.jobs), instance.round_s / 3600.0
    fastest = {j.id: max(f.values()) for j, f in zip(instance.jobs, round_fractions(instance, env.perf))}
    perms = list(itertools.permutations(range(instance.nodes))) if instance.nodes <= 6 \
        else [tuple(range(instance.nodes))]
    best: list[Any] = [np.inf if upper is None else float(upper) + SCORE_EPS, None]
    seen: dict[tuple, float] = {}
    nodes = 0
    stop = -np.inf if lower is None else float(lower) + SCORE_EPS

    def rest(e: ContentionEnv) -> float:
        assert e.sim is not None
        view = e.sim.view
        rounds = sum(max(1, math.ceil(j.remaining_iterations(view.now) / j.iterations / fastest[j.id] - 1e-6))
                     for j in view.jobs.active.values())
        return (rounds + n - len(view.jobs.active) - len(view.jobs.finished)) * round_h / n

    def visit(e: ContentionEnv, cost: float, path: list[Any], start: bool) -> None:
        nonlocal nodes
        if best[0] <= stop or nodes >= node_limit:
            return
        key = (start, _state_key(e, perms))
        if seen.get(key, np.inf) <= cost + SCORE_EPS or cost + rest(e) >= best[0] - SCORE_EPS:
            return
        seen[key] = cost
        nodes += 1
        if start:  # a round's start with stops: every set of running jobs to stop, then the round's placements
            for ids in _stop_sets(e, range(len(e.board.placed) + 1)):
                child = copy.deepcopy(e) if ids else e
                child.stop(ids)
                visit(child, cost, [*path, ids] if ids else path, False)
            return
        for a in np.flatnonzero(e.action_masks()):
            child = copy.deepcopy(e)
            _, r, term, trunc, _ = child.step(int(a))
            if term or trunc:
                if cost - r < best[0] - SCORE_EPS:
                    best[0], best[1] = cost - r, [*path, int(a)]
            else:
                visit(child, cost - r, [*path, int(a)], stops and child.round_start)

    visit(env, 0.0, [], stops)
    value = best[0] if best[1] is not None or upper is None else float(upper)
    return {"avg_jct_h": float(value), "proven": bool(nodes < node_limit or best[0] <= stop), "nodes": nodes,
            "actions": best[1]}


__all__ = ["DEEP_ROUNDS", "ENDGAME_BASES", "GATES", "SCORE_EPS", "SHIPPED_PLANNER", "TIEBREAKS", "TIE_EPS",
           "agent_kind", "base_policy", "best_scored", "check_settings", "confidence", "fluid_cost", "jobs_left",
           "plan_action", "plan_episode", "plan_scores", "ranked", "space_optimum", "stop_options", "tie_value"]
