"""``benchmarks/total_jct_bounds.py``'s writers: ``--library`` changes a bundled record only where it improves
(through ``benchmarks/library.py``'s update path) and stops on a bound above a recorded schedule; ``--write``
replaces its own section of the results page and keeps the others. Run on copies in a temporary folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import benchmarks.library as lib
import benchmarks.total_jct_bounds as bench
import pytest

from optsched.algorithms.total_jct import greedy_total_jct
from optsched.generators.total_jct import random_total_jct_instance
from optsched.io import load_schedule
from optsched.problems.total_jct import schedule_from_choice

STEM = "total-jct-n20-seed0"


@pytest.fixture
def library_copy(tmp_path, monkeypatch):
    pkg = tmp_path / "optsched"
    shutil.copytree(lib.PKG / "instances", pkg / "instances")
    monkeypatch.setattr(lib, "PKG", pkg)
    monkeypatch.setattr(lib, "INDEX", pkg / "instances" / "index.json")
    monkeypatch.setattr(lib, "BEST", pkg / "instances" / "best")
    monkeypatch.setattr(lib, "OUT_MD", tmp_path / "library.md")
    return pkg


def _entry(pkg: Path) -> dict:
    index = json.loads((pkg / "instances" / "index.json").read_text(encoding="utf-8"))
    return next(e for e in index["instances"] if e["path"].endswith(f"/{STEM}.json"))


def test_library_records_change_only_where_they_improve(library_copy):
    before = _entry(library_copy)
    inst = random_total_jct_instance(20, 0)
    worse = schedule_from_choice(inst, greedy_total_jct(inst), "greedy")
    row = {"n": 20, "seed": 0, "schedule": worse, "bound": before["lower_bound"] - 5}
    assert bench.fold_into_library([row], "test") == []
    assert _entry(library_copy) == before and not (library_copy.parent / "library.md").exists()
    recorded = load_schedule(library_copy / before["best_schedule"])
    row = {"n": 20, "seed": 0, "schedule": recorded, "bound": before["lower_bound"] + 1}
    changes = bench.fold_into_library([row], "test")
    assert changes == [f"{STEM}: lower_bound {before['lower_bound']} -> {before['lower_bound'] + 1} (test)"]
    after = _entry(library_copy)
    assert after["lower_bound"] == before["lower_bound"] + 1 and after["upper_bound"] == before["upper_bound"]
    assert after["provenance"]["lower_bound"]["method"] == "test"
    assert (library_copy.parent / "library.md").exists()


def test_library_refuses_a_bound_above_the_recorded_schedule(library_copy):
    before = _entry(library_copy)
    recorded = load_schedule(library_copy / before["best_schedule"])
    row = {"n": 20, "seed": 0, "schedule": recorded, "bound": before["upper_bound"] + 1}
    with pytest.raises(SystemExit, match="contradicts"):
        bench.fold_into_library([row], "test")
    assert _entry(library_copy) == before


def test_write_section_replaces_its_own_and_keeps_the_others(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "PAGE", tmp_path / "page.md")
    bench.write_section("40 jobs, seeds 0-1", "## 40 jobs, seeds 0-1\n\nold forty\n")
    bench.write_section("20 jobs, seeds 0-1", "## 20 jobs, seeds 0-1\n\ntwenty\n")
    bench.write_section("40 jobs, seeds 0-1", "## 40 jobs, seeds 0-1\n\nnew forty\n")
    text = (tmp_path / "page.md").read_text(encoding="utf-8")
    assert text.startswith(bench.HEAD)
    assert "old forty" not in text and text.index("twenty") < text.index("new forty")
    assert text.count("## ") == 2
