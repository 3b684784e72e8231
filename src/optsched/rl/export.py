"""The policy network of a trained MaskablePPO agent as numpy
([`NumpyPolicy`][optsched.sim.contention.agent.NumpyPolicy]).

SB3's ``MlpPolicy`` on our observation is: flatten -> policy MLP (Linear + Tanh per hidden layer) -> the action
net (Linear, one logit per action); the value branch is only for training.
[`numpy_policy`][optsched.rl.export.numpy_policy] copies those
weights (torch's ``Linear`` stores ``(out, in)``; numpy multiplies ``x @ W`` with ``W = weight.T``) and refuses a
network of another shape (shared layers, other activations, a feature extractor with weights).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..errors import InstanceError
from ..io import atomic_open
from ..sim.contention.agent import NumpyPolicy


def numpy_policy(model: Any, meta: dict | None = None) -> NumpyPolicy:
    """The policy branch of an SB3/sb3-contrib model (``model.policy``) as a
    [`NumpyPolicy`][optsched.sim.contention.agent.NumpyPolicy]."""
    import torch

    pol = model.policy
    if any(True for _ in pol.features_extractor.parameters()):
        raise InstanceError("the feature extractor has weights: only flatten is exported", field="policy")
    layers = []
    mods = list(pol.mlp_extractor.policy_net)
    for i, m in enumerate(mods):
        if isinstance(m, torch.nn.Linear):
            if i + 1 >= len(mods) or not isinstance(mods[i + 1], torch.nn.Tanh):
                raise InstanceError("only Linear + Tanh hidden layers are exported", field="policy")
            layers.append(m)
        elif not isinstance(m, torch.nn.Tanh):
            raise InstanceError(f"cannot export layer {type(m).__name__}", field="policy")
    layers.append(pol.action_net)
    arrays = [(lin.weight.detach().cpu().numpy().T.copy(), lin.bias.detach().cpu().numpy().copy()) for lin in layers]
    return NumpyPolicy(arrays, meta)


def export_numpy(model: Any, path: str | os.PathLike, meta: dict | None = None) -> NumpyPolicy:
    """Write the policy network of ``model`` to ``path`` (``.npz``, atomically); returns it."""
    p = numpy_policy(model, meta)
    with atomic_open(path, "wb") as fh:
        np.savez(fh, **p.arrays())  # type: ignore[arg-type]
    return p


def load_numpy_weights(model: Any, policy: NumpyPolicy) -> None:
    """Copy the layers of ``policy`` into the policy branch of ``model`` (the inverse of
    [`numpy_policy`][optsched.rl.export.numpy_policy]), so that a shipped or exported agent can be trained further;
    refuses a network of another shape. The value branch is left as it is."""
    import torch

    pol = model.policy
    lins = [m for m in pol.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)] + [pol.action_net]
    shapes = [tuple(lin.weight.shape[::-1]) for lin in lins]
    if shapes != [w.shape for w, _ in policy.layers]:
        raise InstanceError(f"the policy's layers {[w.shape for w, _ in policy.layers]} do not fit the model's "
                            f"{shapes}", field="policy")
    with torch.no_grad():
        for lin, (w, b) in zip(lins, policy.layers):
            lin.weight.copy_(torch.as_tensor(w.T))
            lin.bias.copy_(torch.as_tensor(b))


def widen_inputs(policy: NumpyPolicy, n_inputs: int, meta: dict | None = None) -> NumpyPolicy:
    """``policy`` with zero weights for new inputs appended after its own (``n_inputs`` in all): the same logits
    whatever the new inputs hold, so a ``rich`` agent starts a ``plan`` network (whose observation is the rich
    one followed by more features) exactly where it is. ``meta``: the new network's (default: the old one's).

    ```pycon
    >>> p = NumpyPolicy([(np.eye(2, dtype=np.float32), np.zeros(2, np.float32))])
    >>> w = widen_inputs(p, 3)
    >>> w.n_inputs, w.logits(np.array([1.0, 2.0, 9.0])).tolist() == p.logits(np.array([1.0, 2.0])).tolist()
    (3, True)

    ```
    """
    (w0, b0), rest = policy.layers[0], policy.layers[1:]
    if n_inputs < w0.shape[0]:
        raise InstanceError(f"cannot narrow {w0.shape[0]} inputs to {n_inputs}", field="n_inputs")
    w = np.vstack([w0, np.zeros((n_inputs - w0.shape[0], w0.shape[1]), dtype=w0.dtype)])
    return NumpyPolicy([(w, b0), *rest], policy.meta if meta is None else meta)


def save_numpy(policy: NumpyPolicy, path: str | os.PathLike) -> None:
    """Write a [`NumpyPolicy`][optsched.sim.contention.agent.NumpyPolicy] to ``path`` (``.npz``, atomically)."""
    with atomic_open(path, "wb") as fh:
        np.savez(fh, **policy.arrays())  # type: ignore[arg-type]


__all__ = ["export_numpy", "load_numpy_weights", "numpy_policy", "save_numpy", "widen_inputs"]
