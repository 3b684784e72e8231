"""Paper 004's gymnasium environment: check_env, the observation, the action mask, rewards, and that an episode
is the simulator's run of the same policy (issue 13)."""

from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.sim.shared_data import DEEPSHARE, needs_data

from optsched.generators.contention import random_contention_instance
from optsched.problems.contention import LEGAL_SPLITS, MODELS, MULTI_SPLITS
from optsched.sim import simulate
from optsched.sim.contention.agent import NumpyPolicy, shipped_policy
from optsched.sim.contention.encoding import (
    Board,
    action_mask,
    candidates,
    node_actions,
    observe,
    resolve,
    type_id,
)
from optsched.sim.state import Placement

gym = pytest.importorskip("gymnasium")
from optsched.rl.env import ContentionEnv, paper_reward, repo_reward  # noqa: E402

pytestmark = needs_data(*DEEPSHARE)


def test_check_env_passes():
    from gymnasium.utils.env_checker import check_env

    sets = [random_contention_instance(jobs=8, seed=s, hours=0.5) for s in range(2)]
    for reward in ("paper", "repo", "jct"):
        check_env(ContentionEnv(sets, reward=reward), skip_render_check=True)


def test_observation_of_a_hand_built_state():
    """Fig. 2 style: two running jobs, three candidates of demands 2, 4, 8 (type ids by the repository's rule)."""
    job = lambda i, m, g: NS(id=i, model=m, gpus=g)  # noqa: E731
    a, b = job("a", "MoE", 8), job("b", "DLRM", 4)
    c, d, e, late = job("c", "GraphSage", 2), job("d", "FSDP", 8), job("e", "MobileNetV3", 4), job("f", "MoE", 2)
    board = Board(np.array([2, 4, 6, 8]), 8, [(a, Placement((0, 1), (4, 4))), (b, Placement((0, 2), (2, 2)))],
                  [c, d, e, late])
    A, B, C, D, E = 18, 14, 4, 9, 2
    assert (type_id("MoE", 8), type_id("DLRM", 4), type_id("GraphSage", 2), type_id("FSDP", 8),
            type_id("MobileNetV3", 4)) == (A, B, C, D, E)
    expect = np.zeros((4, 16))
    expect[0, :8] = [A, A, A, A, B, B, 0, 0]
    expect[1, :8] = [A, A, A, A, 0, 0, 0, 0]
    expect[2, :8] = [B, B, 0, 0, 0, 0, 0, 0]
    # right half: [servers - 1, 8 + GPUs per server - 1]
    for (servers, per), t in [((1, 2), C), ((2, 1), C),                  # 2 = 1 x 2 | 2 x 1
                              ((1, 4), E), ((2, 2), E), ((4, 1), E),      # 4 = 1 x 4 | 2 x 2 | 4 x 1
                              ((1, 8), D), ((2, 4), D), ((4, 2), D)]:     # 8 = 1 x 8 | 2 x 4 | 4 x 2
        expect[servers - 1, 8 + per - 1] = t
    assert np.array_equal(observe(board), expect)
    assert [x.id for x in candidates(board.queue)] == ["c", "e", "d"]  # f is not a head-of-queue candidate
    # actions: pair (2, 3) holds the 2-GPU candidate (first in K order), all four nodes only the 4-GPU one (4 x 1)
    acts = node_actions(4)
    assert resolve(acts.index((2, 3)), board)[0].id == "c"
    assert resolve(acts.index((0, 1, 2, 3)), board)[0].id == "e"
    assert resolve(acts.index((0, 1, 2, 3)), board)[1] == Placement((0, 1, 2, 3), (1, 1, 1, 1))


@st.composite
def boards(draw):
    free = np.array(draw(st.lists(st.integers(0, 8), min_size=4, max_size=4)))
    n = draw(st.integers(0, 6))
    queue = [NS(id=f"q{i}", model=draw(st.sampled_from(MODELS)), gpus=draw(st.sampled_from([2, 4, 8])))
             for i in range(n)]
    return Board(free, 8, [], queue)


