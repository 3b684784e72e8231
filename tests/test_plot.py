"""optsched.plot (issue 14): Gantt charts of schedules, a simulation's segments and occupancy, Chrome traces, gap
tables; every plot takes and returns an Axes. Figures are checked through what they draw (bars, lines, titles)
and the tables against independent computations."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import optsched  # noqa: E402
from optsched.generators.workload import synthetic_workload  # noqa: E402
from optsched.plot import (  # noqa: E402
    assign_lanes,
    chrome_trace,
    gantt,
    gap_summary,
    gap_table,
    occupancy,
    plot_cdfs,
    plot_gaps,
    plot_vs_load,
    queue,
    save_axes,
    schedule_segments,
    sim_segments,
    utilisation,
)
from optsched.sim import simulate  # noqa: E402


@pytest.fixture(scope="module")
def solved():
    inst = optsched.generate("rar", jobs=5, servers=2, seed=3)
    return inst, optsched.solve(inst, "sjf-bco")


@pytest.fixture(scope="module")
def run():
    wl = synthetic_workload(30, load_jph=6.0, seed=1, gpu_mix={1: 2, 2: 1, 4: 1}, window=(5, 25))
    return simulate(wl, servers=3, gpus_per_server=4, scheduler="las", mode="round", round_s=300)


def test_gantt_draws_every_gpu_of_every_job_and_marks_the_lines(solved):
    inst, res = solved
    fig, ax = plt.subplots()
    out = gantt(inst, res.schedule, ax, optimum=150, bound=120)
    assert out is ax
    bars = [c for c in ax.collections if type(c).__name__ == "PolyCollection"]
    assert len(bars) == sum(j.gpus for j in inst.jobs)     # one bar per GPU a job holds
    xs = sorted(float(line.get_xdata()[0]) for line in ax.get_lines() if len(set(line.get_xdata())) == 1)
    assert xs == sorted([150.0, 120.0, float(res.objective)])
    assert "sjf-bco" in ax.get_title()
    plt.close(fig)


def test_schedule_segments_fill_completions_from_the_evaluator(solved):
    inst, res = solved
    bare = optsched.Schedule([optsched.ScheduledJob(j.id, j.start, j.placement) for j in res.schedule])
    seg = schedule_segments(inst, bare)
    ev = optsched.evaluate(inst, bare)
    assert seg.groupby("job")["end"].max().to_dict() == {j.id: j.completion for j in ev.schedule}


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(1, 10), st.integers(1, 4)), min_size=1, max_size=25))
def test_lanes_never_overlap_on_a_feasible_schedule(jobs):
    # keep only jobs that fit a 4-GPU server beside those already kept (a feasible schedule), then lanes must be
    # distinct GPUs for every pair of overlapping jobs
    kept = []
    for start, dur, g in jobs:
        end = start + dur
        busy = max((sum(k[2] for k in kept if k[0] <= t < k[1]) for t in range(start, end)), default=0)
        if busy + g <= 4:
            kept.append((start, end, g))
    seg = pd.DataFrame({"job": [str(i) for i in range(len(kept))], "server": "s0", "gpus": [k[2] for k in kept],
                        "start": [k[0] for k in kept], "end": [k[1] for k in kept]})
    lanes = assign_lanes(seg, {"s0": 4})["lanes"].tolist()
    for i, a in enumerate(kept):
        assert len(lanes[i]) == a[2] and max(lanes[i]) < 4
        for j in range(i):
            b = kept[j]
            if a[0] < b[1] and b[0] < a[1]:
                assert not set(lanes[i]) & set(lanes[j])


def test_sim_segments_add_up_to_each_jobs_service(run):
    seg = sim_segments(run)
    assert list(seg.columns[:5]) == ["job", "server", "gpus", "start", "end"]
    gpu_s = (seg["gpus"] * (seg["end"] - seg["start"])).groupby(seg["job"]).sum()
    attained = run.jobs.set_index("id")["attained_gpu_s"]
    for job, v in gpu_s.items():
        assert v == pytest.approx(attained[job])
    # iterations done in the segments: the whole job for every finished job
    done = run.jobs.dropna(subset=["completion_s"]).set_index("id")["iterations"]
    iters = seg.groupby("job")["iterations"].sum()
    for job, n in done.items():
        assert iters[job] == pytest.approx(n)


def test_occupancy_never_exceeds_the_cluster_and_averages_to_the_utilisation(run):
    fig, ax = plt.subplots()
    assert occupancy(run, ax) is ax
    stacks = [c for c in ax.collections if type(c).__name__ in ("FillBetweenPolyCollection", "PolyCollection")]
    assert stacks
    seg = sim_segments(run)
    t = np.unique(np.r_[seg["start"], seg["end"]])
    busy = np.array([seg.loc[(seg["start"] <= x) & (x < seg["end"]), "gpus"].sum() for x in t])
    assert busy.max() <= 12
    start, end = run.jobs["arrival_s"].min(), run.summary["end_s"]
    widths = np.diff(np.clip(np.r_[t, end], start, end))
    assert (widths * busy).sum() / (end - start) / 12 == pytest.approx(run.summary["mean_utilisation"], rel=1e-6)
    title = ax.get_title()
    assert "load 6 jobs/h" in title and "seed 0" in title and "synthetic" in title
    labels = ax.get_legend_handles_labels()[1]
    assert "tracked jobs' window" in labels
    plt.close(fig)


def test_timeline_panels_and_cdfs_return_their_axes(run, tmp_path):
    fig, (a, b, c, d) = plt.subplots(4, 1)
    assert utilisation(run, a) is a and queue(run, b) is b
    assert plot_cdfs({"las": run.jct_cdf()[0]}, c) is c
    tidy = pd.DataFrame({"scheduler": ["x", "x"], "load": [1.0, 2.0], "metric": "avg_jct_s", "mean": [3600.0, 7200.0],
                         "ci_low": [0.0, 3600.0], "ci_high": [7200.0, 10800.0], "n": 3, "std": 1.0})
    assert plot_vs_load(tidy, d) is d
    assert d.get_lines()[0].get_ydata().tolist() == [1.0, 2.0]     # hours
    save_axes(a, tmp_path / "x.png")
    assert (tmp_path / "x.png").stat().st_size > 0


def test_chrome_trace_has_one_event_per_gpu_and_segment(run, tmp_path):
    seg = sim_segments(run)
    doc = chrome_trace(run)
    json.dumps(doc)
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == int(seg["gpus"].sum())
    assert sum(e["dur"] for e in xs) == pytest.approx(1e6 * float((seg["gpus"] * (seg["end"] - seg["start"])).sum()))
    names = [e for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"]
    assert len(names) == seg["server"].nunique()


def test_gap_table_uses_the_best_reference():
    runs = pd.DataFrame({
        "instance": ["a"] * 3 + ["b"] * 3 + ["c"] * 2,
        "algorithm": ["h", "x", "y"] * 2 + ["h", "x"],
        "status": ["feasible", "optimal", "time limit", "feasible", "time limit", "time limit", "feasible",
                   "time limit"],
        "objective": [12.0, 10.0, 11.0, 30.0, 28.0, np.nan, 5.0, np.nan],
        "lower_bound": [np.nan, 10.0, 9.0, np.nan, 20.0, 25.0, np.nan, np.nan]})
    g = gap_table(runs)
    ref = g.groupby("instance")[["reference", "reference_kind"]].first()
    assert ref.loc["a"].tolist() == [10.0, "optimum"]
    assert ref.loc["b"].tolist() == [25.0, "bound"]          # the largest proven bound, from any run
    assert ref.loc["c"].tolist() == [5.0, "best found"]
    assert g["gap"].round(6).tolist()[:5] == [0.2, 0.0, 0.1, 0.2, 0.12]
    s = gap_summary(g).set_index("algorithm")
    assert s.loc["h", "runs"] == 3 and s.loc["h", "max_gap"] == pytest.approx(0.2)
    assert s.loc["y", "found"] == 1
    fig, ax = plt.subplots()
    assert plot_gaps(g, ax) is ax
    plt.close(fig)
