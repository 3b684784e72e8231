"""Imitation warm start for the contention agent (issue 24): behaviour cloning with DAgger from the lookahead.

The teacher is the one-step lookahead in the agent's own action space
([`expert_action`][optsched.rl.env.ContentionEnv.expert_action], the policy ``contention-lookahead``), or its
small-demand-first variant (``teacher="lookahead-small"``, the policy ``contention-lookahead-small``). DAgger (Ross,
Gordon, Bagnell 2011): iteration 0 rolls the teacher out and records (observation, mask, teacher's action);
every later iteration rolls out the *student* (the network trained so far; at each step the teacher's action
with probability ``beta``, which decays geometrically) and records the teacher's action in the states the
student reaches; the network is refitted on everything gathered so far. The loss is the masked cross-entropy
of the teacher's action, plus the value branch regressed on the observed return-to-go of the reward (so a
MaskablePPO fine-tuning starts from a critic that knows the scale of the returns rather than from zero).

Works on the SB3 model's own policy (``model.policy``), so the result is fine-tuned by ``model.learn`` and
exported by [`optsched.rl.export.export_numpy`][] like any trained agent.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..problems.contention import ContentionInstance
from ..sim.contention.agent import NumpyPolicy
from .env import ContentionEnv
from .export import numpy_policy

# teacher name -> small_first of ContentionEnv.expert_action (None: the rollout teacher)
TEACHERS: dict[str, bool | None] = {"lookahead": False, "lookahead-small": True, "rollout": None}


def rollout_action(env: ContentionEnv, prefix: list[int]) -> int:
    """The rollout teacher's action in ``env``'s current state, reached from its episode's start by the actions
    ``prefix``: each valid action is tried, followed by the lookahead to the end of the episode, on a replay of the
    same job set (the environment is deterministic), and the action of the lowest average JCT is taken (ties: the
    lookahead's own action, then the lowest index). One step of policy improvement over the lookahead (Bertsekas'
    rollout): never worse than the lookahead from the same state, at the price of one episode per valid action."""
    valid = [int(a) for a in np.flatnonzero(env.action_masks())]
    own = env.expert_action()
    if len(valid) <= 1:
        return valid[0] if valid else own
    scores = {}
    for a in valid:
        e = ContentionEnv([env.instance], reward="avg-jct", threshold=env.threshold_override,
                          idle_guard=env.idle_guard, work_conserving=env.work_conserving)
        e.reset(options={"instance": env.instance})
        total, done = 0.0, False
        for b in [*prefix, a]:
            _, r, term, trunc, _ = e.step(b)
            total, done = total + r, term or trunc
        while not done:
            _, r, term, trunc, _ = e.step(e.expert_action())
            total, done = total + r, term or trunc
        scores[a] = total
    best = max(scores.values())
    return own if scores.get(own, -np.inf) >= best - 1e-12 else min(a for a in valid if scores[a] >= best - 1e-12)


def _returns_to_go(rewards: list[float], gamma: float) -> list[float]:
    """Each step's discounted sum of the rewards from it to the episode's end."""
    g, ret = 0.0, []
    for r in reversed(rewards):
        g = r + gamma * g
        ret.append(g)
    return ret[::-1]


def rollouts(env: ContentionEnv, episodes: int, student: Any = None, beta: float = 1.0, gamma: float = 1.0,
             rng: np.random.Generator | None = None, teacher: str = "lookahead") -> dict[str, np.ndarray]:
    """``episodes`` episodes of ``env``: observations, masks, the teacher's actions and returns-to-go.

    ``student``: a [`NumpyPolicy`][optsched.sim.contention.agent.NumpyPolicy] that acts with probability ``1 - beta``
    (None: the teacher always acts); ``teacher``: a key of ``TEACHERS``."""
    small_first = TEACHERS[teacher]
    rng = rng if rng is not None else np.random.default_rng(0)
    obs_l, mask_l, act_l, ret_l = [], [], [], []
    for _ in range(episodes):
        obs, _ = env.reset()
        done, rewards = False, []
        taken: list[int] = []
        while not done:
            mask = env.action_masks()
            label = rollout_action(env, taken) if small_first is None else env.expert_action(small_first)
            obs_l.append(obs)
            mask_l.append(mask)
            act_l.append(label)
            a = label if student is None or rng.random() < beta else student.act(obs, mask, True)
            obs, r, term, trunc, _ = env.step(a)
            taken.append(int(a))
            rewards.append(r)
            done = term or trunc
        ret_l += _returns_to_go(rewards, gamma)
    return {"obs": np.asarray(obs_l, dtype=np.float32), "mask": np.asarray(mask_l, dtype=bool),
            "action": np.asarray(act_l, dtype=np.int64), "return": np.asarray(ret_l, dtype=np.float32)}


def fit(model: Any, data: dict[str, np.ndarray], epochs: int = 10, batch_size: int = 256, lr: float = 1e-3,
        vf_coef: float = 0.5, seed: int = 0) -> dict[str, float]:
    """Fit ``model.policy`` to the teacher's actions (masked cross-entropy) and the value branch to the returns;
    returns the last epoch's mean losses and the training accuracy (argmax = teacher)."""
    import torch

    pol = model.policy
    opt = torch.optim.Adam(pol.parameters(), lr=lr)
    obs = torch.as_tensor(data["obs"])
    masks, acts = torch.as_tensor(data["mask"]), torch.as_tensor(data["action"])
    rets = torch.as_tensor(data["return"])
    n = len(acts)
    gen = torch.Generator().manual_seed(seed)
    pol.set_training_mode(True)
    ce_m = vf_m = 0.0
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen)
        ce_s = vf_s = 0.0
        for i in range(0, n, batch_size):
            idx = perm[i:i + batch_size]
            values, logp, _ = pol.evaluate_actions(obs[idx], acts[idx], action_masks=masks[idx])
            ce = -logp.mean()
            vf = torch.nn.functional.mse_loss(values.flatten(), rets[idx])
            loss = ce + vf_coef * vf
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(pol.parameters(), 0.5)
            opt.step()
            ce_s += float(ce.detach()) * len(idx)
            vf_s += float(vf.detach()) * len(idx)
        ce_m, vf_m = ce_s / n, vf_s / n
    pol.set_training_mode(False)
    student = numpy_policy(model)
    agree = np.mean([student.act(o, m) == a for o, m, a in zip(data["obs"], data["mask"], data["action"])])
    return {"cross_entropy": ce_m, "value_mse": vf_m, "accuracy": float(agree)}


