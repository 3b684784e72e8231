"""Issue 24: the planner (one-step rollout over a base policy, ``optsched.rl.planner``)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from tests.sim.shared_data import DEEPSHARE, needs_data

from optsched.errors import InstanceError
from optsched.generators.contention import random_contention_instance
from optsched.sim import simulate

pytestmark = needs_data(*DEEPSHARE)
pytest.importorskip("gymnasium")

from optsched.rl.env import ContentionEnv  # noqa: E402
from optsched.rl.imitation import rollout_action  # noqa: E402
from optsched.rl.planner import (  # noqa: E402
    ENDGAME_BASES,
    SHIPPED_PLANNER,
    TIEBREAKS,
    base_policy,
    best_scored,
    fluid_cost,
    jobs_left,
    plan_action,
    plan_episode,
    plan_scores,
    ranked,
)


def _inst(jobs=5, seed=3, hours=0.25):
    return random_contention_instance(jobs=jobs, mix="normal", seed=seed, hours=hours)


def test_plan_action_on_copies_agrees_with_the_rollout_teacher_on_replays():
    """Two implementations of the same search: the planner over the lookahead (copies of the environment) and the
    rollout teacher (a replay of the episode from its start for every tried action) choose the same actions
    along the whole episode."""
    for seed in (2_000_001, 2_000_007):
        inst = _inst(jobs=6, seed=seed)
        env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=True)
        env.reset(options={"instance": inst})
        base = base_policy("lookahead")
        taken, done = [], False
        while not done:
            a, _ = plan_action(env, base)
            assert a == rollout_action(env, taken)
            taken.append(a)
            _, _, term, trunc, _ = env.step(a)
            done = term or trunc


def test_the_planner_is_never_worse_than_its_base_and_its_jct_is_the_simulators():
    """Full rollouts: never worse than the base policy alone (the shipped agent), better on at least one set;
    the base alone through the environment gives the simulator's round-accounted average JCT."""
    better = False
    for seed in (2_000_000, 2_000_003, 2_000_005):
        inst = _inst(jobs=5, seed=seed)
        plain = plan_episode(inst, "normal-wc", plan=False)
        sim = simulate(inst, scheduler={"name": "rl-agent", "policy": "normal-wc"}).jobs["round_jct_s"].mean()
        assert plain["avg_jct_h"] == pytest.approx(sim / 3600.0, rel=1e-9)
        planned = plan_episode(inst, "normal-wc")
        assert planned["decisions"] >= planned["choices"] > 0 and planned["tried"] >= 2 * planned["choices"]
        assert planned["avg_jct_h"] <= plain["avg_jct_h"] + 1e-9
        better |= planned["avg_jct_h"] < plain["avg_jct_h"] - 1e-9
    assert better


def test_truncated_rollouts_finish_the_episode_and_refuse_a_bad_horizon():
    inst = _inst(jobs=8, seed=4, hours=0.5)
    r = plan_episode(inst, "lookahead", horizon=2)
    assert r["avg_jct_h"] >= 0.5 and r["choices"] > 0
    with pytest.raises(InstanceError, match="horizon"):
        plan_episode(inst, "lookahead", horizon=0)


def test_fluid_cost_by_hand():
    """At the start of a 4-job set of a quarter hour each, the fluid rate (32 GPUs / mean demand >= 4 jobs at a
    time) finishes every job at its own 0.25 h: the estimate is 4 x 0.25 / 4 jobs; after the episode, 0."""
    inst = _inst(jobs=4, seed=5)
    env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=True)
    env.reset(options={"instance": inst})
    assert fluid_cost(env) == pytest.approx(0.25, rel=1e-3)
    done = False
    while not done:
        _, _, term, trunc, _ = env.step(env.expert_action())
        done = term or trunc
    assert fluid_cost(env) == 0.0


def test_base_policy_refuses_a_paper_agent():
    with pytest.raises(InstanceError, match="rich or plan observation"):
        base_policy("normal")


def test_the_planner_runs_without_torch_or_sb3():
    """At inference the planner needs numpy and gymnasium (the environment), not torch or stable-baselines3."""
    import subprocess
    import sys

    code = ("import sys\n"
            "for m in ('torch', 'stable_baselines3', 'sb3_contrib'):\n"
            "    sys.modules[m] = None\n"
            "from optsched.generators.contention import random_contention_instance\n"
            "from optsched.rl.planner import plan_episode\n"
            "r = plan_episode(random_contention_instance(jobs=4, seed=0, hours=0.25), 'normal-wc', top=2)\n"
            "print(r['avg_jct_h'] >= 0.25, r['decisions'] > 0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True True"


def test_ranked_puts_the_bases_own_action_first():
    inst = _inst(jobs=8, seed=6, hours=0.5)
    env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=True)
    env.reset(options={"instance": inst})
    for spec in ("lookahead", "normal-wc"):
        order = ranked(env, spec)
        assert order[0] == base_policy(spec)(env)
        assert sorted(order) == [int(a) for a in np.flatnonzero(env.action_masks())]


