"""Issue 26: a failing or inapplicable task is a row (status, error); the grid finishes and writes every row it has;
the command line fails only with --strict. Tasks carry their instances as data, run in chunks, and the run says how
many tasks each worker ran."""

from __future__ import annotations

import io
import json
import os

import pandas as pd
import pytest

import optsched
from optsched.cli import main
from optsched.errors import InstanceError
from optsched.experiments import SerialExecutor, _chunks, find_instances, local_pool, solve_many, sweep
from optsched.io import progress

GRID = {"workload": "synthetic", "n_jobs": 6, "servers": 2, "scheduler": ["fifo", "srtf"], "load": [2.0, 4.0]}
KEY = ["scheduler", "load", "seed", "avg_jct_s", "finished_tracked", "preemptions", "events"]


def test_brute_force_on_too_many_jobs_is_an_inapplicable_row_with_its_reason():
    insts = {"small": optsched.generate("rar", jobs=3, servers=2, seed=0),
             "big": optsched.generate("rar", jobs=5, servers=2, seed=0)}
    t = solve_many(insts, ["ff", "brute-force"], executor=SerialExecutor(), progress=False)
    got = {(r.instance, r.algorithm): r.status for r in t.itertuples()}
    assert got[("big", "brute-force")] == "inapplicable"
    assert got[("small", "brute-force")] == "optimal" and got[("big", "ff")] == "feasible"
    reason = t[(t.instance == "big") & (t.algorithm == "brute-force")]["error"].iloc[0]
    assert "3" in reason and "\n" not in reason
    assert t[t.status != "inapplicable"]["error"].isna().all()
    # the refused run has no objective; the brute force's optimum still bounds ff on the small instance
    assert pd.isna(t[(t.instance == "big") & (t.algorithm == "brute-force")]["objective"].iloc[0])


def test_a_failing_simulation_is_a_row_and_the_others_still_run(tmp_path):
    points = [{"workload": "synthetic", "n_jobs": 6, "servers": 2, "load": 2.0},
              {"workload": str(tmp_path / "missing.csv"), "servers": 2, "load": 2.0},
              {"workload": "synthetic", "n_jobs": 6, "servers": 2, "load": 4.0}]
    res = sweep(points, seeds=[0, 1], executor=SerialExecutor(), progress=False)
    assert list(res.runs["status"]) == ["ok", "ok", "error", "error", "ok", "ok"]
    err = res.failed["error"].iloc[0]
    assert "missing.csv" in err and "seed=0" in err and "worker " in err and "\n" not in err
    clean = sweep([points[0], points[2]], seeds=[0, 1], executor=SerialExecutor(), progress=False)
    ok = res.runs[res.runs.status == "ok"].reset_index(drop=True)
    pd.testing.assert_series_equal(ok["avg_jct_s"], clean.runs["avg_jct_s"])
    assert res.to_dict()["failed"] == 2


def test_guided_chunks_cover_every_task_once_and_shrink():
    for n, slots in ((1, 1), (7, 2), (200, 2), (50, 8)):
        chunks = _chunks(range(n), slots, None)
        assert sorted(i for c in chunks for i in c) == list(range(n))
        sizes = [len(c) for c in chunks]
        assert sizes == sorted(sizes, reverse=True) and sizes[-1] == 1
    assert [len(c) for c in _chunks(range(5), 2, 2)] == [2, 2, 1]


def test_chunked_pool_rows_equal_the_serial_rows_and_stats_count_every_task():
    serial = sweep(GRID, seeds=[0, 1], executor=SerialExecutor(), progress=False)
    with local_pool(2) as pool:
        pooled = sweep(GRID, seeds=[0, 1], executor=pool, progress=False)
    pd.testing.assert_frame_equal(serial.runs[KEY], pooled.runs[KEY])
    st = pooled.stats
    assert sum(st.tasks_by_worker.values()) == 8 and st.chunks < 8 and st.slots == 2
    assert st.busy_s > 0 and "8 tasks in" in st.text()
    with pytest.raises(InstanceError, match="chunk"):
        sweep(GRID, seeds=[0], executor=SerialExecutor(), progress=False, chunk=0)


def test_instances_travel_as_data_so_a_worker_needs_no_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("inst")
    optsched.save(optsched.generate("rar", jobs=3, servers=2, seed=0), "inst/a.json")
    names = ["inst/a.json", *find_instances("bundled:rar/rar-paper-j3-s2-seed0.json")]
    assert names[1] == "bundled:rar/rar-paper-j3-s2-seed0.json"  # not the caller's site-packages path
    sent = []

    class Recording(SerialExecutor):
        def submit(self, fn, /, *args, **kwargs):
            sent.extend(t["instance"] for t in args[1])
            os.rename("inst", "gone")  # the worker could not read the file any more
            try:
                return super().submit(fn, *args, **kwargs)
            finally:
                os.rename("gone", "inst")

    t = solve_many(names, ["ff"], executor=Recording(), progress=False)
    assert list(t["status"]) == ["feasible", "feasible"]
    assert isinstance(sent[0], optsched.RarInstance) and sent[1] == "bundled:rar/rar-paper-j3-s2-seed0.json"


def test_line_progress_prints_the_fraction_done():
    out = io.StringIO()
    bar = progress(2, "sweep", "run", out)
    bar.update()
    bar.update()
    bar.close()
    assert out.getvalue().splitlines() == ["sweep: 50% (1/2 run)", "sweep: 100% (2/2 run)"]


def test_cli_batch_all_records_refusals_and_strict_fails_on_them(tmp_path, capsys):
    d = tmp_path / "inst"
    d.mkdir()
    optsched.save(optsched.generate("rar", jobs=3, servers=2, seed=0), d / "small.json")
    optsched.save(optsched.generate("rar", jobs=5, servers=2, seed=0), d / "big.json")
    table = tmp_path / "runs.csv"
    args = ["solve", str(d), "-a", "ff,brute-force", "--workers", "1", "--no-progress", "--table", str(table)]
    assert main(args) == 0
    err = capsys.readouterr().err
    # a diagnostic, not the command's output: through the "optsched" logger, one line on stderr (issue 28)
    assert "optsched solve: warning: 1 of 4 runs did not apply; first: big brute-force" in err
    rows = pd.read_csv(table)
    assert len(rows) == 4 and set(rows["status"]) == {"feasible", "optimal", "inapplicable"}
    assert main([*args, "--strict"]) == 4
    capsys.readouterr()
    assert main(["solve", str(d), "-a", "all", "--workers", "1", "--no-progress", "--json",
                 "--time-limit", "5", "--strict"]) == 0  # with 'all', a refusal is expected, not a failure
    doc = json.loads(capsys.readouterr().out)
    assert {r["status"] for r in doc["runs"] if r["algorithm"] == "brute-force"} == {"optimal", "inapplicable"}


def test_cli_sweep_writes_every_row_and_strict_fails(tmp_path, capsys):
    wl = tmp_path / "missing.csv"
    args = ["simulate", str(wl), "--sweep", "--schedulers", "fifo", "--loads", "2", "--servers", "2",
            "--workers", "1", "--no-progress", "--out", str(tmp_path / "out")]
    assert main(args) == 0
    assert "optsched simulate: warning: 1 of 1 runs failed" in capsys.readouterr().err
    rows = pd.read_csv(tmp_path / "out" / "sweep.csv")
    assert list(rows["status"]) == ["error"] and "missing.csv" in rows["error"].iloc[0]
    assert main([*args, "--strict"]) == 4
