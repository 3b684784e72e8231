"""Issue 24: the limit of the agent's action space (``optsched.rl.planner.space_optimum``), checked against a
plain enumeration of every action sequence and against the exact round model's optimum."""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest
from tests.sim.shared_data import DEEPSHARE, needs_data
from tests.test_rl_planner import replay_actions

from optsched.errors import InstanceError
from optsched.exact.contention import solve_contention_bb
from optsched.generators.contention import random_contention_instance

pytestmark = needs_data(*DEEPSHARE)
pytest.importorskip("gymnasium")

from optsched.rl.env import ContentionEnv  # noqa: E402
from optsched.rl.planner import plan_episode, space_optimum  # noqa: E402


def _inst(jobs, seed):
    return random_contention_instance(jobs=jobs, mix="normal", seed=seed, hours=0.25)


def _enumerate(inst, work_conserving, cap, stops=False):
    """The least cost of every action sequence below ``cap``, with no memory, no symmetry and no bound on the rest:
    a sequence is cut only once it costs ``cap`` (hours per job) already, as idling could otherwise go on
    forever. Returns ``cap`` when no sequence is below it. ``stops``: at every round's start, every set of the
    running jobs is also stopped first (the empty set included); as that space is far larger, a sequence is then
    cut once its cost and this round's (every job in the system stays to its end) reach ``cap``, and a state
    reached again, up to a relabelling of the nodes, at no lower cost is not expanded again."""
    env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=work_conserving, stops=stops)
    env.reset(options={"instance": inst})
    best = [cap]
    seen = {}
    perms = list(itertools.permutations(range(inst.nodes)))
    round_h = inst.round_s / 3600 / len(inst.jobs)

    def again(e, cost, start):
        if not stops:
            return False
        view = e.sim.view
        if cost + len(view.jobs.active) * round_h >= best[0] - 1e-12:
            return True
        board = min(tuple(sorted((j.id, tuple(sorted((p[s], c) for s, c in zip(pl.servers, pl.counts))))
                                 for j, pl in e.board.placed)) for p in perms)
        key = (e._rounds, start, board, tuple(j.id for j in e.board.queue),
               tuple(sorted((j.id, round(j.remaining_iterations(view.now), 6), e.perf.ratio_of(j.id))
                            for j in view.jobs.active.values())))
        if seen.get(key, np.inf) <= cost:
            return True
        seen[key] = cost
        return False

    def rec(e, cost, start):
        if again(e, cost, start):
            return
        if start:
            running = [j.id for j, _ in e.board.placed]
            for ids in itertools.chain.from_iterable(itertools.combinations(running, k)
                                                     for k in range(len(running) + 1)):
                child = copy.deepcopy(e)
                child.stop(ids)
                rec(child, cost, False)
            return
        for a in np.flatnonzero(e.action_masks()):
            child = copy.deepcopy(e)
            _, r, term, trunc, _ = child.step(int(a))
            if term or trunc:
                best[0] = min(best[0], cost - r)
            elif cost - r < best[0] - 1e-12:
                rec(child, cost - r, stops and child.round_start)

    rec(env, 0.0, stops)
    return best[0]


@pytest.mark.parametrize("jobs,seed,work_conserving", [(2, 0, True), (2, 0, False), (2, 4, True), (2, 4, False),
                                                       (2, 9, False), (3, 2, True), (3, 7, True)])
def test_space_optimum_equals_the_plain_enumeration(jobs, seed, work_conserving):
    inst = _inst(jobs, seed)
    best = space_optimum(inst, work_conserving=work_conserving)
    assert best["proven"]
    # its trajectory reaches its value, and no sequence does better (the enumeration, cut just above that
    # value, would return a lower one; a value below every sequence's would be caught by the replay)
    assert replay_actions(inst, best["actions"], work_conserving)[0] == pytest.approx(best["avg_jct_h"], abs=1e-9)
    assert _enumerate(inst, work_conserving, best["avg_jct_h"] + 1e-6) == pytest.approx(best["avg_jct_h"], abs=1e-9)


@pytest.mark.parametrize("jobs,seed", [(2, 0), (2, 4), (3, 5)])
def test_space_optimum_with_stops_equals_the_plain_enumeration(jobs, seed):
    inst = _inst(jobs, seed)
    best = space_optimum(inst, stops=True)
    assert best["proven"]
    assert replay_actions(inst, best["actions"], stops=True)[0] == pytest.approx(best["avg_jct_h"], abs=1e-9)
    assert _enumerate(inst, True, best["avg_jct_h"] + 1e-6, stops=True) == pytest.approx(best["avg_jct_h"], abs=1e-9)