def test_parallel_rollout_is_never_worse_than_any_of_its_bases():
    """``also``: each tried action followed by every base, scored by the best; with full rollouts the result is
    never worse than any base alone from the start (Bertsekas' parallel rollout). A poor base (the highest valid
    action) planned alone is worse than the lookahead on some set; with the lookahead beside it, never."""
    def last(env):
        return int(np.flatnonzero(env.action_masks())[-1])

    single_worse = False
    for seed in (2_000_002, 2_000_004, 2_000_010):
        inst = _inst(jobs=7, seed=seed)
        alone = [plan_episode(inst, b, plan=False)["avg_jct_h"] for b in (last, "lookahead", "normal-wc")]
        single = plan_episode(inst, last)["avg_jct_h"]
        multi = plan_episode(inst, last, also=("lookahead", "normal-wc"))["avg_jct_h"]
        assert multi <= min(alone) + 1e-9, (seed, multi, alone)
        single_worse |= single > min(alone) + 1e-9
    assert single_worse


def test_a_gate_plans_only_where_the_agent_is_unsure():
    """``gate``: a probability no action falls below plans nowhere (the agent alone, decision for decision);
    ``"disagree"`` plans exactly where the agent's action is not the lookahead's (a hand-written loop)."""
    inst = _inst(jobs=12, seed=7, hours=0.5)
    plain = plan_episode(inst, "normal-wc", plan=False)
    never = plan_episode(inst, "normal-wc", horizon=2, top=2, gate=1e-9)
    assert never["planned"] == 0 and never["avg_jct_h"] == plain["avg_jct_h"]
    gated = plan_episode(inst, "normal-wc", horizon=2, top=2, gate="disagree")
    env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=True)
    env.reset(options={"instance": inst})
    act = base_policy("normal-wc")
    total, planned, done = 0.0, 0, False
    while not done:
        a = act(env)
        if a != env.expert_action():
            top2 = ranked(env, "normal-wc")[:2]
            a, n = plan_action(env, act, 2, lambda e: ranked(e, "normal-wc")[:2])
            planned += int(n > 0)
            assert a in top2
        _, r, term, trunc, _ = env.step(a)
        total, done = total + r, term or trunc
    assert 0 < gated["planned"] == planned < gated["choices"]
    assert gated["avg_jct_h"] == pytest.approx(-total, abs=1e-12)
    with pytest.raises(InstanceError, match="gate"):
        plan_episode(inst, "normal-wc", gate=1.5)
    with pytest.raises(InstanceError, match="gate"):
        plan_episode(inst, "lookahead", gate="disagree")


def test_the_experts_gate_plans_a_lookahead_base_only_where_the_two_lookaheads_differ():
    """``gate="experts"`` (no network needed): a lookahead base plans exactly where the lookahead's action is not
    lookahead-small's, over the lookahead's own top 2 (a hand-written loop), and nowhere else."""
    inst = _inst(jobs=12, seed=7, hours=0.5)
    gated = plan_episode(inst, "lookahead", horizon=2, top=2, gate="experts")
    env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=True)
    env.reset(options={"instance": inst})
    act = base_policy("lookahead")
    total, planned, differ, done = 0.0, 0, 0, False
    while not done:
        a = act(env)
        if a != env.expert_action(True):
            differ += 1
            a, n = plan_action(env, act, 2, lambda e: ranked(e, "lookahead")[:2])
            planned += int(n > 0)
        _, r, term, trunc, _ = env.step(a)
        total, done = total + r, term or trunc
    assert 0 < gated["planned"] == planned <= differ < gated["choices"]
    assert gated["avg_jct_h"] == pytest.approx(-total, abs=1e-12)
    ungated = plan_episode(inst, "lookahead", horizon=2, top=2)
    assert ungated["planned"] > gated["planned"]


