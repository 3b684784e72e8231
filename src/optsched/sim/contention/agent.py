"""The policy network of a trained agent as plain numpy: loads without torch or stable-baselines3.

A trained MaskablePPO policy ([`optsched.rl.train`][]) is exported ([`optsched.rl.export.export_numpy`][])
to an ``.npz`` file holding the policy branch of the network (flatten -> dense layers with tanh -> one logit
per action; the value branch is not needed to act) and a JSON ``meta`` record (observation shape, actions,
reward, W1, training seed and steps). [`NumpyPolicy`][optsched.sim.contention.agent.NumpyPolicy] computes the same
logits as the torch network
(``tests/test_rl_train.py`` compares them) and acts on them under an action mask: the argmax
(``deterministic=True``) or a draw from the masked softmax (the repository samples, ``predict`` with its default
``deterministic=False``).

The shipped policy ([`shipped_policy`][optsched.sim.contention.agent.shipped_policy]) is package data under
``optsched/rl/data/``.

```pycon
>>> import numpy as np
>>> p = NumpyPolicy([(np.eye(2, dtype=np.float32), np.zeros(2, np.float32)),
...                  (np.array([[1, 0, 0], [0, 1, 0]], np.float32), np.array([0, 0, 0.5], np.float32))])
>>> [round(float(x), 3) for x in p.logits(np.array([[2.0, -1.0]]))]
[0.964, -0.762, 0.5]
>>> p.act(np.array([[2.0, -1.0]]), np.array([False, True, True]))
2

```
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...errors import InstanceError

SHIPPED = "normal"  # the shipped policy: trained on Normal job sets (its meta says the reward, W1, steps)


class NumpyPolicy:
    """Dense layers ``[(W, b), ...]`` (tanh between them, none after the last) over the flattened observation."""

    def __init__(self, layers: Sequence[tuple[np.ndarray, np.ndarray]], meta: dict[str, Any] | None = None):
        self.layers = [(np.asarray(w, dtype=np.float32), np.asarray(b, dtype=np.float32)) for w, b in layers]
        if not self.layers:
            raise InstanceError("a policy needs at least one layer", field="layers")
        for i, ((w, b), nxt) in enumerate(zip(self.layers, self.layers[1:] + [None])):
            if w.ndim != 2 or b.shape != (w.shape[1],) or (nxt is not None and nxt[0].shape[0] != w.shape[1]):
                raise InstanceError(f"layer {i}: weights {w.shape} and bias {b.shape} do not chain", field="layers")
        self.meta = dict(meta or {})

    @property
    def name(self) -> str:
        """The policy's name in its meta record (``custom`` when it has none)."""
        return str(self.meta.get("name", "custom"))

    @property
    def n_inputs(self) -> int:
        return int(self.layers[0][0].shape[0])

    @property
    def n_actions(self) -> int:
        return int(self.layers[-1][0].shape[1])

    @property
    def n_parameters(self) -> int:
        return int(sum(w.size + b.size for w, b in self.layers))

    def logits(self, obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, dtype=np.float32).reshape(-1)
        if x.size != self.n_inputs:
            raise InstanceError(f"observation has {x.size} values, the policy takes {self.n_inputs}",
                                field="observation")
        for w, b in self.layers[:-1]:
            x = np.tanh(x @ w + b)
        w, b = self.layers[-1]
        return x @ w + b

    def act(self, obs: np.ndarray, mask: np.ndarray | None = None, deterministic: bool = True,
            rng: np.random.Generator | None = None) -> int:
        """The action: masked argmax, or a draw from the masked softmax with ``rng``."""
        z = self.logits(obs).astype(np.float64)
        if mask is not None:
            m = np.asarray(mask, dtype=bool)
            if not m.any():
                raise InstanceError("the action mask allows nothing", field="mask")
            z = np.where(m, z, -np.inf)
        if deterministic:
            return int(np.argmax(z))
        p = np.exp(z - z.max())
        p /= p.sum()
        return int((rng if rng is not None else np.random.default_rng()).choice(len(p), p=p))

    # -- files ---------------------------------------------------------------------------------------------
    def arrays(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for i, (w, b) in enumerate(self.layers):
            out[f"W{i}"], out[f"b{i}"] = w, b
        out["meta"] = np.array(json.dumps(self.meta, sort_keys=True))
        return out

    @classmethod
    def load(cls, path: str | Path) -> NumpyPolicy:
        """Read an exported ``.npz`` policy."""
        try:
            with np.load(Path(path), allow_pickle=False) as z:
                n = sum(1 for k in z.files if k.startswith("W"))
                if n == 0:
                    raise InstanceError("no weights W0, W1, ... in the file", field="policy")
                layers = [(z[f"W{i}"], z[f"b{i}"]) for i in range(n)]
                meta = json.loads(str(z["meta"])) if "meta" in z.files else {}
        except (OSError, ValueError, KeyError) as exc:
            raise InstanceError(f"cannot read policy {str(path)!r}: {exc}", field="policy") from None
        return cls(layers, meta)


def shipped_path(name: str = SHIPPED) -> Path:
    """Where the shipped policy ``name`` lies (package data of ``optsched.rl``)."""
    return Path(str(resources.files("optsched").joinpath("rl", "data", f"{name}.npz")))


def shipped_policy(name: str = SHIPPED) -> NumpyPolicy:
    """The shipped policy (trained on Normal job sets), as numpy."""
    path = shipped_path(name)
    if not path.exists():
        raise InstanceError(f"no shipped policy {name!r} (looked for {path})", field="policy")
    return NumpyPolicy.load(path)


def load_policy(spec: Any = None) -> NumpyPolicy:
    """A policy from None (the shipped one), a [`NumpyPolicy`][optsched.sim.contention.agent.NumpyPolicy], a shipped
    name or an ``.npz`` path."""
    if spec is None:
        return shipped_policy()
    if isinstance(spec, NumpyPolicy):
        return spec
    p = Path(str(spec))
    if p.suffix == ".npz" or p.exists():
        return NumpyPolicy.load(p)
    return shipped_policy(str(spec))


__all__ = ["SHIPPED", "NumpyPolicy", "load_policy", "shipped_path", "shipped_policy"]