def dagger(model: Any, env: ContentionEnv, iterations: int = 4, episodes: int = 8, beta_decay: float = 0.5,
           gamma: float = 1.0, epochs: int = 10, lr: float = 1e-3, seed: int = 0,
           log: list | None = None, teacher: str = "lookahead") -> dict[str, np.ndarray]:
    """DAgger from the lookahead (module docstring): ``iterations`` rounds of ``episodes`` episodes each
    (iteration 0: the teacher alone; iteration i: the student with the teacher's action at probability
    ``beta_decay ** i``), refitting on the aggregate after each; returns the aggregate data set."""
    rng = np.random.default_rng(seed)
    data: dict[str, np.ndarray] | None = None
    for it in range(iterations):
        student = None if it == 0 else numpy_policy(model)
        new = rollouts(env, episodes, student, beta_decay ** it, gamma, rng, teacher)
        data = new if data is None else {k: np.concatenate([data[k], new[k]]) for k in data}
        stats = fit(model, data, epochs=epochs, lr=lr, seed=seed + it)
        if log is not None:
            log.append({"iteration": it, "samples": int(len(data["action"])), **stats})
    assert data is not None
    return data


def rollout_dagger(model: Any, base: dict[str, np.ndarray], windows: list[tuple[ContentionEnv, int, int]],
                   iterations: int = 3, beta_decay: float = 0.5, gamma: float = 1.0, epochs: int = 10,
                   lr: float = 1e-3, seed: int = 0, log: list | None = None) -> dict[str, np.ndarray]:
    """DAgger with the rollout teacher ([`rollout_action`][optsched.rl.imitation.rollout_action]) after a
    lookahead DAgger stage whose aggregate is ``base``.

    ``windows``: (environment, episodes per iteration, repeat) triples, for example short windows of 4-8 jobs
    beside 32-job ones, so that the labels cover small and large sets alike. Iteration ``i`` rolls out the
    student with the teacher's action at probability ``beta_decay ** (i + 1)`` in each environment, labels every
    visited state with the rollout teacher's action, and refits the network on ``base`` plus each environment's
    labels repeated ``repeat`` times (rollout labels are few and dear: one episode per valid action and state,
    the lookahead's many and cheap). Returns the rollout labels gathered (all environments together).

    ```pycon
    >>> from optsched.generators.contention import random_contention_instance
    >>> from optsched.rl.train import make_model
    >>> env = ContentionEnv([random_contention_instance(jobs=4, seed=5, hours=0.25)], reward="avg-jct",
    ...                     observation="rich", work_conserving=True)
    >>> model = make_model(env, seed=0, gamma=1.0)
    >>> base = rollouts(env, 1)
    >>> labels = rollout_dagger(model, base, [(env, 1, 2)], iterations=1, epochs=1)
    >>> len(labels["action"]) > 0
    True

    ```
    """
    rng = np.random.default_rng(seed)
    labels: list[dict[str, np.ndarray] | None] = [None] * len(windows)
    for it in range(iterations):
        student = numpy_policy(model)
        for k, (env, episodes, _) in enumerate(windows):
            new = rollouts(env, episodes, student, beta_decay ** (it + 1), gamma, rng, teacher="rollout")
            old = labels[k]
            labels[k] = new if old is None else {key: np.concatenate([old[key], new[key]]) for key in old}
        parts = [base] + [lab for lab, (_, _, rep) in zip(labels, windows) if lab is not None for _ in range(rep)]
        data = {key: np.concatenate([p[key] for p in parts]) for key in base}
        stats = fit(model, data, epochs=epochs, lr=lr, seed=seed + 100 + it)
        if log is not None:
            log.append({"iteration": it, "stage": "rollout", "samples": int(len(data["action"])),
                        "rollout_labels": [0 if lab is None else int(len(lab["action"])) for lab in labels],
                        **stats})
    got = [lab for lab in labels if lab is not None]
    return {key: np.concatenate([g[key] for g in got]) for key in base} if got else {k: v[:0] for k, v in base.items()}