def test_a_two_step_search_is_the_best_of_one_step_searches_after_each_action():
    """``depth=2`` by a second method: the score of each first action is its reward plus the best one-step
    score (every valid action, each followed to the end by the best base) of the state it leads to, stepping
    through the states with a single valid action by hand."""
    inst = _inst(jobs=6, seed=2_000_003)
    env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=True)
    env.reset(options={"instance": inst})
    act, more = base_policy("normal-wc"), [base_policy(b) for b in ENDGAME_BASES]
    own, two = plan_scores(env, act, None, None, more, depth=2)
    assert len(two) >= 2 and own in two
    for a, score in two.items():
        e = copy.deepcopy(env)
        _, total, term, trunc, _ = e.step(a)
        while not (term or trunc) and int(e.action_masks().sum()) == 1:
            _, r, term, trunc, _ = e.step(int(np.flatnonzero(e.action_masks())[0]))
            total += r
        if not (term or trunc):
            total += max(plan_scores(e, act, None, None, more)[1].values())
        assert score == pytest.approx(total, abs=1e-12), a
    one = plan_scores(env, act, None, None, more)[1]
    assert all(two[a] >= one[a] - 1e-12 for a in one) and any(two[a] > one[a] + 1e-12 for a in one)


def test_the_endgame_is_exact_rollout_with_three_bases_and_deep_looks_two_decisions_ahead_in_round_one():
    """``endgame`` at or above the set's size: the same episode as every valid action followed to the end by the
    agent and both lookaheads, ungated; ``deep``: the first round's decisions searched two deep (never more
    planned states; the same decisions afterwards are one-step), refused when not a positive integer."""
    inst = _inst(jobs=6, seed=2_000_004)
    end = plan_episode(inst, "normal-wc", horizon=4, top=2, gate="disagree", endgame=6)
    par = plan_episode(inst, "normal-wc", also=ENDGAME_BASES)
    assert end["avg_jct_h"] == par["avg_jct_h"] and end["decisions"] == par["decisions"]
    assert end["endgame_states"] == end["planned"] == par["planned"] > 0
    none = plan_episode(inst, "normal-wc", horizon=4, top=2, gate="disagree", endgame=1)
    assert none["endgame_states"] == 0
    deep = plan_episode(inst, "normal-wc", deep=6)
    assert deep["endgame_states"] == deep["planned"] > 0 and deep["cpu_s"] > 0
    env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=True)
    env.reset(options={"instance": inst})
    assert jobs_left(env) == 6
    for bad in (0, -1, True, 2.5):
        with pytest.raises(InstanceError, match="endgame"):
            plan_episode(inst, "normal-wc", endgame=bad)
        with pytest.raises(InstanceError, match="deep"):
            plan_episode(inst, "normal-wc", deep=bad)


def _replay(inst, actions):
    """The average JCT in hours (minus the avg-JCT return) of ``actions`` played from the start of ``inst``."""
    return replay_actions(inst, actions)[0]


def _check_fortified(inst, actions, seen, tiebreak=False):
    """By replays from the start (a second method): at each endgame state with a choice, the best complete
    trajectory scored there (the actions taken before it plus a scored continuation) is kept when it is strictly
    better than the one kept so far, and the episode takes the kept trajectory's next action; the episode ends as
    the kept trajectory, no worse than any trajectory scored on the way. Better: a lower round-accounted JCT, or
    (``tiebreak``) an equal one and a lower exact JCT. Returns the kept trajectory's JCT."""

    def better(x, y):
        return x[0] < y[0] - 1e-12 or (tiebreak and x[0] <= y[0] + 1e-12 and x[1] < y[1] - 1e-9)

    kept, kept_key = None, (np.inf, np.inf)
    for i, paths in enumerate(seen):
        if not paths:
            continue
        key = {a: replay_actions(inst, actions[:i] + p) for a, p in paths.items()}
        best = next(k for k in key.values() if not any(better(o, k) for o in key.values()))
        if better(best, kept_key):
            assert not any(better(o, key[actions[i]]) for o in key.values()), i
            kept, kept_key = actions[:i] + paths[actions[i]], key[actions[i]]
        assert kept is not None and actions[i] == kept[i], i
    assert actions == kept
    return kept_key[0]


