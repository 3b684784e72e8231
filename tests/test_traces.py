"""Workload loaders and generators of optsched.generators.workload (Philly, Pollux, synthetic, replication)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.sim.shared_data import PHILLY, POLLUX, needs_data, skip_without_data

from optsched.errors import InstanceError
from optsched.generators import workload as traces
from optsched.generators.workload import (
    BLOX_MAX_DURATION_S,
    BLOX_MIN_DURATION_S,
    PHILLY_MODELS,
    load_philly,
    load_pollux,
    parse_window,
    philly_jobs,
    philly_workload,
    poisson_arrivals,
    pollux_workload,
    replicate_philly,
    resolve_workload,
    synthetic_workload,
)


@pytest.fixture(scope="module")
def philly():
    skip_without_data(*PHILLY)
    return load_philly()


# -- Philly ----------------------------------------------------------------------------------------------------
def test_philly_row_count_and_columns(philly):
    raw = pd.read_csv(traces.data_path("philly", "philly.csv"))
    assert len(philly) == len(raw) == 82247  # 82,248 lines: a header plus 82,247 jobs
    assert philly["job"].tolist() == list(range(len(philly)))
    assert (philly["gpu_time_s"] == philly["duration_s"] * philly["gpus"]).all()
    # file order keeps the rows; submit order sorts them
    assert philly["duration_s"].tolist()[:5] == raw["duration"].tolist()[:5]
    sub = load_philly(order="submit")
    assert (np.diff(sub["submit_s"].to_numpy()) >= 0).all()
    assert not (np.diff(philly["submit_s"].to_numpy()) >= 0).all()
    assert sorted(sub["duration_s"]) == sorted(philly["duration_s"])


def test_blox_filter(philly):
    kept = philly_jobs("blox", frame=philly)
    assert (kept["duration_s"] > BLOX_MIN_DURATION_S).all() and (kept["duration_s"] < BLOX_MAX_DURATION_S).all()
    assert kept["gpus"].max() <= 16
    expected = ((philly["duration_s"] > BLOX_MIN_DURATION_S) & (philly["duration_s"] < BLOX_MAX_DURATION_S)
                & (philly["gpus"] <= 16)).sum()
    assert len(kept) == expected and kept["job"].tolist() == list(range(len(kept)))
    assert len(philly_jobs("none", frame=philly)) == len(philly)


def test_philly_workload_window_models_and_durations(philly):
    wl = philly_workload(5.0, seed=2, n_jobs=400, window=(100, 250), frame=philly)
    tracked = [i for i, j in enumerate(wl.jobs) if j.tracked]
    assert tracked == list(range(100, 250))
    src = philly_jobs("blox", frame=philly)
    # the trace's run time is the time alone, whatever model a job got
    for j, (_, row) in zip(wl.jobs[:50], src.head(50).iterrows()):
        assert j.duration_alone_s == pytest.approx(row["duration_s"])
        assert j.gpus == row["gpus"]
        assert j.model in PHILLY_MODELS and j.iteration_time_s == PHILLY_MODELS[j.model]
    assert len({j.model for j in wl.jobs}) == len(PHILLY_MODELS)
    arr = np.array([j.arrival_s for j in wl.jobs])
    assert (np.diff(arr) > 0).all() and arr[0] > 0


def test_poisson_retiming_deterministic_per_seed_and_scaled_by_load(philly):
    a = philly_workload(4.0, seed=7, n_jobs=300, window=None, frame=philly)
    b = philly_workload(4.0, seed=7, n_jobs=300, window=None, frame=philly)
    c = philly_workload(4.0, seed=8, n_jobs=300, window=None, frame=philly)
    d = philly_workload(8.0, seed=7, n_jobs=300, window=None, frame=philly)
    assert a == b
    assert [j.arrival_s for j in a] != [j.arrival_s for j in c]
    # common random numbers: double the load, half the arrival times; same models at every load
    assert np.allclose([j.arrival_s / 2 for j in a], [j.arrival_s for j in d])
    assert [j.model for j in a] == [j.model for j in d]


def test_poisson_rate():
    gaps = np.diff(poisson_arrivals(20000, 6.0, seed=3))
    assert gaps.mean() == pytest.approx(600.0, rel=0.03)
    assert np.std(gaps) == pytest.approx(600.0, rel=0.05)  # exponential: sd = mean


def test_replicate_cycles_the_trace(philly):
    small = philly.head(10)
    wl = replicate_philly(35, load_jph=50.0, frame=small)
    assert len(wl) == 35
    d = [j.duration_alone_s for j in wl]
    assert d[0:10] == pytest.approx(d[10:20]) and d[30:35] == pytest.approx(d[0:5])
    assert all(j.tracked for j in wl)


def test_window_beyond_jobs_and_bad_arguments(philly):
    with pytest.raises(InstanceError, match="window"):
        philly_workload(4.0, n_jobs=100, window=(200, 300), frame=philly)
    with pytest.raises(InstanceError, match="load_jph"):
        philly_workload(0.0, frame=philly)
    with pytest.raises(InstanceError, match="seed"):
        philly_workload(1.0, seed=-1, frame=philly)
    with pytest.raises(InstanceError, match="filter"):
        philly_jobs("strict", frame=philly)
    with pytest.raises(InstanceError, match="order"):
        load_philly(order="random")
    with pytest.raises(InstanceError, match="window"):
        parse_window("4000-3000")
    with pytest.raises(InstanceError, match="window"):
        parse_window("10:5")


def test_bad_paths_give_clear_errors(tmp_path):
    with pytest.raises(InstanceError, match="no such file"):
        load_philly(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp,duration\n2017-10-09 07:01:55,66\n")
    with pytest.raises(InstanceError, match="num_gpus"):
        load_philly(bad)
    bad.write_text("timestamp,duration,num_gpus\nnot-a-date,66,1\n")
    with pytest.raises(InstanceError, match="row 2"):
        load_philly(bad)
    with pytest.raises(InstanceError, match="no such file"):
        load_pollux(1, tmp_path / "nope.csv")


def test_missing_data_root_is_reported(monkeypatch, tmp_path):
    monkeypatch.setenv("OPTSCHED_DATA", str(tmp_path))
    with pytest.raises(InstanceError, match="shared data file not found"):
        load_philly()


# -- Pollux ----------------------------------------------------------------------------------------------------
@needs_data(*POLLUX)
@pytest.mark.parametrize("index", range(1, 9))
def test_pollux_workloads_load(index):
    df = load_pollux(index)
    wl = pollux_workload(index, seed=0)
    assert len(df) == len(wl) == 160
    assert [j.gpus for j in wl] == df["num_replicas"].tolist()
    assert [j.arrival_s for j in wl] == pytest.approx(df["time"].astype(float).tolist())
    for j in wl:
        lo, hi = traces.POLLUX_SIZE_GPU_H[j.model]
        assert lo * 3600 <= j.duration_alone_s * j.gpus <= hi * 3600


@needs_data(*POLLUX)
def test_pollux_load_rescaling_and_cap():
    base = pollux_workload(6, seed=1)
    fast = pollux_workload(6, load_jph=40.0, seed=1, max_gpus=8)
    native = 160 / 8.0  # jobs per hour over the 8-hour window
    assert [j.arrival_s for j in fast] == pytest.approx([j.arrival_s * native / 40.0 for j in base])
    assert max(j.gpus for j in fast) == 8
    with pytest.raises(InstanceError, match="pollux"):
        pollux_workload(0)


# -- synthetic and the resolver --------------------------------------------------------------------------------
def test_synthetic_generator_properties():
    wl = synthetic_workload(3000, 10.0, seed=5, gpu_mix={1: 3, 8: 1}, median_duration_s=1800.0, sigma=1.0)
    g = np.array([j.gpus for j in wl])
    assert set(g) == {1, 8} and 0.22 < (g == 8).mean() < 0.28
    d = np.array([j.duration_alone_s for j in wl])
    assert np.median(d) == pytest.approx(1800.0, rel=0.1)
    assert np.std(np.log(d)) == pytest.approx(1.0, rel=0.1)
    assert synthetic_workload(30, 10.0, seed=5) == synthetic_workload(30, 10.0, seed=5)
    assert synthetic_workload(30, 10.0, seed=5) != synthetic_workload(30, 10.0, seed=6)
    with pytest.raises(InstanceError, match="gpu_mix"):
        synthetic_workload(5, 1.0, gpu_mix={0: 1})


@needs_data(*POLLUX)
def test_resolve_workload_kinds(tmp_path, philly):
    from optsched.problems.workload import write_workload
    wl = resolve_workload("philly", load_jph=3.0, n_jobs=3500, philly_frame=philly)
    assert sum(j.tracked for j in wl) == 500  # window 3000:4000 cut at 3500 jobs
    assert len(resolve_workload("pollux:2")) == 160
    syn = resolve_workload("synthetic", n_jobs=20, load_jph=2.0, seed=4)
    p = tmp_path / "w.json"
    write_workload(syn, p)
    back = resolve_workload(str(p), window=(5, 10))
    assert [j.tracked for j in back] == [5 <= i < 10 for i in range(20)]
    assert len(resolve_workload(str(p), n_jobs=7)) == 7
    for bad in ("pollux:x", "nothere.json", ""):
        with pytest.raises(InstanceError):
            resolve_workload(bad)


def test_no_data_folder_is_one_clear_error(monkeypatch, tmp_path):
    # no OPTSCHED_DATA, no checkout to search beside, and a current directory with no shared/data above it
    from optsched import data

    monkeypatch.delenv("OPTSCHED_DATA", raising=False)
    monkeypatch.setattr(data, "checkout_root", lambda: None)
    monkeypatch.chdir(tmp_path)
    if data.find_data_root() is not None:  # a shared/data above the temporary folder: nothing to test here
        pytest.skip("a shared/data folder exists above the temporary folder")
    with pytest.raises(InstanceError, match="OPTSCHED_DATA") as ei:
        load_philly()
    assert ei.value.field == "data"


def test_data_folder_rules(monkeypatch, tmp_path):
    # explicit folder, then $OPTSCHED_DATA, then shared/data beside the checkout / above the current directory
    from optsched import data

    a, b = tmp_path / "a", tmp_path / "b" / "shared" / "data"
    a.mkdir()
    b.mkdir(parents=True)
    (tmp_path / "b" / "repo" / "sub").mkdir(parents=True)
    monkeypatch.setenv("OPTSCHED_DATA", str(a))
    assert data.data_root() == a and data.data_root(b) == b
    with pytest.raises(InstanceError, match="not a directory"):
        data.data_root(tmp_path / "nope")
    monkeypatch.setenv("OPTSCHED_DATA", str(tmp_path / "nope"))
    with pytest.raises(InstanceError, match="OPTSCHED_DATA"):
        data.data_root()
    monkeypatch.delenv("OPTSCHED_DATA")
    monkeypatch.setattr(data, "checkout_root", lambda: tmp_path / "b" / "repo")
    assert data.data_root().resolve() == b.resolve()
    monkeypatch.setattr(data, "checkout_root", lambda: None)
    monkeypatch.chdir(tmp_path / "b" / "repo" / "sub")
    assert data.data_root().resolve() == b.resolve()
