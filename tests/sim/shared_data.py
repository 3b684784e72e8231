"""The one rule for tests that read the shared data (Philly, Pollux, DeepShare tables): skip, with the reason, when
the data folder of :mod:`optsched.data` or the file is absent; never fail for that.

Use ``@needs_data("philly", "philly.csv")`` on a test, or ``skip_without_data(...)`` inside a fixture.
"""

from __future__ import annotations

import pytest

from optsched.data import ENV, find_data_root


def missing_reason(*parts: str) -> str | None:
    """Why the shared data file ``parts`` cannot be read, or None if it can."""
    root = find_data_root()
    if root is None:
        return f"shared data folder not found (set {ENV}; see optsched.data)"
    p = root.joinpath(*parts)
    return None if p.exists() else f"shared data file {p} absent (set {ENV}; see optsched.data)"


def needs_data(*parts: str) -> pytest.MarkDecorator:
    """A skip marker for a test that reads ``<data folder>/<parts>``."""
    reason = missing_reason(*parts)
    return pytest.mark.skipif(reason is not None, reason=reason or "")


def skip_without_data(*parts: str) -> None:
    """Skip the calling test (or fixture) if ``<data folder>/<parts>`` is absent."""
    reason = missing_reason(*parts)
    if reason is not None:
        pytest.skip(reason)


PHILLY = ("philly", "philly.csv")
POLLUX = ("pollux-workloads",)
DEEPSHARE = ("deepshare-contention",)