def test_the_fortified_endgame_keeps_the_best_scored_trajectory_and_is_never_worse_than_it_or_each_base(
        monkeypatch):
    """The shipped configuration on a 6-job set (its endgame covers every decision; its first round is searched
    two deep): the episode follows the best trajectory scored so far and leaves it only for a strictly better
    one (checked by replays, [`_check_fortified`]), so it is no worse than any trajectory the search scored nor
    than each of the three bases alone from the start. Without the fortification (``fortify=False``) the check
    fails on seed 2,000,000: on a tie the re-planning search takes the network's own action instead of the
    kept trajectory's (and ends 11.5 % worse there). Without stops (the replays here are of the agent's own
    actions; with stops: the next test)."""
    import optsched.rl.planner as planner

    shipped = {**SHIPPED_PLANNER, "stops": None}
    seen: list[dict[int, list[int]]] = []
    scored = planner.plan_scores

    def spy(env, base, horizon=None, top=None, also=(), depth=1, paths=None, tiebreak=None, ties=None):
        mine: dict[int, list[int]] = {}
        own, scores = scored(env, base, horizon, top, also, depth, mine, tiebreak, ties)
        if paths is not None:
            paths.update(mine)
        seen.append(mine)
        return own, scores

    monkeypatch.setattr(planner, "plan_scores", spy)
    for seed in (2_000_000,):
        inst = _inst(jobs=6, seed=seed)
        seen.clear()
        run = plan_episode(inst, "normal-wc", **shipped)
        assert len(seen) == run["decisions"] and run["endgame_states"] > 0 and run["switches"] >= 1
        assert _replay(inst, run["actions"]) == pytest.approx(run["avg_jct_h"], abs=1e-12)
        tie = shipped["tiebreak"] is not None
        assert _check_fortified(inst, run["actions"], seen, tie) == pytest.approx(run["avg_jct_h"], abs=1e-12)
        bases = [plan_episode(inst, b, plan=False)["avg_jct_h"] for b in ("normal-wc", *ENDGAME_BASES)]
        assert run["avg_jct_h"] <= min(bases) + 1e-12
        if seed == 2_000_000:
            seen.clear()
            plain = plan_episode(inst, "normal-wc", **{**shipped, "fortify": False})
            assert plain["switches"] == 0
            with pytest.raises(AssertionError):
                _check_fortified(inst, plain["actions"], seen, tie)
            seen.clear()  # with the tie-break: left for a better score, or a tied one of a lower exact JCT
            tied = plan_episode(inst, "normal-wc", **{**shipped, "tiebreak": "exact-jct"})
            assert _check_fortified(inst, tied["actions"], seen, True) == pytest.approx(tied["avg_jct_h"], abs=1e-12)


def test_fortify_acts_only_in_the_endgame():
    """Outside the endgame (``endgame=None``) ``fortify`` changes nothing: the same actions and no switches."""
    inst = _inst(jobs=6, seed=2_000_004)
    kw = {**SHIPPED_PLANNER, "endgame": None, "deep": None, "stops": None}
    on, off = plan_episode(inst, "normal-wc", **{**kw, "fortify": True}), plan_episode(inst, "normal-wc",
                                                                                       **{**kw, "fortify": False})
    assert on["actions"] == off["actions"] and on["switches"] == off["switches"] == 0
    assert on["planned"] > 0


