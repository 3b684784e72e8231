"""optsched.experiments (issue 14): grids and batches on any executor, rows identical to a serial run, tidy tables
with the mean and a 95 % bootstrap interval over seeds, CP-SAT threads per task."""

from __future__ import annotations

import math
import statistics
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

import optsched
from optsched.errors import InstanceError
from optsched.experiments import (
    ENV_SLOTS,
    SerialExecutor,
    available_cores,
    executor,
    expand_grid,
    find_instances,
    markdown_table,
    solve_many,
    summarise,
    sweep,
    task_threads,
    write_sweep,
)
from optsched.plot import bootstrap_interval

GRID = {"workload": "synthetic", "n_jobs": 8, "servers": 2, "scheduler": ["fifo", "srtf"], "load": [2.0, 4.0]}
KEY = ["scheduler", "load", "seed", "avg_jct_s", "avg_responsiveness_s", "finished_tracked", "preemptions", "events"]


def test_grid_axes_are_the_lists_and_the_rest_is_fixed():
    pts, axes = expand_grid({"workload": "philly", "window": (3000, 3100), "scheduler": ["fifo", "las"],
                             "load": [1.0, 2.0, 3.0]})
    assert axes == ["scheduler", "load"] and len(pts) == 6
    assert all(p["window"] == (3000, 3100) and p["workload"] == "philly" for p in pts)
    assert [(p["scheduler"], p["load"]) for p in pts[:3]] == [("fifo", 1.0), ("fifo", 2.0), ("fifo", 3.0)]
    pts, axes = expand_grid([{"workload": "synthetic", "load": 1.0}, {"workload": "synthetic", "load": 2.0}])
    assert axes == ["load"] and len(pts) == 2


@pytest.mark.parametrize("grid,seeds,field", [
    ({"workload": "synthetic", "scheduler": []}, [0], "grid.scheduler"),
    ({"workload": "synthetic", "colour": "red"}, [0], "grid"),
    ({"scheduler": ["fifo"]}, [0], "grid.workload"),
    ({"workload": "synthetic", "seed": [1, 2]}, [0], "grid.seed"),
    ({"workload": "synthetic"}, [0, 0], "seeds"),
    ({"workload": "synthetic"}, [-1], "seeds"),
    ({"workload": "synthetic"}, True, "seeds"),
    ({"workload": "synthetic"}, [], "seeds"),
])
def test_bad_grids_are_refused_before_any_run(grid, seeds, field):
    with pytest.raises(InstanceError) as e:
        sweep(grid, seeds=seeds, executor=SerialExecutor(), progress=False)
    assert e.value.field == field


def test_unknown_policy_is_refused_before_any_run():
    calls = []

    class Spy(SerialExecutor):
        def submit(self, fn, /, *args, **kwargs):
            calls.append(fn)
            return super().submit(fn, *args, **kwargs)

    with pytest.raises(InstanceError):
        sweep({**GRID, "scheduler": ["fifo", "nope"]}, executor=Spy(), progress=False)
    assert calls == []


def test_rows_come_in_grid_order_whatever_order_tasks_finish():
    res = sweep(GRID, seeds=[3, 1], executor=ThreadPoolExecutor(4), progress=False)
    assert res.axes == ["scheduler", "load"]
    assert res.runs[["scheduler", "load", "seed"]].values.tolist() == [
        [s, L, k] for s in ("fifo", "srtf") for L in (2.0, 4.0) for k in (3, 1)]
    assert set(res.cdfs) == {(s, L, k) for s in ("fifo", "srtf") for L in (2.0, 4.0) for k in (3, 1)}


def test_local_process_pool_gives_the_serial_rows():
    serial = sweep(GRID, seeds=2, executor=SerialExecutor(), progress=False)
    pooled = sweep(GRID, seeds=2, workers=2, progress=False)
    assert "process pool" in pooled.executor
    pd.testing.assert_frame_equal(serial.runs[KEY], pooled.runs[KEY])
    for k in serial.cdfs:
        np.testing.assert_array_equal(serial.cdfs[k], pooled.cdfs[k])


