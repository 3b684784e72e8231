"""Doctests under ``src/optsched`` that read the shared data skip, with the reason, when it is absent: the rule of
``tests/sim/shared_data.py`` (skip, never fail for missing data) for the doctests. A module names them in
``__doctest_requires__``: ``{object name or "*": data sub-folder}`` ("*": every doctest of the module)."""

from __future__ import annotations

import fnmatch

import pytest


def pytest_collection_modifyitems(config, items):
    from optsched.data import ENV, find_data_root

    root = find_data_root()
    for item in items:
        dtest = getattr(item, "dtest", None)  # a DoctestItem
        req = dtest.globs.get("__doctest_requires__") if dtest is not None else None
        if not req:
            continue
        module = dtest.globs.get("__name__", "")
        short = dtest.name[len(module) + 1:] if dtest.name.startswith(module + ".") else ""
        for pattern, folder in req.items():
            if (pattern == "*" or fnmatch.fnmatchcase(short, pattern)) and (root is None or
                                                                             not (root / folder).exists()):
                item.add_marker(pytest.mark.skip(reason=f"shared data {folder!r} not found (set {ENV}; see "
                                                        "optsched.data)"))
                break
