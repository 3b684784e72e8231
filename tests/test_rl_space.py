"""Issue 24: the limit of the agent's action space (``optsched.rl.planner.space_optimum``), checked against a
plain enumeration of every action sequence and against the exact round model's optimum."""

from __future__ import annotations

import copy

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


def _enumerate(inst, work_conserving, cap):
    """The least cost of every action sequence below ``cap``, with no memory, no symmetry and no bound on the rest:
    a sequence is cut only once it costs ``cap`` (hours per job) already, as idling could otherwise go on
    forever. Returns ``cap`` when no sequence is below it."""
    env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=work_conserving)
    env.reset(options={"instance": inst})
    best = [cap]

    def rec(e, cost):
        for a in np.flatnonzero(e.action_masks()):
            child = copy.deepcopy(e)
            _, r, term, trunc, _ = child.step(int(a))
            if term or trunc:
                best[0] = min(best[0], cost - r)
            elif cost - r < best[0] - 1e-12:
                rec(child, cost - r)

    rec(env, 0.0)
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


@pytest.mark.parametrize("seed", [0, 3, 5])
def test_space_optimum_is_between_the_round_models_optimum_and_every_policy(seed):
    """The exact round model chooses any configuration in every round (moves included), a superset of the
    agent's actions; the paper's space (idling allowed) contains the work-conserving one."""
    inst = _inst(4, seed)
    opt = solve_contention_bb(inst, time_limit=None)
    wc, paper = space_optimum(inst), space_optimum(inst, work_conserving=False)
    assert wc["proven"] and paper["proven"]
    assert opt.objective / 4 / 3600 <= paper["avg_jct_h"] + 1e-9 <= wc["avg_jct_h"] + 2e-9
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


def test_space_optimum_reports_an_unfinished_search():
    inst = _inst(4, 3)
    cut = space_optimum(inst, work_conserving=False, node_limit=1)
    assert not cut["proven"] and cut["nodes"] == 1
    with pytest.raises(InstanceError, match="node_limit"):
        space_optimum(inst, node_limit=0)