def test_seeds_are_independent_replications_and_the_same_seed_repeats():
    a = sweep(GRID, seeds=[0, 1], executor=SerialExecutor(), progress=False).runs
    b = sweep(GRID, seeds=[1], executor=SerialExecutor(), progress=False).runs
    pd.testing.assert_frame_equal(a[a["seed"] == 1][KEY].reset_index(drop=True), b[KEY])
    assert not a[a["seed"] == 0]["avg_jct_s"].equals(a[a["seed"] == 1]["avg_jct_s"].reset_index(drop=True))


def test_summarise_is_the_bootstrap_interval_inside_the_values_range():
    runs = pd.DataFrame({"g": ["a"] * 3 + ["b"] * 4 + ["c"], "x": [1.0, 2.0, 6.0, 2.0, 2.0, 2.0, 2.0, 9.0],
                         "y": [0.0] * 8})
    t = summarise(runs, ["g"], ["x", "y"])
    assert t[["g", "metric"]].values.tolist() == [["a", "x"], ["a", "y"], ["b", "x"], ["b", "y"], ["c", "x"],
                                                  ["c", "y"]]
    a = t[(t["g"] == "a") & (t["metric"] == "x")].iloc[0]
    half = 4.302652729911275 * statistics.stdev([1.0, 2.0, 6.0]) / math.sqrt(3)  # t(0.975, 2 df), from tables
    assert a["n"] == 3 and a["mean"] == pytest.approx(3.0)
    # a percentile bootstrap of the mean: inside [min, max] of the values, where Student-t reaches below 0
    assert 1.0 <= a["ci_low"] < 3.0 < a["ci_high"] <= 6.0 and 3.0 - half < 0.0
    assert (a["ci_low"], a["ci_high"]) == pytest.approx(bootstrap_interval([1.0, 2.0, 6.0]))
    b = t[(t["g"] == "b") & (t["metric"] == "x")].iloc[0]
    assert b["ci_low"] == b["ci_high"] == 2.0        # no spread, no width
    c = t[(t["g"] == "c") & (t["metric"] == "x")].iloc[0]
    assert c["n"] == 1 and math.isnan(c["ci_low"])   # one value: no interval
    with pytest.raises(InstanceError, match="unknown column"):
        summarise(runs, ["g"], ["nope"])


def test_sweep_tables_and_files(tmp_path):
    res = sweep(GRID, seeds=3, executor=SerialExecutor(), progress=False)
    w = res.wide()
    assert len(w) == 4 and (w["seeds"] == 3).all()
    by_hand = res.runs.groupby(["scheduler", "load"], sort=False)["avg_jct_s"].mean().to_numpy()
    np.testing.assert_allclose(w["avg_jct_s"].to_numpy(), by_hand)
    assert (w["avg_jct_s_ci_low"] <= w["avg_jct_s"]).all() and (w["avg_jct_s"] <= w["avg_jct_s_ci_high"]).all()
    md = markdown_table(res, "t")
    assert md.count("\n| ") == 5 and "[" in md           # header + 4 points, intervals in brackets
    paths = write_sweep(res, tmp_path, "g", title="grid")
    assert {p.name for p in paths} == {"g.md", "g.csv", "g_summary.csv", "g_jct_vs_load.png",
                                       "g_responsiveness_vs_load.png", "g_jct_cdf.png"}
    back = pd.read_csv(tmp_path / "g.csv")
    assert len(back) == 12 and list(back.columns[:3]) == ["scheduler", "load", "seed"]
    doc = res.to_dict()
    assert doc["seeds"] == [0, 1, 2] and len(doc["points"]) == 4


def test_task_threads_divides_the_cores_among_the_tasks(monkeypatch):
    monkeypatch.setenv(ENV_SLOTS, "1")
    assert task_threads() == available_cores()
    monkeypatch.setenv(ENV_SLOTS, str(available_cores() * 4))
    assert task_threads() == 1


