"""The benchmark library (``src/optsched/instances/index.json``, built by ``benchmarks/library.py``): every
instance loads through ``bundled:``, every recorded schedule is re-scored by the problem's evaluator to its
recorded upper bound, and no recorded lower bound is above it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optsched import evaluate, load
from optsched.io import bundled_path, load_schedule

INDEX = json.loads(bundled_path("index.json").read_text())["instances"]


def _bundled_name(entry: dict) -> str:
    return "bundled:" + entry["path"].removeprefix("instances/")


def test_index_paths_are_unique_and_every_instance_file_is_listed():
    paths = [e["path"] for e in INDEX]
    assert len(paths) == len(set(paths))
    root = bundled_path("index.json").parent
    listed = {root.parent / p for p in paths}
    shipped = {p for p in root.rglob("*.json") if p.name != "index.json" and p.parent.name != "best"}
    assert shipped <= listed, sorted(str(p) for p in shipped - listed)


@pytest.mark.parametrize("entry", INDEX, ids=lambda e: Path(e["path"]).stem)
def test_record(entry):
    inst = load(_bundled_name(entry))
    assert getattr(inst, "n_jobs", 1) == entry["jobs"]
    assert entry["status"] in ("optimal", "open")
    if "best_schedule" not in entry:  # an older record: a proven optimum and its bound, no schedule
        assert entry["lower_bound"] <= entry["optimum"]
        return
    value = evaluate(inst, load_schedule(bundled_path(entry["best_schedule"].removeprefix("instances/")))).objective
    assert value == pytest.approx(entry["upper_bound"])
    assert entry["lower_bound"] <= entry["upper_bound"] + 1e-9
    assert (entry["status"] == "optimal") == (entry["lower_bound"] >= entry["upper_bound"] - 1e-9)
    if entry["status"] == "optimal":
        assert entry["optimum"] == entry["upper_bound"]
    assert {"upper_bound", "lower_bound"} <= set(entry["provenance"])


def test_library_covers_three_problems_and_three_sizes():
    rows = {(e["problem"], e.get("size")) for e in INDEX if "best_schedule" in e}
    for problem in ("rar-ddls", "total-jct", "placement"):
        assert {(problem, s) for s in ("small", "medium", "large")} <= rows
