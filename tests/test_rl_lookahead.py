"""Issue 24: the one-step lookahead policies, the work-conserving action space, the richer observation, the
average-JCT reward, the ``rl-agent`` policy and imitation (DAgger from the lookahead)."""

from __future__ import annotations

import numpy as np
import pytest
from tests.sim.shared_data import DEEPSHARE, needs_data

from optsched.generators.contention import random_contention_instance
from optsched.sim import simulate
from optsched.sim.contention.agent import NumpyPolicy
from optsched.sim.contention.lookahead import (
    RICH_SIZE,
    Lookahead,
    ThroughputModel,
    options,
    rich_observation,
)

pytestmark = needs_data(*DEEPSHARE)


def _inst(jobs=24, seed=3, hours=0.5, mix="normal"):
    return random_contention_instance(jobs=jobs, mix=mix, seed=seed, hours=hours)


class _Spy(Lookahead):
    """The lookahead, recording after each round's plan: the actions still valid and the predicted ratios, and
    checking that its first placement is an option of the highest predicted total (brute force over the valid
    actions, which must be exactly the mask's)."""

    def reset(self) -> None:
        super().reset()
        self.left: list[bool] = []
        self.predicted: list[tuple[float, dict[str, float]]] = []
        self.checked = 0

    def fill(self, board, view) -> None:
        from optsched.sim.contention.encoding import action_mask

        kept = {j.id for j, _ in board.placed}
        n0 = len(board.placed)
        model = ThroughputModel(view, kept, self.threshold)
        opts, _ = options(board, model)
        assert sorted(o.action for o in opts) == list(np.flatnonzero(action_mask(board)[:-1]))
        super().fill(board, view)
        if opts:
            job, pl = board.placed[n0]
            chosen = [o.total for o in opts if o.job is job and o.placement == pl]
            assert chosen and chosen[0] == max(o.total for o in opts)
            self.checked += 1
        self.left.append(bool(action_mask(board)[:-1].any()))
        self.predicted.append((view.now, model.ratios(board.placed)))


def test_lookahead_never_idles_picks_the_best_and_predicts_the_engines_ratios():
    """After each round's decision no action of the agent's space is valid (work-conserving); each first
    placement has the highest predicted total; and the ratios the lookahead predicted for the board are the
    ones the engine then runs the jobs at (a second computation: the engine's sticky performance model, read by
    the run's recorder)."""
    inst = _inst()
    spy = _Spy()
    run = simulate(inst, scheduler=spy)
    assert run.custom["contention"]["finished"] == len(inst.jobs)
    assert spy.left and not any(spy.left) and spy.checked > 5
    engine = dict(run.custom["contention_rounds"]["ratios"])
    checked = 0
    for t, pred in spy.predicted:
        if t in engine and pred:
            got = engine[t]
            assert set(got) == set(pred)
            assert all(abs(got[i] - pred[i]) < 1e-12 for i in got)
            checked += 1
    assert checked > 5


def test_lookahead_beats_random_actions_on_these_sets():
    """Not a timing: the average JCT over three fixed Normal sets of 48 jobs (deterministic policies and seeds)."""
    insts = [_inst(jobs=48, seed=1_000_000 + s, hours=1.0) for s in range(3)]
    jct = {p: np.mean([simulate(i, scheduler=p).custom["contention"]["avg_jct_s"] for i in insts])
           for p in ("contention-random", "contention-lookahead", "contention-lookahead-small")}
    assert jct["contention-lookahead"] < jct["contention-random"]
    assert jct["contention-lookahead-small"] < jct["contention-random"]


