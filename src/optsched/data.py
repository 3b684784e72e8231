"""Where the shared data lives (the Philly trace, the Pollux workloads, DeepShare's contention tables).

The repository never carries a copy of the traces; they are read in place at run time from a *data folder*
holding ``philly/``, ``pollux-workloads/`` and ``deepshare-contention/``. The folder is, in this order:

1. the ``folder`` argument, when a caller gives one;
2. the environment variable ``OPTSCHED_DATA``;
3. a ``shared/data`` folder beside the checkout: ``P/shared/data`` for the folder ``P`` holding the repository,
   or any folder above it (``<repo>/../shared/data`` in the usual layout);
4. a ``shared/data`` folder in the current directory or any folder above it.

Otherwise :func:`data_root` raises one :class:`~optsched.errors.InstanceError` saying how to set
``OPTSCHED_DATA``; no machine-specific path is built in.

>>> import os, tempfile
>>> d = tempfile.mkdtemp(); os.mkdir(os.path.join(d, "philly"))
>>> data_root(d) == Path(d), data_path("philly", root=d).name
(True, 'philly')
>>> try:
...     data_path("philly", "philly.csv", root=d)
... except InstanceError as e:
...     print(e.field)
data
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import InstanceError

ENV = "OPTSCHED_DATA"
HINT = (f"set {ENV} to the folder holding philly/, pollux-workloads/ and deepshare-contention/ "
        f"(e.g. export {ENV}=/path/to/shared/data), or pass the folder explicitly")

__all__ = ["ENV", "checkout_root", "data_path", "data_root", "find_data_root"]


def checkout_root() -> Path | None:
    """The repository this module was loaded from (``src/optsched/data.py`` three levels down), or None when
    optsched is installed elsewhere (no ``pyproject.toml`` there)."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() else None


def _candidates() -> list[Path]:
    out: list[Path] = []
    root = checkout_root()
    if root is not None:
        out += [p / "shared" / "data" for p in root.parents]
    cwd = Path.cwd().resolve()
    out += [p / "shared" / "data" for p in (cwd, *cwd.parents)]
    return out


def find_data_root(folder: str | os.PathLike | None = None) -> Path | None:
    """The data folder by the rules of the module docstring, or None if there is none (no error)."""
    if folder is not None:
        p = Path(folder)
        return p if p.is_dir() else None
    env = os.environ.get(ENV)
    if env:
        p = Path(env)
        return p if p.is_dir() else None
    for c in _candidates():
        if c.is_dir():
            return c
    return None


def data_root(folder: str | os.PathLike | None = None) -> Path:
    """The data folder (see the module docstring); a clear :class:`InstanceError` if there is none."""
    p = find_data_root(folder)
    if p is not None:
        return p
    if folder is not None:
        raise InstanceError(f"data folder {str(folder)!r} is not a directory", field="data")
    env = os.environ.get(ENV)
    if env:
        raise InstanceError(f"{ENV}={env!r} is not a directory: {HINT}", field="data")
    raise InstanceError(f"no shared data folder found (no {ENV}, no shared/data beside the checkout or the "
                        f"current directory): {HINT}", field="data")


def data_path(*parts: str, root: str | os.PathLike | None = None) -> Path:
    """Path of a file or folder inside the data folder; a clear :class:`InstanceError` if it is absent."""
    base = data_root(root)
    p = base.joinpath(*parts)
    if not p.exists():
        raise InstanceError(f"shared data file not found: {p} ({HINT})", field="data")
    return p
