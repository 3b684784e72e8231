"""A ``.csv`` output name gets the CSV flavour that ``optsched simulate`` reads back, or a clear refusal.

``optsched.save`` (and so ``optsched generate -o X.csv``) once wrote JSON under any name, so a generated deadline
workload named ``.csv`` could not be simulated; these tests pin the round trip and the refusals."""
from __future__ import annotations

import pytest
from tests.cli import exit_code

import optsched
from optsched.errors import InstanceError
from optsched.experiments import run_one
from optsched.generators.deadline import deadline_workload, elasticflow_shaped_workload


def test_a_deadline_workload_saved_as_csv_simulates_like_its_json(tmp_path):
    wl = deadline_workload(lam=2, window_h=6, seed=1)
    optsched.save(wl, tmp_path / "d.csv")
    optsched.save(wl, tmp_path / "d.json")
    assert (tmp_path / "d.csv").read_text().startswith("# format: optsched/deadline-workload@1")
    a = run_one(str(tmp_path / "d.csv"), scheduler="edf").summary
    b = run_one(str(tmp_path / "d.json"), scheduler="edf").summary
    assert a["jobs"] == b["jobs"] == len(wl)
    assert a["avg_jct_s"] == pytest.approx(b["avg_jct_s"], rel=1e-6)


def test_a_workload_saved_as_csv_simulates_like_its_json(tmp_path):
    wl = optsched.generate("workload", jobs=12, seed=0)
    optsched.save(wl, tmp_path / "w.csv")
    optsched.save(wl, tmp_path / "w.json")
    assert not (tmp_path / "w.csv").read_text().lstrip().startswith("{")
    a = run_one(str(tmp_path / "w.csv"), scheduler="fifo", servers=2).summary
    b = run_one(str(tmp_path / "w.json"), scheduler="fifo", servers=2).summary
    assert a["finished_tracked"] == b["finished_tracked"] == 12
    assert a["avg_jct_s"] == pytest.approx(b["avg_jct_s"], rel=1e-9)


def test_kinds_without_a_csv_flavour_are_refused_before_anything_is_written(tmp_path):
    with pytest.raises(InstanceError, match="JSON only") as e:
        optsched.save(optsched.generate("rar", jobs=2, servers=2, seed=0), tmp_path / "r.csv")
    assert e.value.field == "path"
    ef = elasticflow_shaped_workload(6, seed=0)  # format 2: explicit deadlines and tables, JSON only
    with pytest.raises(InstanceError, match="only the JSON form"):
        optsched.save(ef, tmp_path / "e.csv")
    assert list(tmp_path.iterdir()) == []


def test_the_cli_refuses_a_csv_name_for_a_json_only_kind_in_one_line(tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert exit_code(["generate", "rar", "--jobs", "2", "--servers", "2", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "JSON only" in err
    assert not out.exists()
