"""The benchmark library (``src/optsched/instances/index.json``, built by ``benchmarks/library.py``): every
instance loads through ``bundled:``, every recorded schedule is re-scored by the problem's evaluator to its
recorded value (the upper bound of a minimisation, the lower bound of the deadline maximisation), and no
recorded bound is on the wrong side of it; the one scoring command reports gaps against those records."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from optsched import evaluate, load
from optsched.exact.contention import evaluate_plan
from optsched.io import bundled_path, load_schedule

INDEX = json.loads(bundled_path("index.json").read_text())["instances"]
PROBLEMS = ("rar-ddls", "total-jct", "placement", "deadline", "contention")


def _bundled_name(entry: dict) -> str:
    return "bundled:" + entry["path"].removeprefix("instances/")


def _rescore(entry: dict, inst) -> float:
    path = bundled_path(entry["best_schedule"].removeprefix("instances/"))
    if entry["problem"] == "contention":  # a plan: one configuration per round
        return evaluate_plan(inst, json.loads(path.read_text())["plan"], strict=False).total_jct_s
    return evaluate(inst, load_schedule(path)).objective


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
    maximise = entry["problem"] == "deadline"
    assert entry.get("sense", "min") == ("max" if maximise else "min")
    # the schedule is the upper side of a minimisation, the lower side of a maximisation
    side = "lower_bound" if maximise else "upper_bound"
    assert _rescore(entry, inst) == pytest.approx(entry[side])
    assert entry["lower_bound"] <= entry["upper_bound"] + 1e-9
    assert (entry["status"] == "optimal") == (entry["lower_bound"] >= entry["upper_bound"] - 1e-9)
    if entry["status"] == "optimal":
        assert entry["optimum"] == entry[side]
    assert {"upper_bound", "lower_bound"} <= set(entry["provenance"])


def test_library_covers_five_problems_and_three_sizes():
    rows = {(e["problem"], e.get("size")) for e in INDEX if "best_schedule" in e}
    for problem in PROBLEMS:
        assert {(problem, s) for s in ("small", "medium", "large")} <= rows
    # paper 003's default 24-hour trace (optsched generate deadline --seed K) is a family of its own
    assert {e["family"] for e in INDEX if e["problem"] == "deadline"} >= {"paper003"}


@pytest.mark.parametrize("entry", [e for e in INDEX if e["problem"] == "deadline" and e["size"] == "small"],
                         ids=lambda e: Path(e["path"]).stem)
def test_deadline_bound_is_above_the_grid_optimum(entry):
    # a second check of the recorded upper bound (the energy relaxation): the grid optimum by brute force, a
    # schedule the evaluator takes, never exceeds it
    from optsched.exact.deadline import MAX_BRUTE_JOBS, brute_force_deadline

    inst = load(_bundled_name(entry))
    if inst.n_jobs > MAX_BRUTE_JOBS:
        pytest.skip("too many jobs for the brute force")
    assert brute_force_deadline(inst).objective <= entry["upper_bound"] + 1e-9


def test_score_reports_gaps_against_the_records():
    import benchmarks.library as lib

    # every simulated deadline policy (preemptive, elastic) stays under the recorded upper bound
    for policy in ("elasticflow", "drs"):
        rows = lib.score(policy, "deadline", family="default", size="small", out=None)
        assert rows and all(r["gap_bound"] is None or r["gap_bound"] >= -1e-9 for r in rows)
    # a contention policy never beats a proven optimum; the gaps are value / reference - 1
    rows = lib.score("contention-las", "contention", size="small", out=None)
    assert rows
    for r in rows:
        assert r["value"] >= r["bound"] - 1e-6
        assert r["gap_best"] == pytest.approx(r["value"] / r["best_known"] - 1)
    out: list[str] = []
    lib.score("sjf-bco", "rar-ddls", family="cli", out=out.append)
    assert "mean gap to the best known" in out[-1]


def test_gap_sides():
    import benchmarks.library as lib

    assert lib.gap_to("deadline", 8, 10) == pytest.approx(0.25)       # 10 met is best: 8 is 25 % short
    assert lib.gap_to("total-jct", 12, 10) == pytest.approx(0.2)
    assert lib.gap_to("deadline", 0, 10) is None
    assert lib.sides("deadline") == ("lower_bound", "upper_bound")
    assert math.isclose(lib.gap({"lower_bound": 8, "upper_bound": 10}), 0.25)
