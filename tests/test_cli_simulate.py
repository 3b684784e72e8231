"""``optsched simulate``: one run on tiny workloads, bad input (exit 2, one line), and a tiny sweep."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from cli import exit_code
from optsched.cli import main
from optsched.commands.simulate import parse_loads


def _err_lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_synthetic_run_writes_json_and_plots(tmp_path, capsys):
    out = tmp_path / "run.json"
    rc = main(["simulate", "synthetic", "--jobs", "12", "--load", "6", "--servers", "2", "--gpus-per-server", "4",
               "--scheduler", "las", "--seed", "3", "--no-progress", "-o", str(out), "--plots", str(tmp_path / "pl")])
    assert rc == 0
    text = capsys.readouterr().out
    assert "average JCT (h)" in text and "las + consolidated + accept-all" in text
    data = json.loads(out.read_text())
    assert data["format"] == "optsched/sim-result@1"
    assert len(data["jobs"]) == 12 and data["config"]["seed"] == 3
    assert data["config"]["scheduler"]["name"] == "las"
    assert all(j["completion_s"] >= j["arrival_s"] for j in data["jobs"])
    assert (tmp_path / "pl" / "jct_cdf.png").stat().st_size > 0
    assert (tmp_path / "pl" / "timeline.png").stat().st_size > 0


def test_user_file_hand_computed(tmp_path, capsys):
    # one server of 2 GPUs, FIFO, event-driven: a runs [0, 100), b waits and runs [100, 150)
    f = tmp_path / "tiny.csv"
    f.write_text("id,arrival_s,gpus,iterations,iteration_time_s\na,0,2,100,1.0\nb,10,2,50,1.0\n")
    out = tmp_path / "o.json"
    assert main(["simulate", str(f), "--event", "--servers", "1", "--gpus-per-server", "2", "--no-progress",
                 "--quiet", "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    jobs = {j["id"]: j for j in json.loads(out.read_text())["jobs"]}
    assert jobs["a"]["completion_s"] == 100.0 and jobs["b"]["completion_s"] == 150.0
    assert jobs["b"]["responsiveness_s"] == 90.0


def test_same_seed_same_output(tmp_path):
    outs = []
    for k in range(2):
        o = tmp_path / f"r{k}.json"
        assert main(["simulate", "synthetic", "--jobs", "15", "--load", "8", "--servers", "2", "--seed", "9",
                     "--scheduler", "tiresias", "--no-progress", "--quiet", "-o", str(o)]) == 0
        outs.append(json.loads(o.read_text())["jobs"])
    assert outs[0] == outs[1]


@pytest.mark.parametrize("argv", [
    ["simulate", "synthetic", "--scheduler", "nonsense"],
    ["simulate", "synthetic", "--placement", "nowhere"],
    ["simulate", "synthetic", "--admission", "accept-zero"],
    ["simulate", "pollux:12"],
    ["simulate", "missing-file.json"],
    ["simulate", "synthetic", "--jobs-window", "9:3"],
    ["simulate", "synthetic", "--seed", "-4"],
    ["simulate"],
    ["simulate", "--sweep", "synthetic", "--loads", "0,-1"],
])
def test_bad_input_exit_2_one_line(argv, capsys):
    assert exit_code(argv + ["--no-progress"]) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 1 and lines[0].startswith("optsched simulate: error:")


def test_bad_user_file_exit_2(tmp_path, capsys):
    f = tmp_path / "bad.csv"
    f.write_text("id,arrival_s,gpus,iterations,iteration_time_s\na,0,0,100,1.0\n")
    assert main(["simulate", str(f), "--no-progress"]) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 1 and "gpus" in lines[0]


def test_tiny_sweep(tmp_path, capsys):
    rc = main(["simulate", "--sweep", "synthetic", "--jobs", "10", "--servers", "2", "--schedulers", "fifo,srtf",
               "--admissions", "accept-all,accept-1.0", "--loads", "2,6", "--out", str(tmp_path), "--name", "tiny",
               "--no-progress", "--quiet"])
    assert rc == 0
    table = pd.read_csv(tmp_path / "tiny.csv")
    assert len(table) == 2 * 2 * 2
    assert set(table["scheduler"]) == {"fifo", "srtf"} and set(table["load"]) == {2.0, 6.0}
    assert (table["finished_tracked"] == 10).all()
    md = (tmp_path / "tiny.md").read_text()
    assert "our simulator" in md.lower() and md.count("\n| fifo") == 4
    for suffix in ("_jct_vs_load.png", "_responsiveness_vs_load.png", "_jct_cdf.png"):
        assert (tmp_path / f"tiny{suffix}").stat().st_size > 0


def test_sweep_with_two_workers_matches_one(tmp_path):
    args = ["simulate", "--sweep", "synthetic", "--jobs", "8", "--servers", "1", "--schedulers", "fifo,las",
            "--loads", "3,9", "--no-progress", "--quiet"]
    assert main(args + ["--out", str(tmp_path / "a"), "--workers", "1"]) == 0
    assert main(args + ["--out", str(tmp_path / "b"), "--workers", "2"]) == 0
    a = pd.read_csv(tmp_path / "a" / "sweep.csv").drop(columns=["wall_s", "events_per_s"])
    b = pd.read_csv(tmp_path / "b" / "sweep.csv").drop(columns=["wall_s", "events_per_s"])
    pd.testing.assert_frame_equal(a, b)


def test_parse_loads():
    assert parse_loads("1-3,5") == [1.0, 2.0, 3.0, 5.0]


def test_drain_horizon_cuts_unfinished_jobs(tmp_path):
    # one GPU, FIFO: a runs [0, 3600), b would run [3600, 7200); the horizon 1.5 h after the last arrival (0)
    # leaves b unfinished
    f = tmp_path / "two.csv"
    f.write_text("id,arrival_s,gpus,iterations,iteration_time_s\na,0,1,3600,1.0\nb,0,1,3600,1.0\n")
    out = tmp_path / "o.json"
    assert main(["simulate", str(f), "--servers", "1", "--gpus-per-server", "1", "--event", "--drain-h", "1.5",
                 "--no-progress", "--quiet", "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["summary"]["finished_tracked"] == 1
    jobs = {j["id"]: j for j in data["jobs"]}
    assert jobs["a"]["completion_s"] == 3600.0 and jobs["b"]["completion_s"] is None
