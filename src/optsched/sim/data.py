"""Where the shared data lives: ``$OPTSCHED_DATA`` if set, else the first ``shared/data`` folder found beside
the repository or one of its parent folders (``<repo>/../shared/data`` in the workplace layout), else
``/work/shared/data`` (where a clone made elsewhere, e.g. in a temporary folder, still finds it).

The repository never carries a copy of the traces; they are read in place at run time.

>>> import os
>>> os.environ["OPTSCHED_DATA"] = "/nonexistent"; 
>>> try:
...     data_path("philly", "philly.csv")
... except Exception as e:
...     print(type(e).__name__)
InstanceError
>>> del os.environ["OPTSCHED_DATA"]
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InstanceError

ENV = "OPTSCHED_DATA"


def repo_root() -> Path:
    """The repository root: three levels above this file's package (src/optsched/sim)."""
    return Path(__file__).resolve().parents[3]


FALLBACK = Path("/work/shared/data")


def data_root() -> Path:
    env = os.environ.get(ENV)
    if env:
        return Path(env)
    for parent in repo_root().parents:
        candidate = parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return FALLBACK


def data_path(*parts: str) -> Path:
    """Path of a shared data file; a clear :class:`InstanceError` if it is absent."""
    p = data_root().joinpath(*parts)
    if not p.exists():
        raise InstanceError(f"shared data file not found: {p} (set {ENV} to the folder holding "
                            "philly/, pollux-workloads/ and deepshare-contention/)")
    return p