def test_a_local_dask_plan_waits_for_every_worker_it_started():
    """A batch on a local Dask cluster of ours is planned on every worker the cluster started, not only on those
    the scheduler sees when the batch begins (on a loaded machine one can register late): the planning waits for
    them first. A fake client here: one worker seen, until the wait brings the second."""
    from optsched import experiments

    class Client:
        def __init__(self):
            self.seen, self.waits = ["tcp://127.0.0.1:1"], []

        def wait_for_workers(self, n, timeout=None):
            self.waits.append((n, timeout))
            self.seen = [f"tcp://127.0.0.1:{k + 1}" for k in range(n)]

        def scheduler_info(self):
            return {"workers": {a: {"nthreads": 1} for a in self.seen}}

    class Cluster:
        def __init__(self, n):
            self.workers = dict.fromkeys(range(n))  # the workers it started (a LocalCluster's spec)

    class Ex:
        def __init__(self, planned=None):
            self._client = Client()
            self._client.cluster = Cluster(planned) if planned else None

    assert experiments._slots_by_host(Ex(planned=2)) == {"127.0.0.1": 2}
    remote = Ex()  # a scheduler given by address: its workers are whatever it sees
    assert experiments._slots_by_host(remote) == {"127.0.0.1": 1} and remote._client.waits == []


def test_solve_many_reads_files_in_the_worker_and_filters_by_problem(tmp_path):
    rar = find_instances("bundled:rar/rar-paper-j3-s2-seed*.json")
    tj = tmp_path / "t.json"
    optsched.save(optsched.generate("total-jct", n=3, seed=0), tj)
    t = solve_many([*rar, str(tj)], ["ff", "sjf-bco", "total-jct-greedy"], executor=SerialExecutor(),
                   progress=False)
    assert t.groupby("problem")["algorithm"].apply(set).to_dict() == {
        "rar-ddls": {"ff", "sjf-bco"}, "total-jct": {"total-jct-greedy"}}
    assert len(t) == 2 * len(rar) + 1
    for _, r in t.iterrows():  # every objective is the evaluator's score of that algorithm on that file
        src = next(p for p in [*rar, str(tj)] if p.endswith(f"{r['instance']}.json"))
        assert optsched.solve(optsched.load(src), r["algorithm"], seed=0).objective == r["objective"]


def test_solve_many_refuses_before_any_work():
    insts = {"a": optsched.generate("rar", jobs=3, servers=2, seed=0)}
    with pytest.raises(InstanceError, match="unknown algorithm"):
        solve_many(insts, ["ff", "nope"], executor=SerialExecutor(), progress=False)
    with pytest.raises(InstanceError, match="none of the instances"):
        solve_many(insts, ["total-jct-greedy"], executor=SerialExecutor(), progress=False)
    with pytest.raises(InstanceError, match="no instance file"):
        find_instances("/no/such/*.json")
    with pytest.raises(InstanceError, match="positive number of seconds"):
        solve_many(insts, ["exact"], time_limit=float("nan"), executor=SerialExecutor(), progress=False)


def test_exact_runs_get_threads_and_seeds_repeat():
    insts = {f"r{k}": optsched.generate("rar", jobs=3, servers=2, seed=k) for k in range(2)}
    t = solve_many(insts, ["exact", "exact-interval", "rand"], deterministic_limit=20, seeds=[0, 1], threads=1,
                   executor=SerialExecutor(), progress=False, keep_results=True)
    # every exact model gets the deterministic limit, not its 60-s wall-clock default (issue 28)
    for name in ("exact", "exact-interval"):
        rows = t[t["algorithm"] == name]
        assert all(r.info["limit"] == "deterministic" for r in rows["result"]), name
        assert (rows["status"] == "optimal").all()
    ex = t[t["algorithm"] == "exact"]
    assert (ex["threads"] == 1).all() and all(r.info["num_workers"] == 1 for r in ex["result"])
    inter = t[t["algorithm"] == "exact-interval"]
    assert (inter["objective"].to_numpy() == ex["objective"].to_numpy()).all()
    # the random heuristic never beats the proven optimum, and its seeds are honoured
    for inst in insts:
        opt = float(ex[ex["instance"] == inst]["objective"].iloc[0])
        assert (t[(t["instance"] == inst) & (t["algorithm"] == "rand")]["objective"] >= opt).all()
    again = solve_many(insts, ["rand"], seeds=[0, 1], executor=SerialExecutor(), progress=False)
    assert again["objective"].tolist() == t[t["algorithm"] == "rand"]["objective"].tolist()


def test_the_default_executor_for_one_worker_is_serial():
    with executor(None, 1) as ex:
        assert isinstance(ex, SerialExecutor)