def test_the_endgame_stops_a_running_job_where_every_placement_scores_worse(monkeypatch):
    """The shipped configuration (``stops=1``) on a 5-job set where it stops a running job: replayed from the start
    (a second method, [`replay_actions`] with stops) its actions give its average JCT; it is no worse than any
    trajectory its search scored, placements and stops alike (each replayed from the start after the actions taken
    before it); and here it is strictly better than the same search without stops (0.3333 h against 0.35 h in our
    simulator), so a search that never stops, or stops and drops what it scored, fails this test."""
    import optsched.rl.planner as planner

    inst = random_contention_instance(jobs=5, seed=27, hours=0.25)
    scored: list[tuple[int, str, list]] = []  # (the episode's actions before, kind, a trajectory scored from there)
    main: list[ContentionEnv] = []  # the episode's own environment (the first the search scores), not a copy
    taken: list = []
    plan_scores, stop_options = planner.plan_scores, planner.stop_options
    step, stop = ContentionEnv.step, ContentionEnv.stop

    def spy_scores(env, base, horizon=None, top=None, also=(), depth=1, paths=None, tiebreak=None, ties=None):
        main[:] = main or [env]
        mine: dict[int, list] = {}
        out = plan_scores(env, base, horizon, top, also, depth, mine, tiebreak, ties)
        if paths is not None:
            paths.update(mine)
        scored.extend((len(taken), "place", p) for p in mine.values())
        return out

    def spy_stops(env, bases, most):
        opts = stop_options(env, bases, most)
        scored.extend((len(taken), "stop", path) for _, _, path in opts)
        return opts

    def spy_step(self, action):
        if main and self is main[0]:
            taken.append(int(action))
        return step(self, action)

    def spy_stop(self, job_ids):
        if main and self is main[0]:
            taken.append(tuple(job_ids))
        return stop(self, job_ids)

    monkeypatch.setattr(planner, "plan_scores", spy_scores)
    monkeypatch.setattr(planner, "stop_options", spy_stops)
    monkeypatch.setattr(ContentionEnv, "step", spy_step)
    monkeypatch.setattr(ContentionEnv, "stop", spy_stop)
    run = plan_episode(inst, "normal-wc", **SHIPPED_PLANNER)
    assert SHIPPED_PLANNER["stops"] == 1 and run["stopped"] >= 1 and taken == run["actions"]
    assert any(isinstance(a, tuple) and len(a) == 1 for a in run["actions"])
    assert replay_actions(inst, run["actions"], stops=True)[0] == pytest.approx(run["avg_jct_h"], abs=1e-12)
    acts = run["actions"]
    jct = [(k, kind, replay_actions(inst, acts[:k] + path, stops=True)[0]) for k, kind, path in scored]
    assert all(run["avg_jct_h"] <= j + 1e-12 for _, _, j in jct)  # no worse than anything it scored
    searched = sorted({k for k, kind, _ in jct if kind == "stop"})
    assert len(searched) >= 2
    for k in searched:  # stopped iff the best stop beats this state's placements and everything scored before
        stop_best = min(j for i, kind, j in jct if i == k and kind == "stop")
        rest = min(j for i, kind, j in jct if i < k or (i == k and kind == "place"))
        assert isinstance(acts[k], tuple) == (stop_best < rest - 1e-9), k  # a tie (300-s rounds make them) keeps
    monkeypatch.undo()
    # the decisions and those with a choice, counted once each however many stops were searched there (replayed)
    env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=True, stops=True)
    env.reset(options={"instance": inst})
    with_choice = 0
    for a in acts:
        if isinstance(a, tuple):
            env.stop(a)
        else:
            with_choice += int(env.action_masks().sum()) > 1
            env.step(a)
    assert run["decisions"] == sum(not isinstance(a, tuple) for a in acts) and run["choices"] == with_choice
    plain = plan_episode(inst, "normal-wc", **{**SHIPPED_PLANNER, "stops": None})
    assert plain["stopped"] == 0 and run["avg_jct_h"] < plain["avg_jct_h"] - 1e-9


def test_bad_stops_are_refused():
    """``stops`` must be a positive integer or None, and needs the endgame search (``endgame`` or ``deep``)."""
    inst = _inst(jobs=4, seed=2_000_000)
    for bad in (0, -1, 1.5, True, "1"):
        with pytest.raises(InstanceError, match="stops"):
            plan_episode(inst, "normal-wc", **{**SHIPPED_PLANNER, "stops": bad})
    with pytest.raises(InstanceError, match="stops"):
        plan_episode(inst, "normal-wc", stops=1)
    with pytest.raises(InstanceError, match="stops"):
        plan_episode(inst, "normal-wc", endgame=8, plan=False, stops=1)


def replay_actions(inst, actions, work_conserving=True, stops=False):
    """``actions`` played from the start of ``inst`` (a replay, beside the planner's copies): the round-accounted
    average JCT in hours (minus the avg-JCT return) and the exact one, from the completion instants the engine
    gives the finished jobs; each job's exact completion lies in the last round it was counted in. The episode
    must end with the last action. ``work_conserving``: the environment's action space (False: the paper's);
    ``stops``: ``space_optimum``'s wider space, in which a tuple of ``actions`` is a set of job ids to stop."""
    env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=work_conserving, stops=stops)
    env.reset(options={"instance": inst})
    total, done = 0.0, False
    for a in actions:
        assert not done
        if isinstance(a, tuple):
            env.stop(a)
            continue
        _, r, term, trunc, _ = env.step(a)
        total, done = total + r, term or trunc
    assert done
    jobs = list(env.sim.view.jobs.finished.values())
    assert len(jobs) == len(inst.jobs)
    rounded = sum(np.ceil(j.completion_s / inst.round_s - 1e-6) * inst.round_s - j.arrival_s for j in jobs)
    assert rounded / len(jobs) / 3600 == pytest.approx(-total, abs=1e-12)
    return -total, sum(j.completion_s - j.arrival_s for j in jobs) / len(jobs) / 3600


