"""Parameters declared once, as scikit-learn estimators declare theirs: policies, admission policies, launch
mechanisms and predictors take their parameters in ``__init__`` and keep each under its own name; everything else
derives from that.

* [`Params.get_params`][optsched.params.Params.get_params]: the parameters, read back from the attributes of the same
  names;
* [`Params.describe`][optsched.params.Params.describe]: ``{"name": ..., **parameters}`` as plain JSON values (an object
  by its ``name``, a
  function by its ``__name__``), what a run records in its configuration;
* [`Params.clone`][optsched.params.Params.clone]: a fresh, unused copy (nested parameter objects cloned too);
* [`Params.reset`][optsched.params.Params.reset]: forget every run, in place (the object keeps its identity, so a caller
  holding it can read
  its records after the next run): nested parameter objects are reset (but for inputs such as a fitted predictor,
  ``reset_with_owner = False``), then ``__init__`` runs again with the same parameters. So all of an object's
  state is created in ``__init__``, and no class writes ``reset`` by hand.

A parameter given as ``**options`` is kept as a dict attribute of that name (or handed on to the parent class's
``__init__``, whose parameters are then collected too).

```pycon
>>> class Step(Params):
...     name = "step"
...     def __init__(self, size: float = 1.0, label: str = "x"):
...         self.size, self.label = float(size), label
...         self.taken = []              # state: created here, cleared by reset()
>>> s = Step(2)
>>> s.taken.append(1); s.reset(); s.taken, s.describe()
([], {'name': 'step', 'size': 2.0, 'label': 'x'})
>>> c = s.clone(); c is s, c.get_params() == s.get_params()
(False, True)

```
"""

from __future__ import annotations

import inspect
import math
from typing import Any

__all__ = ["Params", "plain"]

_SIGNATURES: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _signature(cls: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(parameter names, ``**options`` names) of ``cls``'s constructor, up the class hierarchy while a
    constructor hands ``**options`` on."""
    hit = _SIGNATURES.get(cls)
    if hit is not None:
        return hit
    names: list[str] = []
    varkw: list[str] = []
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        params = list(inspect.signature(init).parameters.values())[1:]
        for p in params:
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in names:
                names.append(p.name)
        vk = [p.name for p in params if p.kind == p.VAR_KEYWORD]
        if not vk:
            break
        varkw.append(vk[0])
    out = (tuple(names), tuple(varkw))
    _SIGNATURES[cls] = out
    return out


def plain(value: Any) -> Any:
    """A parameter value as a plain JSON value: numbers, strings, booleans and None as they are, sequences and
    mappings element by element, a parameter object by its [`Params.describe`][optsched.params.Params.describe], any
    other object by its
    ``name`` (or a function's ``__name__``), else its class name.

    ```pycon
    >>> plain((1, 2.5)), plain(float("inf")), plain(len)
    ([1, 2.5], inf, 'len')

    ```
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if not math.isnan(value) else None
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, Params):
        return value.describe()
    name = getattr(value, "name", None)
    if isinstance(name, str):
        return name
    return getattr(value, "__name__", type(value).__name__)


class Params:
    """Base class of everything configured by constructor parameters (module docstring)."""

    name: str = ""
    # reset with the object that holds it as a parameter (a policy's parts); False for an input the holder only
    # reads, such as a fitted predictor, which must keep its fit across the holder's runs
    reset_with_owner: bool = True

    def get_params(self) -> dict[str, Any]:
        """The constructor's parameters, read from the attributes of the same names."""
        names, varkw = _signature(type(self))
        out: dict[str, Any] = {}
        for n in names:
            try:
                out[n] = getattr(self, n)
            except AttributeError:
                raise TypeError(f"{type(self).__name__} keeps no attribute {n!r} for its parameter {n!r} "
                                "(store every __init__ parameter under its own name)") from None
        for vk in varkw:
            extra = self.__dict__.get(vk)
            if isinstance(extra, dict):
                out.update(extra)
        return out

    def describe(self) -> dict[str, Any]:
        """``{"name": ..., **parameters}`` as plain values (what a run records in its configuration)."""
        return {"name": self.name, **{k: plain(v) for k, v in self.get_params().items()}}

    def clone(self) -> Any:
        """A fresh copy with the same parameters (nested parameter objects cloned), never run."""
        return type(self)(**{k: (v.clone() if isinstance(v, Params) else v) for k, v in self.get_params().items()})

    def reset(self) -> None:
        """Forget every run, in place: nested parameter objects are reset, then ``__init__`` runs again."""
        params = self.get_params()
        for v in params.values():
            if isinstance(v, Params) and v.reset_with_owner:
                v.reset()
        fresh = type(self)(**params)
        self.__dict__.clear()
        self.__dict__.update(fresh.__dict__)
