"""Issue 24, expert iteration: a trained agent loaded into a model, the planner's labels on the network's own
states, and the refit toward them (``optsched.rl.imitation.planner_labels`` / ``planner_dagger``)."""

from __future__ import annotations

import numpy as np
import pytest
from tests.sim.shared_data import DEEPSHARE, needs_data

from optsched.errors import InstanceError
from optsched.generators.contention import random_contention_instance
from optsched.sim.contention.agent import NumpyPolicy, shipped_policy

pytestmark = needs_data(*DEEPSHARE)
pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from optsched.rl.env import ContentionEnv  # noqa: E402
from optsched.rl.export import load_numpy_weights, numpy_policy  # noqa: E402
from optsched.rl.imitation import margin_labels, planner_dagger, planner_labels  # noqa: E402
from optsched.rl.planner import base_policy, plan_action, plan_episode  # noqa: E402
from optsched.rl.train import make_model  # noqa: E402

WC = "normal-wc"  # the shipped work-conserving agent (rich observation)


def _inst(jobs=5, seed=11, hours=0.25):
    return random_contention_instance(jobs=jobs, mix="normal", seed=seed, hours=hours)


def _model(seed=0):
    env = ContentionEnv([_inst()], reward="avg-jct", observation="rich", work_conserving=True)
    return make_model(env, seed=seed, gamma=1.0)


def test_load_numpy_weights_gives_the_agents_logits_and_refuses_another_shape():
    agent = shipped_policy(WC)
    model = _model()
    obs = np.random.default_rng(0).normal(size=(8, agent.n_inputs)).astype(np.float32)
    before = numpy_policy(model)
    assert not np.allclose([before.logits(o) for o in obs], [agent.logits(o) for o in obs], atol=1e-3)
    load_numpy_weights(model, agent)
    after = numpy_policy(model)
    assert np.allclose([after.logits(o) for o in obs], [agent.logits(o) for o in obs], atol=1e-5)
    with pytest.raises(InstanceError, match="policy"):
        load_numpy_weights(model, shipped_policy())  # the paper agent: 64 inputs, not the rich observation's


def test_planner_labels_are_the_planners_actions_on_the_students_own_states():
    """The labels are plan_action's choices in the states the student reaches (replayed here step by step), only
    states with a choice are kept, and the first state's return-to-go is minus the student's average JCT."""
    agent = shipped_policy(WC)
    inst = _inst(jobs=6, seed=2_000_003)
    data = planner_labels(inst, agent, agent, horizon=None, top=None)
    env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=True)
    obs, _ = env.reset(options={"instance": inst})
    act, want, done = base_policy(agent), [], False
    assert env.action_masks().sum() > 1  # the first state has a choice: its return-to-go is the whole return
    while not done:
        mask = env.action_masks()
        if mask.sum() > 1:
            want.append(plan_action(env, act)[0])
        obs, _, term, trunc, _ = env.step(agent.act(obs, mask, True))
        done = term or trunc
    assert list(data["action"]) == want and len(want) > 0
    assert (data["mask"].sum(axis=1) > 1).all() and data["mask"][np.arange(len(want)), data["action"]].all()
    plain = plan_episode(inst, agent, plan=False)["avg_jct_h"]
    assert data["return"][0] == pytest.approx(-plain, rel=1e-5)
    assert (np.diff(data["return"]) >= -1e-6).all()  # rewards are never positive: returns-to-go only rise
    # the base's own action and the planner's gain over it (job-hours): a label other than the own action wins
    # by a positive gain, the own action by none; and replaying the student, the own action is the agent's argmax
    own, gain = data["own"], data["gain"]
    assert ((gain > 0) == (data["action"] != own)).all() and (gain >= 0).all()
    assert (data["action"] != own).any()
    assert list(own) == [agent.act(o, m, True) for o, m in zip(data["obs"], data["mask"])]
    kept = margin_labels(data, float(gain.max()) + 1.0)
    assert (kept["action"] == own).all()


def test_a_widened_rich_agent_reads_the_plan_observation_and_acts_as_before():
    """widen_inputs gives a plan network the rich agent's function: driven through the environment, it takes the
    rich agent's actions and reaches its average JCT."""
    from optsched.rl.export import widen_inputs
    from optsched.sim.contention.lookahead import plan_size

    agent = shipped_policy(WC)
    wide = widen_inputs(agent, plan_size(4), {**agent.meta, "observation": "plan"})
    inst = _inst(jobs=8, seed=2_000_010)
    a = plan_episode(inst, agent, plan=False)
    b = plan_episode(inst, wide, plan=False)
    assert a["avg_jct_h"] == b["avg_jct_h"] and a["decisions"] == b["decisions"]
    with pytest.raises(InstanceError, match="narrow"):
        widen_inputs(agent, 10)


def test_planner_dagger_moves_the_network_toward_the_planners_labels():
    model = _model(seed=1)
    load_numpy_weights(model, shipped_policy(WC))
    start = numpy_policy(model)
    log: list = []
    seen: list = []

    def make(i):
        return _inst(jobs=4 + i % 3, seed=5 + i)

    data = planner_dagger(model, [(make, 6, None, None, 4)], iterations=1, epochs=40, lr=3e-3, log=log,
                          after=lambda it, m: seen.append(it))
    assert seen == [0] and log[0]["samples"] == len(data["action"]) == 4 * log[0]["planner_labels"][0]
    student = numpy_policy(model)
    agree = np.mean([student.act(o, m) == a for o, m, a in zip(data["obs"], data["mask"], data["action"])])
    assert agree == pytest.approx(log[0]["accuracy"])
    assert log[0]["agree_before"] == pytest.approx(
        np.mean([start.act(o, m) == a for o, m, a in zip(data["obs"], data["mask"], data["action"])]))
    assert agree > log[0]["agree_before"] or agree == 1.0
    assert isinstance(student, NumpyPolicy)
