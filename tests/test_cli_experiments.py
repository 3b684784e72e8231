"""The command line of issue 14: optsched list (and --list), --json summaries, batch solving of a folder or glob,
optsched plot, simulate --seeds/--trace, Pollux's and Philly's own CSVs by path, a closed pipe."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.sim.shared_data import missing_reason

import optsched
from cli import exit_code

ROOT = Path(__file__).resolve().parents[1]


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def test_list_marks_heuristics_and_exact_models(capsys):
    assert exit_code(["list", "--json"]) == 0
    doc = _json(capsys)
    assert set(doc) == {"problems", "algorithms", "exact", "schedulers", "placements", "admissions", "perf"}
    registered = optsched.list_algorithms()
    assert {r["name"] for r in doc["exact"]} == {n for n, a in registered.items() if a.exact}
    assert {r["name"] for r in doc["algorithms"]} == {n for n, a in registered.items() if not a.exact}
    for section in doc.values():
        assert all(r["description"] and r["description"] != "(no description)" for r in section)
    assert exit_code(["simulate", "--list"]) == 0
    out = capsys.readouterr().out
    assert "[simulator: schedulers]" in out and "tiresias" in out and "accept-k" in out


def test_batch_solve_of_a_folder(tmp_path, capsys):
    for k in range(3):
        optsched.save(optsched.generate("rar", jobs=4, servers=2, seed=k), tmp_path / "in" / f"i{k}.json")
    table, out_dir = tmp_path / "runs.csv", tmp_path / "sched"
    argv = ["solve", str(tmp_path / "in"), "-a", "ff,sjf-bco,exact", "--deterministic-limit", "20",
            "--threads", "1", "--workers", "1", "--json", "--table", str(table), "--out-dir", str(out_dir),
            "--no-progress"]
    assert exit_code(argv) == 0
    doc = _json(capsys)
    assert len(doc["runs"]) == 9 and doc["instances"] == 3
    assert all(r["reference_kind"] == "optimum" for r in doc["runs"])
    exact = {r["instance"]: r["objective"] for r in doc["runs"] if r["algorithm"] == "exact"}
    for r in doc["runs"]:
        assert r["objective"] >= exact[r["instance"]] and r["gap"] >= 0
    with open(table, newline="") as fh:
        assert len(list(csv.DictReader(fh))) == 9
    assert len(doc["schedules"]) == 9
    for path in doc["schedules"]:   # every written schedule evaluates to the objective its run reported
        stem, alg = Path(path).name.split(".")[:2]
        assert exit_code(["evaluate", str(tmp_path / "in" / f"{stem}.json"), path, "--json"]) == 0
        run = next(r for r in doc["runs"] if r["instance"] == stem and r["algorithm"] == alg)
        assert _json(capsys)["objective"] == run["objective"]


def test_batch_by_glob_and_default_algorithm(tmp_path, capsys):
    for k in range(2):
        optsched.save(optsched.generate("rar", jobs=3, servers=2, seed=k), tmp_path / f"g{k}.json")
    assert exit_code(["solve", str(tmp_path / "g*.json"), "--workers", "1", "--json", "--no-progress"]) == 0
    doc = _json(capsys)
    assert {r["algorithm"] for r in doc["runs"]} == {"sjf-bco"} and len(doc["runs"]) == 2


def test_solve_and_evaluate_json(tmp_path, capsys):
    inst = tmp_path / "a.json"
    optsched.save(optsched.generate("rar", jobs=4, servers=2, seed=5), inst)
    sched = tmp_path / "s.json"
    argv = ["solve", str(inst), "-a", "exact", "--deterministic-limit", "20", "--json", "-o", str(sched)]
    assert exit_code(argv) == 0
    doc = _json(capsys)
    assert doc["status"] == "optimal" and doc["evaluation"]["makespan"] == doc["objective"]
    assert exit_code(["evaluate", str(inst), str(sched), "--json", "-v"]) == 0
    ev = _json(capsys)
    assert ev["makespan"] == doc["objective"] and len(ev["jobs"]) == 4


def test_plot_command_writes_a_png_and_a_trace(tmp_path, capsys):
    inst, sched = tmp_path / "a.json", tmp_path / "s.json"
    optsched.save(optsched.generate("rar", jobs=4, servers=2, seed=2), inst)
    assert exit_code(["solve", str(inst), "-a", "exact", "--deterministic-limit", "20", "-o", str(sched)]) == 0
    capsys.readouterr()
    png, trace = tmp_path / "g.png", tmp_path / "t.json"
    assert exit_code(["plot", str(inst), str(sched), "-o", str(png), "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "optimum" in out and png.read_bytes()[:4] == b"\x89PNG"
    events = json.loads(trace.read_text())["traceEvents"]
    data = optsched.load(inst)
    assert len([e for e in events if e["ph"] == "X"]) == sum(j.gpus for j in data.jobs)


def test_simulate_json_trace_and_seeds(tmp_path, capsys):
    trace = tmp_path / "run.trace.json"
    argv = ["simulate", "synthetic", "--jobs", "12", "--load", "4", "--servers", "2", "--no-progress", "--json",
            "--trace", str(trace)]
    assert exit_code(argv) == 0
    doc = _json(capsys)
    assert doc["summary"]["finished_tracked"] == 12 and doc["config"]["seed"] == 0
    assert any(e["ph"] == "X" for e in json.loads(trace.read_text())["traceEvents"])
    argv = ["simulate", "synthetic", "--jobs", "8", "--servers", "2", "--sweep", "--schedulers", "fifo,las",
            "--loads", "2,4", "--seeds", "0-2", "--workers", "1", "--out", str(tmp_path / "sw"), "--json",
            "--no-progress"]
    assert exit_code(argv) == 0
    doc = _json(capsys)
    assert doc["seeds"] == [0, 1, 2] and doc["runs"] == 12 and len(doc["points"]) == 4
    assert all(p["seeds"] == 3 for p in doc["points"])
    assert (tmp_path / "sw" / "sweep.md").read_text().count("[") >= 4


@pytest.mark.skipif(bool(missing_reason("pollux-workloads", "workload-6.csv")), reason="shared data missing")
def test_pollux_and_philly_csvs_by_path(capsys):
    from optsched.data import data_path

    pollux = str(data_path("pollux-workloads", "workload-6.csv"))
    assert exit_code(["simulate", pollux, "--servers", "16", "--no-progress", "--json"]) == 0
    doc = _json(capsys)
    assert doc["config"]["workload"]["jobs"] == 160 and doc["summary"]["finished_tracked"] == 160
    philly = str(data_path("philly", "philly.csv"))
    argv = ["simulate", philly, "--load", "8", "--jobs-window", "3000:3020", "--no-progress", "--json"]
    assert exit_code(argv) == 0
    assert _json(capsys)["summary"]["tracked"] == 20
    # the Python door reading our own format says what the file is instead of listing unknown columns
    with pytest.raises(optsched.InstanceError, match="Pollux workload CSV"):
        optsched.sim.read_workload(pollux)


def test_a_closed_pipe_ends_quietly():
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    p = subprocess.run(f"'{sys.executable}' -m optsched list | head -1", shell=True, capture_output=True, text=True,
                       env=env, timeout=120)
    assert p.stdout.startswith("[problems]")
    assert "Traceback" not in p.stderr and "BrokenPipe" not in p.stderr