def planner_labels(instance: ContentionInstance, student: NumpyPolicy, base: NumpyPolicy,
                   horizon: int | None = 6, top: int | None = 2, gamma: float = 1.0,
                   extra: Sequence[str] = ()) -> dict[str, np.ndarray]:
    """One episode of ``instance`` in which the ``student`` acts (argmax) and the planner over ``base``
    ([`optsched.rl.planner.plan_action`][]: ``top`` best actions of ``base`` tried, ``horizon`` rounds of ``base``
    then the fluid estimate; None: every valid action / to the end) labels every state with a choice (more than
    one valid action); observations (the student's kind, ``rich`` or ``plan``), masks, labels and the
    returns-to-go of the student's episode; ``own``: the base's own action and ``gain``: how much the planner's
    best score beats that action's, in job-hours over the set (0 where the label is ``own``), so that
    [`margin_labels`][optsched.rl.imitation.margin_labels] can keep only the labels the planner is sure of;
    ``extra``: other observation kinds of the same states, recorded as ``obs_<kind>`` (to compare what each lets
    a network learn from the same labels)."""
    from .planner import agent_kind, base_policy, best_scored, plan_scores, ranked

    act = base_policy(base)
    prune = None if top is None else (lambda e: ranked(e, base)[:top])
    kind = agent_kind(student)
    env = ContentionEnv([instance], reward="avg-jct", observation=kind, work_conserving=True)
    obs, _ = env.reset(options={"instance": instance})
    obs_l, mask_l, act_l, keep, own_l, gain_l = [], [], [], [], [], []
    more: dict[str, list[np.ndarray]] = {k: [] for k in extra}
    rewards: list[float] = []
    done = False
    while not done:
        mask = env.action_masks()
        if mask.sum() > 1:
            own, scores = plan_scores(env, act, horizon, prune)
            label = best_scored(own, scores)
            obs_l.append(obs)
            mask_l.append(mask)
            act_l.append(label)
            own_l.append(own)
            gain_l.append((scores[label] - scores[own]) * len(instance.jobs) if scores else 0.0)
            keep.append(len(rewards))
            for k in extra:
                more[k].append(env.observe(k).reshape(-1))
        obs, r, term, trunc, _ = env.step(student.act(obs, mask, True))
        rewards.append(r)
        done = term or trunc
    ret = _returns_to_go(rewards, gamma)
    out = {"obs": np.asarray(obs_l, dtype=np.float32).reshape(len(obs_l), -1),
           "mask": np.asarray(mask_l, dtype=bool).reshape(len(mask_l), -1),
           "action": np.asarray(act_l, dtype=np.int64), "return": np.asarray([ret[i] for i in keep], dtype=np.float32),
           "own": np.asarray(own_l, dtype=np.int64), "gain": np.asarray(gain_l, dtype=np.float32)}
    for k, v in more.items():
        out[f"obs_{k}"] = np.asarray(v, dtype=np.float32).reshape(len(v), -1)
    return out


def margin_labels(data: dict[str, np.ndarray], min_gain: float) -> dict[str, np.ndarray]:
    """``data`` (of [`planner_labels`][optsched.rl.imitation.planner_labels]) with each label that beats the base's
    own action by less than ``min_gain`` job-hours replaced by that own action: the planner overrules the network
    only where it is sure. Its labels flip with the rollout horizon on about a third of the states, but rarely
    where the gain is large (``docs/algorithms/rl-contention.md``).

    ```pycon
    >>> d = {"action": np.array([3, 1, 5]), "own": np.array([2, 1, 4]), "gain": np.array([0.1, 0.0, 2.0])}
    >>> margin_labels(d, 0.5)["action"].tolist()
    [2, 1, 5]

    ```
    """
    out = dict(data)
    out["action"] = np.where(data["gain"] >= min_gain, data["action"], data["own"])
    return out