@pytest.mark.parametrize("seed", [0, 3, 5])
def test_space_optimum_is_between_the_round_models_optimum_and_every_policy(seed):
    """The exact round model chooses any configuration in every round (moves included), a superset of the
    agent's actions; the paper's space (idling allowed) contains the work-conserving one."""
    inst = _inst(4, seed)
    opt = solve_contention_bb(inst, time_limit=None)
    wc, paper = space_optimum(inst), space_optimum(inst, work_conserving=False)
    assert wc["proven"] and paper["proven"]
    assert opt.objective / 4 / 3600 <= paper["avg_jct_h"] + 1e-9 <= wc["avg_jct_h"] + 2e-9
    if seed != 5:  # the agent's actions and the round model's moves (seed 5's search takes minutes)
        wider = space_optimum(inst, stops=True)
        assert wider["proven"] and opt.objective / 4 / 3600 <= wider["avg_jct_h"] + 1e-9 <= wc["avg_jct_h"] + 2e-9
    for base in ("lookahead", "lookahead-small"):
        assert wc["avg_jct_h"] <= plan_episode(inst, base, plan=False)["avg_jct_h"] + 1e-9


def test_space_optimum_keeps_a_known_value_and_stops_at_a_lower_bound():
    inst = _inst(3, 2)
    best = space_optimum(inst)
    same = space_optimum(inst, upper=best["avg_jct_h"])  # nothing strictly better exists
    assert same["proven"] and same["actions"] is None and same["avg_jct_h"] == best["avg_jct_h"]
    looser = space_optimum(inst, upper=best["avg_jct_h"] + 0.5)
    assert looser["avg_jct_h"] == pytest.approx(best["avg_jct_h"]) and looser["actions"] is not None
    stopped = space_optimum(inst, lower=best["avg_jct_h"])  # proof by meeting the bound
    assert stopped["proven"] and stopped["avg_jct_h"] == pytest.approx(best["avg_jct_h"])
    assert stopped["nodes"] <= best["nodes"]


@pytest.mark.parametrize("jobs,seed", [(3, 5), (4, 33)])
def test_stopping_running_jobs_reaches_what_the_agents_actions_cannot(jobs, seed):
    """On these sets every sequence of the agent's actions ends above the round model's optimum (3 jobs: 0.306 h
    against 0.278 h); one that may also stop a running job at a round's start reaches it."""
    inst = _inst(jobs, seed)
    opt = solve_contention_bb(inst, time_limit=None).objective / jobs / 3600
    agent = space_optimum(inst)
    wider = space_optimum(inst, stops=True, upper=agent["avg_jct_h"])
    assert agent["proven"] and agent["avg_jct_h"] > opt * 1.05
    assert wider["proven"] and wider["avg_jct_h"] == pytest.approx(opt, abs=1e-9)
    assert any(isinstance(a, tuple) for a in wider["actions"])
    assert replay_actions(inst, wider["actions"], stops=True)[0] == pytest.approx(opt, abs=1e-9)


def test_stop_is_only_for_an_environment_with_stops_at_a_rounds_start():
    inst = _inst(4, 3)
    env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=True)
    env.reset(options={"instance": inst})
    with pytest.raises(InstanceError, match="stops"):
        env.stop([])
    env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=True, stops=True)
    env.reset(options={"instance": inst})
    while not (env.round_start and env.board.placed):  # to a round's start at which a job runs
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    running = [j.id for j, _ in env.board.placed]
    with pytest.raises(InstanceError, match="job_ids") as err:
        env.stop(["nobody"])
    assert err.value.job == "nobody"
    env.stop(running)  # their GPUs are free, and they are queued again (at the back)
    assert not env.board.placed and [j.id for j in env.board.queue[-len(running):]] == running
    assert len(running) > 1  # so that one placement leaves the round open
    env.step(int(np.flatnonzero(env.action_masks()[:-1])[0]))
    assert not env.round_start and env.board.placed
    with pytest.raises(InstanceError, match="round's start"):
        env.stop([])


def test_space_optimum_reports_an_unfinished_search():
    inst = _inst(4, 3)
    cut = space_optimum(inst, work_conserving=False, node_limit=1)
    assert not cut["proven"] and cut["nodes"] == 1
    with pytest.raises(InstanceError, match="node_limit"):
        space_optimum(inst, node_limit=0)
