"""Issue 26: Dask beyond one process tree. A scheduler and three workers are started as separate processes on
127.0.0.1 (``python -m distributed.cli.dask_scheduler`` / ``dask_worker``, what ``dask scheduler`` and
``dask worker`` run), each in its own empty working folder with its own environment: two workers with a data
folder of their own (``OPTSCHED_DATA``), one without. A batch solve over relative paths and ``bundled:`` names and a
small Philly sweep give the serial run's rows on the two; on the third, every row is an error line naming that
worker, the task and the command that fixes it. The processes are stopped even when a test fails.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import optsched
from optsched.cli import main
from optsched.experiments import SerialExecutor, solve_many, sweep

distributed = pytest.importorskip("distributed", reason="the [dask] extra is not installed")

PHILLY_GRID = {"workload": "philly", "window": (10, 30), "n_jobs": 40, "servers": 4, "scheduler": ["fifo", "las"],
               "load": [4.0, 8.0]}
SWEEP_KEY = ["scheduler", "load", "seed", "status", "avg_jct_s", "finished_tracked", "preemptions", "events"]
SOLVE_KEY = ["instance", "algorithm", "seed", "status", "objective", "error"]


def small_philly(folder: Path) -> None:
    """A data folder holding an 80-job trace in Philly's layout (the real one is not needed to test the plumbing)."""
    rng = np.random.default_rng(0)
    lines = ["timestamp,duration,num_gpus,gpu_time,cluster"]
    for i in range(80):
        d, g = float(rng.integers(1000, 20000)), int(rng.choice([1, 2, 4]))
        lines.append(f"2017-10-03 {10 + i // 60:02d}:{i % 60:02d}:00,{d},{g},{d * g},c{i % 3}")
    (folder / "philly").mkdir(parents=True)
    (folder / "philly" / "philly.csv").write_text("\n".join(lines) + "\n")


def _spawn(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen:
    log = open(cwd / "log.txt", "w")  # noqa: SIM115 - closed with the process
    return subprocess.Popen([sys.executable, "-m", *args], cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)
        if p.stdout is not None:
            p.stdout.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """``(client, {name: address}, client folder)``: workers ``a`` and ``b`` with data, ``nodata`` without."""
    root = tmp_path_factory.mktemp("cluster")
    base = {k: v for k, v in os.environ.items() if not k.startswith("OPTSCHED_")}
    base["PYTHONUNBUFFERED"] = "1"
    sfile = root / "scheduler.json"
    procs: list[subprocess.Popen] = []
    client = None
    try:
        (root / "scheduler").mkdir()
        procs.append(_spawn(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                             "--no-dashboard", "--scheduler-file", str(sfile)], root / "scheduler", base))
        deadline = time.monotonic() + 40
        while not sfile.exists():
            if time.monotonic() > deadline or procs[0].poll() is not None:
                raise RuntimeError("the scheduler did not start: " + (root / "scheduler" / "log.txt").read_text())
            time.sleep(0.2)
        for name in ("a", "b", "nodata"):
            cwd = root / f"worker-{name}"
            (cwd / "data").mkdir(parents=True)  # an empty working folder but for its own data folder
            if name != "nodata":
                small_philly(cwd / "data")
            env = {**base, "OPTSCHED_DATA": str(cwd / "data"), "OPTSCHED_CACHE": str(cwd / "cache")}
            procs.append(_spawn(["distributed.cli.dask_worker", "--scheduler-file", str(sfile), "--name", name,
                                 "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
                                 "--local-directory", str(cwd / "dask")], cwd, env))
        client = distributed.Client(scheduler_file=str(sfile), timeout="30s")
        client.wait_for_workers(3, timeout=60)
        names = {w["name"]: addr for addr, w in client.scheduler_info()["workers"].items()}
        (root / "client").mkdir()
        small_philly(root / "client" / "data")
        yield client, names, root / "client"
    finally:
        if client is not None:
            client.close()
        _stop(procs)