def planner_dagger(model: Any, windows: list[tuple[Callable[[int], ContentionInstance], int, int | None, int | None,
                                                   int]],
                   iterations: int = 2, rebase: bool = True, epochs: int = 10, lr: float = 1e-3, seed: int = 0,
                   log: list | None = None, after: Callable[[int, Any], None] | None = None,
                   observation: str = "rich", base: NumpyPolicy | None = None,
                   min_gain: float = 0.0) -> dict[str, np.ndarray]:
    """Expert iteration: DAgger in which the network acts and the planner over a network labels
    ([`planner_labels`][optsched.rl.imitation.planner_labels]), the network refitted on the aggregate after each
    iteration, starting from ``model``'s current weights (for example a trained agent loaded with
    [`optsched.rl.export.load_numpy_weights`][]).

    ``windows``: (job set of episode index ``i``, episodes per iteration, horizon, top, repeat) for each kind of
    window, for example 64-job windows with 6-round rollouts over the best 2 actions beside 4-8-job windows with
    full rollouts over every action; iteration ``it`` uses episodes ``it x episodes ... (it + 1) x episodes - 1``
    of each, and the labels of a window kind are repeated ``repeat`` times in the refit. ``rebase``: the planner
    of iteration ``it`` is over the network of iteration ``it`` (expert iteration: each refit improves the
    teacher too); False: always over the starting network. ``after(it, model)``: called after each refit (for
    example to export each iteration's network). ``observation``: what ``model`` reads (``rich`` or ``plan``).
    ``base``: a fixed network for the planner of the first iteration (and of every iteration without ``rebase``),
    for example a trained ``rich`` agent teaching a new ``plan`` network; default the starting network.
    ``min_gain`` (job-hours): the refit sees [`margin_labels`][optsched.rl.imitation.margin_labels] (the planner's
    label only where it beats the base's own action by at least that much). Returns the aggregate.

    ```pycon
    >>> from optsched.generators.contention import random_contention_instance
    >>> from optsched.rl.train import make_model
    >>> env = ContentionEnv([random_contention_instance(jobs=4, seed=5, hours=0.25)], reward="avg-jct",
    ...                     observation="rich", work_conserving=True)
    >>> model = make_model(env, seed=0, gamma=1.0)
    >>> make = lambda i: random_contention_instance(jobs=4 + i % 2, seed=5 + i, hours=0.25)
    >>> data = planner_dagger(model, [(make, 1, None, None, 2)], iterations=1, epochs=1)
    >>> len(data["action"]) == len(data["mask"]) and bool(data["mask"][np.arange(len(data["action"])),
    ...                                                                   data["action"]].all())
    True

    ```
    """
    meta = {"observation": observation, "work_conserving": True}  # what planner_labels' environment gives
    start = numpy_policy(model, meta) if base is None else base
    labels: list[dict[str, np.ndarray] | None] = [None] * len(windows)
    data: dict[str, np.ndarray] = {}
    for it in range(iterations):
        student = numpy_policy(model, meta)
        teacher = student if rebase and (base is None or it > 0) else start
        for k, (make, episodes, horizon, top, _) in enumerate(windows):
            for i in range(it * episodes, (it + 1) * episodes):
                new = planner_labels(make(i), student, teacher, horizon, top)
                old = labels[k]
                labels[k] = new if old is None else {key: np.concatenate([old[key], new[key]]) for key in old}
        parts = [lab for lab, w in zip(labels, windows) if lab is not None and len(lab["action"])
                 for _ in range(w[4])]
        if not parts:
            continue
        data = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
        if min_gain > 0:
            data = margin_labels(data, min_gain)
        agree = float(np.mean([student.act(o, m) == a for o, m, a in zip(data["obs"], data["mask"],
                                                                          data["action"])]))
        stats = fit(model, data, epochs=epochs, lr=lr, seed=seed + 200 + it)
        if log is not None:
            log.append({"iteration": it, "stage": "planner", "samples": int(len(data["action"])),
                        "planner_labels": [0 if lab is None else int(len(lab["action"])) for lab in labels],
                        "agree_before": agree, **stats})
        if after is not None:
            after(it, model)
    return data


__all__ = ["TEACHERS", "dagger", "fit", "margin_labels", "planner_dagger", "planner_labels", "rollout_action",
           "rollout_dagger", "rollouts"]