def test_the_tiebreak_takes_the_earliest_exact_completions_among_tied_scores():
    """``tiebreak="exact-jct"`` on a 6-job set, in the first state along the network's episode where it changes the
    planner's choice (the root's tied actions are node relabelings of one another, with equal exact JCTs): each
    tried action's tie value is minus the exact average JCT of its scored trajectory (checked by replay from the
    start); each action's trajectory is, among the bases' trajectories of its best score, one of the lowest exact
    JCT (checked by following each base alone); the choice is a tied action of the lowest exact JCT (the network's
    if it is one, else the lowest index), and the choice without the tie-break is not (so removing or reversing the
    rule fails this test); a fortified run from that state with the tie-break takes it."""
    inst = _inst(jobs=6, seed=2_000_013)
    env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=True)
    env.reset(options={"instance": inst})
    act, more = base_policy("normal-wc"), [base_policy(b) for b in ENDGAME_BASES]
    prefix: list[int] = []
    while True:
        assert not env._done, "no state where the tie-break changes the choice"
        paths: dict[int, list[int]] = {}
        ties: dict[int, float] = {}
        own, scores = plan_scores(env, act, None, None, more, 1, paths, "exact-jct", ties)
        if scores and best_scored(own, scores, ties) != best_scored(own, scores):
            break
        prefix.append(act(env))
        env.step(prefix[-1])
    assert set(paths) == set(ties) == set(scores) and len(scores) > 2
    for a, p in paths.items():
        jct, exact = replay_actions(inst, prefix + p)
        assert jct == pytest.approx(-scores[a], abs=1e-12) and exact == pytest.approx(-ties[a], abs=1e-12), a
        followed = []
        for b in (act, *more):
            e = copy.deepcopy(env)
            path = [a]
            e.step(a)
            while not e._done:
                path.append(b(e))
                e.step(path[-1])
            followed.append(replay_actions(inst, prefix + path))
        best = min(j for j, _ in followed)
        assert jct == pytest.approx(best, abs=1e-12), a
        assert exact == pytest.approx(min(x for j, x in followed if j <= best + 1e-12), abs=1e-12), a
    top = max(scores.values())
    tied = {a: -ties[a] for a in scores if scores[a] >= top - 1e-12}
    assert len(tied) >= 2 and max(tied.values()) > min(tied.values()) + 1e-9
    low = min(tied.values())
    earliest = [a for a in tied if tied[a] <= low + 1e-9]
    choice = best_scored(own, scores, ties)
    assert choice == (own if own in earliest else min(earliest))
    assert best_scored(own, scores) not in earliest


def test_bad_tiebreaks_are_refused():
    """``tiebreak`` must be one of ``TIEBREAKS`` or None: anything else is refused, naming the field."""
    inst = _inst(jobs=4, seed=2_000_000)
    for bad in ("exact", "EXACT-JCT", "", 1, True):
        with pytest.raises(InstanceError, match="tiebreak"):
            plan_episode(inst, "normal-wc", **{**SHIPPED_PLANNER, "tiebreak": bad})
    assert set(TIEBREAKS) == {"exact-jct", "makespan"}
    for ok in (*TIEBREAKS, None):
        assert plan_episode(inst, "normal-wc", **{**SHIPPED_PLANNER, "tiebreak": ok})["avg_jct_h"] > 0


def test_the_tiebreak_rule_inside_scores_and_in_leaving_a_kept_trajectory():
    """The comparison behind each action's score (best base, deeper search) and the fortified search's leaving
    rule: with a tie-break, a tied score (within ``SCORE_EPS``) and a higher tie value wins, a better score wins
    whatever its tie value; without one the score alone decides (a tie keeps the first)."""
    from optsched.rl.planner import _beats, _leaves

    tied_later, tied_earlier, better = (-0.4, -0.36), (-0.4 + 1e-14, -0.35), (-0.38, -0.9)
    assert _beats(tied_earlier, tied_later, "exact-jct") and not _beats(tied_later, tied_earlier, "exact-jct")
    assert _beats(better, tied_earlier, "exact-jct") and not _beats(tied_earlier, better, "exact-jct")
    assert not _beats((-0.4, -0.35), (-0.4, -0.36), None) and _beats(better, tied_earlier, None)
    scores, ties = {0: -0.4, 1: -0.4}, {0: -0.36, 1: -0.35}
    assert _leaves(scores, ties, 1, -0.4, -0.36) and not _leaves(scores, ties, 1, -0.4, -0.35)
    assert not _leaves(scores, None, 1, -0.4, 0.0) and _leaves(scores, None, 1, -0.41, 0.0)