def test_rich_observation_shape_and_action_block():
    inst = _inst(jobs=10)
    env_like = simulate(inst, scheduler="contention-lookahead")  # warm: the tables load once
    assert env_like.custom["contention"]["finished"] == 10
    gym = pytest.importorskip("gymnasium")  # noqa: F841
    from optsched.rl.env import ContentionEnv

    env = ContentionEnv([inst], observation="rich", work_conserving=True, reward="avg-jct")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (RICH_SIZE,) and obs.dtype == np.float32
    mask = env.action_masks()
    # the first column of each action's block is its validity, the same as the mask
    assert list(obs[:7 * 7:7] > 0) == list(mask[:-1])
    assert not mask[-1]  # work-conserving: "nothing" masked while a placement is valid
    board = env.board
    again = rich_observation(board, ThroughputModel(env.perf, {j.id for j, _ in board.placed}))
    assert np.array_equal(obs, again)


def test_the_shipped_work_conserving_agent_is_small_and_runs_without_torch_gymnasium_or_sb3():
    import subprocess
    import sys

    from optsched.sim.contention.agent import shipped_path, shipped_policy

    assert shipped_path("normal-wc").stat().st_size < 1_000_000
    p = shipped_policy("normal-wc")
    assert p.n_inputs == RICH_SIZE and p.n_actions == 8
    assert p.meta["observation"] == "rich" and p.meta["work_conserving"] and p.meta["reward"] == "avg-jct"
    code = ("import sys\n"
            "for m in ('torch', 'gymnasium', 'stable_baselines3', 'sb3_contrib'):\n"
            "    sys.modules[m] = None\n"
            "from optsched.generators.contention import random_contention_instance\n"
            "from optsched.sim import simulate\n"
            "r = simulate(random_contention_instance(jobs=6, seed=0, hours=0.25), scheduler='rl-agent')\n"
            "print(r.custom['contention']['finished'], r.policy.stats['agent_actions'] > 0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "6 True"


gym = pytest.importorskip("gymnasium")
from optsched.rl.env import ContentionEnv  # noqa: E402


def test_check_env_with_the_new_options():
    from gymnasium.utils.env_checker import check_env

    sets = [_inst(jobs=8, seed=s) for s in range(2)]
    check_env(ContentionEnv(sets, reward="avg-jct", observation="rich", work_conserving=True),
              skip_render_check=True)


def test_work_conserving_episode_leaves_no_valid_placement_unused():
    """Random masked actions in the work-conserving space: the round closes only when nothing fits, so every
    round's decision leaves no valid action (the same property as the lookahead's)."""
    from optsched.sim.contention.encoding import action_mask

    env = ContentionEnv([_inst(jobs=16, seed=7)], work_conserving=True, reward="avg-jct")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    done, steps = False, 0
    while not done:
        m = env.action_masks()
        assert m[:-1].any() and not m[-1]
        board = env.board
        env.step(int(rng.choice(np.flatnonzero(m))))
        if env._done or env.board is not board:  # the round closed: the old board had nothing valid left
            assert not action_mask(board)[:-1].any()
        done, steps = env._done, steps + 1
    assert steps > 0


def test_avg_jct_return_is_minus_the_average_jct_in_hours():
    inst = _inst(jobs=12, seed=11, hours=0.5)
    env = ContentionEnv([inst], reward="avg-jct", work_conserving=True)
    env.reset(seed=0)
    total, done, info = 0.0, False, {}
    while not done:
        _, r, term, trunc, info = env.step(env.expert_action())
        total += r
        done = term or trunc
    assert total == pytest.approx(-info["summary"]["avg_jct_s"] / 3600, rel=1e-9)
    # and the teacher's episode is the lookahead policy's run
    teacher = simulate(inst, scheduler="contention-lookahead").custom["contention"]
    assert info["summary"]["avg_jct_s"] == teacher["avg_jct_s"]


def test_small_first_teacher_labels_are_the_lookahead_small_policys_run():
    """Rolled out alone, each teacher's episode is its registered policy's run; the two teachers differ on
    some set (else the option would be nothing)."""
    from optsched.rl.imitation import rollouts

    differ = False
    for seed in (11, 12, 13):
        inst = _inst(jobs=16, seed=seed, hours=0.5)
        jct = {}
        for teacher, policy in (("lookahead", "contention-lookahead"),
                                ("lookahead-small", "contention-lookahead-small")):
            env = ContentionEnv([inst], reward="avg-jct", work_conserving=True, observation="rich")
            data = rollouts(env, 1, teacher=teacher)
            jct[teacher] = -float(data["return"][0])
            run = simulate(inst, scheduler=policy).custom["contention"]
            assert jct[teacher] == pytest.approx(run["avg_jct_s"] / 3600, rel=1e-6)  # float32 returns
        differ |= jct["lookahead"] != jct["lookahead-small"]
    assert differ


def _random_policy(n_in: int, seed: int = 0, observation: str = "rich") -> NumpyPolicy:
    rng = np.random.default_rng(seed)
    return NumpyPolicy([(rng.normal(0, 0.3, (n_in, 16)), rng.normal(0, 0.1, 16)),
                        (rng.normal(0, 1.0, (16, 8)), rng.normal(0, 0.1, 8))],
                       {"name": "rand", "observation": observation, "work_conserving": True})


def test_plan_features_of_the_lookaheads_action_are_the_lookaheads_filled_round():
    """The ``plan`` observation is the rich one plus, per action, the look at the filled round: for the action
    the lookahead takes, the fill is the lookahead's own round, so its features must equal what the environment
    driven by the lookahead then places (count) and predicts (total); invalid actions are zeros; the fluid
    column is 0 at its best valid action."""
    from optsched.sim.contention.lookahead import PLAN_PER_ACTION, plan_size

    inst = _inst(jobs=20, seed=13)
    env = ContentionEnv([inst], observation="plan", work_conserving=True, reward="avg-jct")
    obs, _ = env.reset(seed=0)
    checked, done, freed = 0, False, 0.0
    while not done:
        assert obs.shape == (plan_size(4),)
        mask = env.action_masks()
        assert np.array_equal(obs[:RICH_SIZE], env.observe("rich"))
        plan = obs[RICH_SIZE:RICH_SIZE + 7 * PLAN_PER_ACTION].reshape(7, PLAN_PER_ACTION)
        nodes = obs[RICH_SIZE + 7 * PLAN_PER_ACTION:].reshape(4, -1)  # GPUs freed within 1, 3, 6 rounds
        assert (nodes >= 0).all() and (np.diff(nodes, axis=1) >= 0).all() and (nodes <= 1).all()
        freed += float(nodes.sum())
        assert not plan[~mask[:-1]].any()
        assert plan[mask[:-1], 3].min() == 0.0
        a = env.expert_action()
        start_round, board, n0 = env._rounds, env.board, len(env.board.placed)
        total0 = env._options()[1]
        b = a
        while True:  # the lookahead fills the rest of the round; the prediction of its last placement is the round's
            last = next(o.total for o in env._options()[0] if o.action == b)
            obs, _, term, trunc, _ = env.step(b)
            done = term or trunc
            if done or env._rounds != start_round:
                break
            b = env.expert_action()
        assert plan[a, 1] == pytest.approx((len(board.placed) - n0) / 8)
        assert plan[a, 0] == pytest.approx(last - total0, abs=1e-5)
        checked += 1
    assert checked > 5 and freed > 0


def test_rl_agent_on_the_plan_observation_is_the_environments_episode():
    """``rl-agent`` builds the ``plan`` observation from the simulator's view, the environment from its own
    state: driven by the same network they agree job for job, and so does the planner's base without planning."""
    from optsched.rl.planner import plan_episode
    from optsched.sim.contention.lookahead import plan_size

    inst = _inst(jobs=20, seed=13)
    pol = _random_policy(plan_size(4), seed=1, observation="plan")
    env = ContentionEnv([inst], observation="plan", work_conserving=True, reward="avg-jct")
    obs, _ = env.reset(seed=0)
    done, info, choices = False, {}, 0
    while not done:
        choices += int(env.action_masks().sum() > 1)
        obs, _, term, trunc, info = env.step(pol.act(obs, env.action_masks()))
        done = term or trunc
    run = simulate(inst, scheduler={"name": "rl-agent", "policy": pol})
    assert run.custom["contention"]["avg_jct_s"] == info["summary"]["avg_jct_s"]
    assert run.policy.stats["agent_actions"] > choices > 0
    plain = plan_episode(inst, pol, plan=False)
    assert plain["avg_jct_h"] == pytest.approx(info["summary"]["avg_jct_s"] / 3600, rel=1e-9)


def test_rl_agent_policy_is_the_environments_episode():
    """The simulator's ``rl-agent`` and the environment driven by the same network agree job for job: the two
    build the observation and the mask independently of each other's state."""
    inst = _inst(jobs=20, seed=13)
    pol = _random_policy(RICH_SIZE)
    env = ContentionEnv([inst], observation="rich", work_conserving=True, reward="avg-jct")
    obs, _ = env.reset(seed=0)
    done, info = False, {}
    while not done:
        obs, _, term, trunc, info = env.step(pol.act(obs, env.action_masks()))
        done = term or trunc
    run = simulate(inst, scheduler={"name": "rl-agent", "policy": pol})
    assert run.custom["contention"]["avg_jct_s"] == info["summary"]["avg_jct_s"]
    assert run.policy.stats["agent_nothing"] == 0


def test_rl_agent_on_a_cluster_its_network_cannot_see_falls_back_to_the_lookahead():
    bad = _random_policy(64)
    inst = _inst(jobs=8)
    with pytest.warns(UserWarning, match="lookahead places instead"):
        run = simulate(inst, scheduler={"name": "rl-agent", "policy": bad})
    assert run.policy.stats["other_cluster"] > 0 and run.policy.stats["agent_actions"] == 0
    fallback = simulate(inst, scheduler="contention-lookahead").custom["contention"]
    assert run.custom["contention"]["avg_jct_s"] == fallback["avg_jct_s"]


def test_bad_environment_options():
    from optsched.errors import InstanceError

    with pytest.raises(InstanceError, match="observation"):
        ContentionEnv([_inst(jobs=4)], observation="pixels")


torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")
from optsched.rl.imitation import fit, rollouts  # noqa: E402
from optsched.rl.train import make_model, train  # noqa: E402


def test_behaviour_cloning_learns_the_teacher():
    """Cloning raises the agreement with the lookahead on the teacher's own states above the untrained
    network's (whose agreement is what chance and the mask give)."""
    env = ContentionEnv([_inst(jobs=16, seed=s, hours=0.5) for s in range(3)], reward="avg-jct",
                        observation="rich", work_conserving=True)
    model = make_model(env, seed=0, gamma=1.0)
    data = rollouts(env, 3)
    from optsched.rl.export import numpy_policy

    before = np.mean([numpy_policy(model).act(o, m) == a for o, m, a in zip(data["obs"], data["mask"],
                                                                             data["action"])])
    stats = fit(model, data, epochs=30, lr=3e-3)
    assert stats["accuracy"] > before + 0.1 and stats["accuracy"] > 0.6


def test_train_refuses_an_unknown_teacher():
    from optsched.errors import InstanceError

    with pytest.raises(InstanceError, match="teacher"):
        train(seed=0, imitation=1, imitation_episodes=1, jobs=4, n_sets=1, hours=0.25, teacher="oracle")
    with pytest.raises(InstanceError, match="rollout"):
        train(seed=0, imitation=1, imitation_episodes=1, jobs=4, n_sets=1, hours=0.25, rollout={"windows": []})


def test_train_with_imitation_then_ppo_exports_an_agent_rl_agent_runs(tmp_path):
    out = tmp_path / "p.npz"
    model, info = train(seed=2, timesteps=128, imitation=2, imitation_episodes=1, jobs=8, n_sets=3, hours=0.25,
                        n_steps=64, batch_size=32, n_epochs=1, numpy_output=out)
    assert info["observation"] == "rich" and info["work_conserving"] and info["reward"] == "avg-jct"
    assert [x["iteration"] for x in info["imitation"]["log"]] == [0, 1] and info["timesteps"] >= 128
    p = NumpyPolicy.load(out)
    assert p.meta["observation"] == "rich" and p.n_inputs == RICH_SIZE
    run = simulate(_inst(jobs=10, seed=1_000_000), scheduler={"name": "rl-agent", "policy": str(out)})
    assert run.custom["contention"]["finished"] == 10


def test_rollout_teacher_is_never_worse_than_the_lookahead():
    """Followed from the start, the rollout teacher's episode (each valid action tried, the lookahead after it)
    is at most the lookahead's average JCT; on these sets it is better on at least one."""
    from optsched.rl.imitation import rollout_action

    better = False
    for seed in (21, 22):
        inst = _inst(jobs=8, seed=seed, hours=0.5)
        env = ContentionEnv([inst], reward="avg-jct", work_conserving=True)
        env.reset(options={"instance": inst})
        taken, done, info = [], False, {}
        while not done:
            a = rollout_action(env, taken)
            taken.append(a)
            _, _, term, trunc, info = env.step(a)
            done = term or trunc
        base = simulate(inst, scheduler="contention-lookahead").custom["contention"]["avg_jct_s"]
        assert info["summary"]["avg_jct_s"] <= base
        better |= info["summary"]["avg_jct_s"] < base
    assert better


def test_mixed_recipe_refines_the_clone_with_rollout_labels_of_short_windows(tmp_path):
    """The ``mixed`` recipe's rollout stage runs after the lookahead's DAgger, labels windows of the job counts
    it names, and the refitted network imitates the rollout teacher on its own labels at least as well as the
    lookahead does (the teacher differs from the lookahead somewhere on these windows)."""
    from optsched.rl.imitation import rollout_dagger
    from optsched.rl.train import RECIPES

    spec = RECIPES["mixed"]["rollout"]
    assert spec["iterations"] >= 1 and min(spec["windows"][0]["jobs"]) <= 5
    env = ContentionEnv([_inst(jobs=8, seed=s, hours=0.25) for s in (21, 22)], reward="avg-jct",
                        observation="rich", work_conserving=True)
    model = make_model(env, seed=0, gamma=1.0)
    base = rollouts(env, 2)
    fit(model, base, epochs=5, lr=3e-3)
    from optsched.rl.export import numpy_policy

    clone = numpy_policy(model)
    log: list = []
    labels = rollout_dagger(model, base, [(env, 2, 20)], iterations=2, epochs=20, lr=3e-3, log=log)
    assert [x["stage"] for x in log] == ["rollout", "rollout"] and log[-1]["rollout_labels"][0] == len(labels["action"])
    student = numpy_policy(model)
    before, after = (np.mean([p.act(o, m) == a for o, m, a in zip(labels["obs"], labels["mask"], labels["action"])])
                     for p in (clone, student))
    assert after >= before and after > 0.8
    _, info = train(seed=1, imitation=1, imitation_episodes=1, jobs=6, n_sets=3, hours=0.25, recipe="mixed",
                    rollout={"iterations": 1, "windows": [{"jobs": [4, 5], "hours": [0.25], "episodes": 2,
                                                           "repeat": 2}]}, numpy_output=tmp_path / "m.npz")
    assert [x.get("stage") for x in info["imitation"]["log"]] == [None, "rollout"]
    assert "rollout DAgger" in info["algorithm"] and NumpyPolicy.load(tmp_path / "m.npz").n_inputs == RICH_SIZE