@given(boards())
def test_every_masked_action_is_valid_and_every_valid_action_is_unmasked(board):
    mask = action_mask(board)
    cands = candidates(board.queue)
    assert mask[-1]
    for a, nodes in enumerate(node_actions(4)):
        got = resolve(a, board)
        assert mask[a] == (got is not None)
        # valid iff some candidate has a legal split over these nodes that fits
        fits = [c for c in cands if c is not None and c.gpus % len(nodes) == 0
                and (len(nodes), c.gpus // len(nodes)) in MULTI_SPLITS[c.gpus]
                and all(board.free[s] >= c.gpus // len(nodes) for s in nodes)]
        assert mask[a] == bool(fits)
        if got is not None:
            job, pl = got
            assert job is fits[0] and pl.servers == nodes
            assert (len(nodes), pl.counts[0]) in LEGAL_SPLITS[job.gpus]
            assert all(board.free[s] >= c for s, c in zip(pl.servers, pl.counts))
    assert resolve(len(mask) - 1, board) is None  # "nothing"


def test_rewards_match_their_formulas_over_an_episode():
    inst = random_contention_instance(jobs=12, seed=5, hours=0.25)
    for kind in ("paper", "repo"):
        env = ContentionEnv([inst], reward=kind, w1=0.3)
        env.reset(seed=0)
        total, done = 0.0, False
        rng = np.random.default_rng(1)
        while not done:
            _, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            total += r
            done = term or trunc
        util = np.array([busy / inst.total_gpus for _, busy, _ in env.recorder.rounds])
        ratios = [[r for _, _, r in running.values()] for _, _, running in env.recorder.rounds]
        if kind == "paper":
            expect = sum(paper_reward(rr, u, 0.3) for rr, u in zip(ratios, util))
        else:
            ewma = pd.Series(util).ewm(span=10).mean().to_numpy()
            expect = sum(repo_reward(rr, e, 0.3) for rr, e in zip(ratios, ewma))
        assert total == pytest.approx(expect, rel=1e-9, abs=1e-9)


def test_an_episode_is_the_simulators_run_of_the_same_policy():
    inst = random_contention_instance(jobs=20, seed=7, hours=0.5)
    agent = shipped_policy()
    env = ContentionEnv([inst], reward="jct")
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        obs, _, term, trunc, info = env.step(agent.act(obs, env.action_masks()))
        done = term or trunc
    run = simulate(inst, scheduler={"name": "rl-base", "policy": agent})
    assert info["summary"]["avg_jct_s"] == run.custom["contention"]["avg_jct_s"]
    assert info["summary"]["utilisation"] == pytest.approx(run.custom["contention"]["utilisation"])
    plan = run.custom["contention_rounds"]["plan"]
    assert [sorted(c) for _, c in plan] == [sorted(r) for _, _, r in env.recorder.rounds]


def test_truncation_and_seeded_reset():
    inst = random_contention_instance(jobs=30, seed=1)
    env = ContentionEnv([inst], max_rounds=5)
    env.reset(seed=3)
    done, steps = False, 0
    while not done:
        _, _, term, trunc, _ = env.step(env.action_space.n - 1)
        done, steps = term or trunc, steps + 1
    assert trunc and not term
    a, _ = env.reset(seed=3)
    b, _ = ContentionEnv([inst]).reset(seed=3)
    assert np.array_equal(a, b)


def test_numpy_policy_rejects_bad_input(tmp_path):
    p = NumpyPolicy([(np.ones((64, 8), np.float32), np.zeros(8, np.float32))])
    with pytest.raises(Exception, match="observation has 3 values"):
        p.logits(np.zeros(3))
    with pytest.raises(Exception, match="allows nothing"):
        p.act(np.zeros(64), np.zeros(8, dtype=bool))
    bad = tmp_path / "x.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(Exception, match="cannot read policy"):
        NumpyPolicy.load(bad)