@pytest.fixture
def in_client_folder(cluster, monkeypatch):
    client, names, folder = cluster
    monkeypatch.chdir(folder)
    monkeypatch.setenv("OPTSCHED_DATA", str(folder / "data"))
    return client, names


def test_relative_paths_bundled_names_and_a_philly_sweep_match_the_serial_rows(in_client_folder, capsys):
    client, names = in_client_folder
    os.makedirs("instances", exist_ok=True)
    for k in range(2):
        optsched.save(optsched.generate("rar", jobs=3, servers=2, seed=k), f"instances/r{k}.json")
    files = ["instances/r0.json", "instances/r1.json", "bundled:rar/rar-paper-j3-s2-seed0.json"]
    ex = client.get_executor(workers=[names["a"], names["b"]], allow_other_workers=False)
    serial = solve_many(files, ["ff", "sjf-bco"], executor=SerialExecutor(), progress=False)
    dask = solve_many(files, ["ff", "sjf-bco"], executor=ex, progress=False)
    pd.testing.assert_frame_equal(serial[SOLVE_KEY], dask[SOLVE_KEY])
    assert (dask["status"] == "feasible").all()
    assert set(dask.attrs["tasks"].tasks_by_worker) <= {names["a"], names["b"]}

    s_serial = sweep(PHILLY_GRID, seeds=[0, 1], executor=SerialExecutor(), progress=False)
    s_dask = sweep(PHILLY_GRID, seeds=[0, 1], executor=ex, progress=False)
    pd.testing.assert_frame_equal(s_serial.runs[SWEEP_KEY], s_dask.runs[SWEEP_KEY])
    assert (s_dask.runs["status"] == "ok").all()
    assert sum(s_dask.stats.tasks_by_worker.values()) == 8

    # the command line, through the same scheduler (every worker can solve: the instances travel as data)
    addr = client.scheduler.address
    assert main(["solve", "instances", "bundled:rar/rar-paper-j3-s2-seed0.json", "-a", "ff", "--dask", addr,
                 "--no-progress", "--table", "runs.csv"]) == 0
    assert "Dask: 3 tasks in 3 chunks" in capsys.readouterr().err
    assert list(pd.read_csv("runs.csv")["status"]) == ["feasible"] * 3


def test_a_worker_without_the_trace_fails_its_rows_with_one_line_naming_it(in_client_folder):
    client, names = in_client_folder
    ex = client.get_executor(workers=[names["nodata"]], allow_other_workers=False)
    res = sweep(PHILLY_GRID, seeds=[0], executor=ex, progress=False)
    assert len(res.runs) == 4 and (res.runs["status"] == "error").all()
    for err in res.runs["error"]:
        assert err.startswith(f"worker {names['nodata']}, task workload=philly")
        assert "optsched data fetch philly" in err and "OPTSCHED_DATA" in err and "--send-trace" in err
        assert "\n" not in err


def test_a_trace_sent_from_the_client_reaches_a_worker_without_data(in_client_folder):
    client, names = in_client_folder
    ex = client.get_executor(workers=[names["nodata"]], allow_other_workers=False)
    serial = sweep(PHILLY_GRID, seeds=[0], executor=SerialExecutor(), progress=False)
    sent = sweep(PHILLY_GRID, seeds=[0], executor=ex, progress=False, send_trace=True)
    pd.testing.assert_frame_equal(serial.runs[SWEEP_KEY], sent.runs[SWEEP_KEY])
    assert set(sent.stats.tasks_by_worker) == {names["nodata"]}


def test_a_trace_sent_to_a_local_process_pool_gives_the_serial_rows():
    # --send-trace without Dask: the frame travels with each task to the pool's workers (no scatter there)
    from optsched.experiments import local_pool

    serial = sweep(PHILLY_GRID, seeds=[0], executor=SerialExecutor(), progress=False)
    with local_pool(2) as pool:
        sent = sweep(PHILLY_GRID, seeds=[0], executor=pool, progress=False, send_trace=True)
    pd.testing.assert_frame_equal(serial.runs[SWEEP_KEY], sent.runs[SWEEP_KEY])
    assert (sent.runs["status"] == "ok").all()
