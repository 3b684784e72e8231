"""A finished run's per-job table is built at its first read (issue 29: a caller that reads only the summary never
holds it beside the job objects); the summary taken from the jobs' columns must be the one the table gives, bit for
bit, and the table the one an eager build gives."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pandas as pd
import pytest

from optsched.problems.workload import Workload, WorkloadJob
from optsched.sim import simulate
from optsched.sim.metrics import SimResult, jobs_table, summarise
from optsched.sim.runner import simulator


def _workload(n: int = 60) -> Workload:
    # preemptions (LAS), multi-server jobs, untracked jobs, deadlines met and missed, one job never finished
    # (max_time_s below)
    jobs = [WorkloadJob(f"j{i}", 31.0 * i, (1, 2, 4, 6)[i % 4], 40.0 + 89.0 * (i % 7), 1.0 + 0.5 * (i % 3),
                        model=("a", "b")[i % 2], deadline_s=(31.0 * i + (300.0 if i % 2 else 90_000.0)
                                                             if i % 5 == 0 else None),
                        tracked=i % 9 != 0)
            for i in range(n)]
    return Workload(tuple(jobs))


def _eager(res: SimResult) -> SimResult:
    """The same run's result built with the table at once (``final=False``)."""
    s = res.summary
    return SimResult.build(res.job_objects, res.timeseries, end_s=s["end_s"], events=s["events"],
                           decisions=s["decisions"], preemptions=s["preemptions_total"], wall_s=s["wall_s"],
                           total_gpus=s["total_gpus"], config=res.config, custom=res.custom,
                           migrations=s["migrations_total"], final=False)


@pytest.mark.parametrize("scheduler,horizon", [("las", None), ("fifo", None), ("tiresias", 1500.0)])
def test_a_finished_runs_table_is_built_on_read_and_equals_the_eager_one(scheduler, horizon):
    res = simulate(_workload(), servers=3, gpus_per_server=4, scheduler=scheduler, mode="event",
                   max_time_s=horizon)
    assert res.__dict__["_jobs_table"] is None  # not built by the run
    eager = _eager(res)
    assert eager.__dict__["_jobs_table"] is not None
    # the summary from the jobs' columns is the table's, exactly (NaN-free: None where there is nothing)
    assert res.summary == eager.summary
    table = res.jobs
    assert res.jobs is table  # built once, then kept
    pd.testing.assert_frame_equal(table, eager.jobs, check_exact=True)
    assert list(table.columns) == list(jobs_table(res.job_objects).columns)
    if horizon is not None:
        assert table["completion_s"].isna().any()  # the unfinished case was covered
    assert res.summary["preemptions"] > 0 or scheduler != "las"
    assert "deadline_met_fraction" in res.summary
    assert horizon is not None or 0 < res.summary["deadline_met_fraction"] < 1  # met and missed both covered


def test_summarise_reads_the_same_from_a_table_and_from_the_jobs():
    res = simulate(_workload(), servers=3, gpus_per_server=4, scheduler="las", mode="event")
    from optsched.sim.metrics import _JobColumns
    a = summarise(res.jobs, res.timeseries, end_s=res.summary["end_s"], total_gpus=12)
    b = summarise(_JobColumns(res.job_objects), res.timeseries, end_s=res.summary["end_s"], total_gpus=12)
    assert a == b and list(a) == list(b)
    # and both match the table's columns computed by hand
    tr = res.jobs[res.jobs["tracked"]]
    assert a["avg_jct_s"] == float(tr["jct_s"].dropna().to_numpy().mean())
    assert a["preemptions"] == int(tr["preemptions"].sum())
    assert a["deadline_met_fraction"] == float(tr["deadline_met"].dropna().mean())


def test_the_lazy_table_can_be_set_copied_pickled_and_compared():
    res = simulate(_workload(20), servers=3, gpus_per_server=4, scheduler="las", mode="event")
    clone = pickle.loads(pickle.dumps(res))
    assert clone.__dict__["_jobs_table"] is None  # pickled unbuilt, built from the pickled jobs
    pd.testing.assert_frame_equal(clone.jobs, res.jobs)
    assert copy.copy(res).jobs is res.jobs
    res.jobs = res.jobs.head(3)
    assert len(res.jobs) == 3
    res.add_records({"j0": {"note": 7}})
    assert res.jobs["note"].tolist()[0] == 7 and np.isnan(res.jobs["note"].tolist()[1])


def test_a_result_of_a_run_still_going_is_a_snapshot():
    sim = simulator(_workload(), servers=3, gpus_per_server=4, scheduler="las", mode="event")
    sim.reset()
    for _ in range(40):
        v = sim.advance()
        assert v is not None
        sim.apply(sim.decide())
    mid = sim.result()
    assert mid.__dict__["_jobs_table"] is not None  # built at once: the jobs go on changing
    before = mid.jobs.copy()
    while sim.advance() is not None:
        sim.apply(sim.decide())
    pd.testing.assert_frame_equal(mid.jobs, before)
    assert sim.result().jobs["completion_s"].notna().sum() > before["completion_s"].notna().sum()
