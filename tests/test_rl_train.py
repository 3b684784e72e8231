"""Training paper 004's agent end to end for a few hundred steps, saving and loading, the numpy export, the CLI,
and deterministic evaluation of a fixed policy (issue 13). Needs the [rl] extra, which ``make test`` installs."""

from __future__ import annotations

import numpy as np
import pytest
from tests.sim.shared_data import DEEPSHARE, needs_data

from cli import exit_code
from optsched.cli import main
from optsched.generators.contention import random_contention_instance
from optsched.sim import simulate
from optsched.sim.contention.agent import NumpyPolicy, shipped_path, shipped_policy

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")
from optsched.rl.export import numpy_policy  # noqa: E402
from optsched.rl.train import eval_seeds, load_model, train, train_seeds  # noqa: E402

pytestmark = needs_data(*DEEPSHARE)

SMALL = {"recipe": "paper", "timesteps": 256, "n_sets": 2, "jobs": 8, "hours": 0.25, "n_steps": 128, "batch_size": 64,
         "n_epochs": 2}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("rl") / "policy.zip"
    model, info = train(seed=1, output=out, **SMALL)
    return model, info, out


def test_a_few_hundred_steps_train_save_and_load(trained):
    model, info, out = trained
    assert info["timesteps"] >= 256 and out.exists() and out.with_suffix(".npz").exists()
    again = load_model(out)
    obs = np.random.default_rng(0).integers(0, 19, (6, 4, 16)).astype(np.float32)
    with torch.no_grad():
        a = model.policy.get_distribution(torch.as_tensor(obs)).distribution.logits.numpy()
        b = again.policy.get_distribution(torch.as_tensor(obs)).distribution.logits.numpy()
    assert np.allclose(a, b)


def test_numpy_export_computes_the_torch_policys_logits(trained):
    model, info, out = trained
    p = NumpyPolicy.load(out.with_suffix(".npz"))
    assert p.meta["name"] == info["name"] and p.n_parameters == numpy_policy(model).n_parameters
    obs = np.random.default_rng(1).integers(0, 19, (20, 4, 16)).astype(np.float32)
    with torch.no_grad():
        ref = model.policy.get_distribution(torch.as_tensor(obs)).distribution.logits.numpy()
    mine = np.stack([p.logits(o) for o in obs])
    mine = mine - np.log(np.exp(mine - mine.max(1, keepdims=True)).sum(1, keepdims=True)) - mine.max(1, keepdims=True)
    assert np.allclose(mine, ref, atol=1e-5)
    masks = np.ones((20, 8), dtype=bool)
    masks[:, 2] = False
    acts, _ = model.predict(obs, deterministic=True, action_masks=masks)
    assert [p.act(o, m) for o, m in zip(obs, masks)] == list(acts)


def test_a_fixed_policy_is_deterministic(trained):
    _, _, out = trained
    inst = random_contention_instance(jobs=16, seed=eval_seeds(1)[0], hours=0.25)
    pol = {"name": "rl-hybrid", "policy": str(out.with_suffix(".npz"))}
    a, b = simulate(inst, scheduler=pol), simulate(inst, scheduler=pol)
    assert a.custom["contention_rounds"]["plan"] == b.custom["contention_rounds"]["plan"]
    assert a.custom["contention"]["avg_jct_s"] == b.custom["contention"]["avg_jct_s"]
    s1 = simulate(inst, scheduler={**pol, "deterministic": False}, seed=4)
    s2 = simulate(inst, scheduler={**pol, "deterministic": False}, seed=4)
    assert s1.custom["contention_rounds"]["plan"] == s2.custom["contention_rounds"]["plan"]


def test_training_and_evaluation_seeds_are_disjoint():
    assert not set(train_seeds(999, 1000)) & set(eval_seeds(1000))


def test_cli_train_export_evaluate(tmp_path, capsys):
    out = tmp_path / "p.zip"
    assert main(["rl", "train", "--recipe", "paper", "--timesteps", "128", "--n-steps", "64", "--batch-size", "32",
                 "--sets", "1", "--jobs", "6", "--hours", "0.25", "--reward", "jct", "--no-progress",
                 "-o", str(out)]) == 0
    assert out.exists() and out.with_suffix(".npz").exists()
    assert main(["rl", "export", str(out), "-o", str(tmp_path / "x.npz")]) == 0
    capsys.readouterr()
    csv = tmp_path / "r.csv"
    assert main(["rl", "evaluate", "--policy", str(out), "--sets", "1", "--jobs", "6", "--hours", "0.25",
                 "--baselines", "contention-las", "-o", str(csv)]) == 0
    text = capsys.readouterr().out
    assert "rl-base vs LAS" in text and csv.read_text().count("\n") == 4
    assert exit_code(["rl", "evaluate", "--policy", str(tmp_path / "none.zip")]) == 2


def test_cli_train_with_imitation_and_evaluate_both_action_choices(tmp_path, capsys):
    out = tmp_path / "w.zip"
    assert main(["rl", "train", "--imitation", "1", "--imitation-episodes", "1", "--timesteps", "64",
                 "--n-steps", "64", "--batch-size", "32", "--sets", "2", "--jobs", "6", "--hours", "0.25",
                 "--no-progress", "-o", str(out)]) == 0
    p = NumpyPolicy.load(out.with_suffix(".npz"))
    assert p.meta["recipe"] == "imitation" and p.meta["work_conserving"] and p.meta["observation"] == "rich"
    capsys.readouterr()
    csv = tmp_path / "r.csv"
    assert main(["rl", "evaluate", "--policy", str(out.with_suffix(".npz")), "--sets", "1", "--jobs", "6",
                 "--hours", "0.25", "--baselines", "contention-random,contention-lookahead", "-o", str(csv)]) == 0
    import pandas as pd

    got = set(pd.read_csv(csv)["policy"])
    assert got == {"rl-agent", "rl-agent sampled", "contention-random", "contention-lookahead"}
    assert exit_code(["rl", "train", "--imitation", "0", "--timesteps", "0", "-o", str(tmp_path / "z.zip")]) == 2


def test_the_shipped_policy_is_small():
    assert shipped_path().stat().st_size < 1_000_000
    p = shipped_policy()
    assert p.n_actions == 8 and p.n_inputs == 64 and p.meta.get("timesteps", 0) > 0
