"""Blox's workload modes (issue 17): its synthetic run times and single-GPU mode, integer-second Poisson gaps, the
inclusive 3000..4000 window, the bursty dual-load workload, and replay of a plain trace."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from tests.cli import exit_code
from tests.sim.shared_data import PHILLY, needs_data

from optsched.cli import main
from optsched.errors import InstanceError
from optsched.generators.workload import (
    BLOX_MAX_DURATION_S,
    BLOX_MIN_DURATION_S,
    HOUR_S,
    MODEL_ALIASES,
    PHILLY_MODELS,
    blox_synthetic_durations,
    bursty_workload,
    philly_workload,
    poisson_arrivals,
    replay_workload,
    resolve_workload,
)


def _frame(n: int, seed: int = 0) -> pd.DataFrame:
    """A Philly-shaped frame: run times inside and outside Blox's filter, GPU counts 1..32."""
    rng = np.random.default_rng(seed)
    dur = rng.uniform(10.0, 300_000.0, n)
    gpus = rng.choice([1, 2, 4, 8, 16, 32], n)
    return pd.DataFrame({"job": np.arange(n), "submit_s": np.sort(rng.uniform(0, 1e6, n)), "duration_s": dur,
                         "gpus": gpus, "gpu_time_s": dur * gpus, "cluster": ["a"] * n})


# -- synthetic run times ----------------------------------------------------------------------------------------
def test_synthetic_run_times_are_80_20_with_the_stated_ranges():
    n = 200_000
    d = blox_synthetic_durations(n, np.random.default_rng(3))
    e = np.log10(d / 60.0)
    assert e.min() >= 1.5 and e.max() <= 4.0
    long = e > 3.0
    assert abs(long.mean() - 0.2) < 0.01  # binomial sd 0.0009
    # each part uniform in its exponent range: mean in the middle, both ends reached
    assert abs(e[~long].mean() - 2.25) < 0.01 and abs(e[long].mean() - 3.5) < 0.01
    assert e[~long].min() < 1.51 and e[~long].max() > 2.99 and e[long].min() < 3.01 and e[long].max() > 3.99
    # about uniform: each tenth of the short range holds about a tenth of the short jobs
    hist, _ = np.histogram(e[~long], bins=10, range=(1.5, 3.0))
    assert np.all(np.abs(hist / (~long).sum() - 0.1) < 0.01)


def test_blox_mode_one_gpu_synthetic_times_integer_gaps():
    fr = _frame(600)
    ours = philly_workload(8.0, seed=1, frame=fr, window=None)
    blox = philly_workload(8.0, seed=1, frame=fr, window=None, mode="blox")
    assert all(j.gpus == 1 for j in blox)
    assert any(j.gpus > 1 for j in ours)
    # the GPU-count cut of Blox's filter plays no part in Blox's mode: only the run-time cut applies
    kept = ((fr["duration_s"] > BLOX_MIN_DURATION_S) & (fr["duration_s"] < BLOX_MAX_DURATION_S)).sum()
    assert blox.meta["trace_jobs"] == kept and ours.meta["trace_jobs"] < kept
    d = np.array([j.duration_alone_s for j in blox])
    assert np.all((d >= 60 * 10 ** 1.5 * (1 - 1e-9)) & (d <= 60 * 10 ** 4 * (1 + 1e-9)))
    trace_d = fr["duration_s"].to_numpy()
    assert not np.isin(np.round(d, 6), np.round(trace_d, 6)).any()  # no trace run time survives
    a = np.array([j.arrival_s for j in blox])
    gaps = np.diff(np.concatenate([[0.0], a]))
    assert np.all(gaps == np.round(gaps)) and np.all(gaps >= 1)
    assert not np.all(np.array([j.arrival_s for j in ours]) == np.round([j.arrival_s for j in ours]))
    assert blox.meta["mode"] == "blox" and ours.meta["mode"] == "ours"


def test_integer_gaps_are_the_continuous_gaps_rounded_up():
    a = poisson_arrivals(500, 30.0, seed=4)
    b = poisson_arrivals(500, 30.0, seed=4, integer_gaps=True)
    assert np.array_equal(np.diff(np.concatenate([[0.0], b])), np.ceil(np.diff(np.concatenate([[0.0], a]))))
    # the mean gap is about 1/lambda + 1/2 s (a rounding up adds half a second on average)
    c = poisson_arrivals(100_000, 60.0, seed=5, integer_gaps=True)
    assert abs(np.mean(np.diff(c)) - (60.0 + 0.5)) < 1.0


@pytest.mark.parametrize("mode, n_tracked, last", [("blox", 1001, 4000), ("ours", 1000, 3999)])
def test_the_windows_of_the_two_modes(mode, n_tracked, last):
    wl = philly_workload(8.0, seed=0, frame=_frame(2500), n_jobs=4100, mode=mode)
    ids = [int(j.id) for j in wl if j.tracked]
    assert len(ids) == n_tracked and min(ids) == 3000 and max(ids) == last
    assert wl.meta["window"] == [3000, last + 1]


def test_an_explicit_window_overrides_the_mode_and_bad_modes_are_refused():
    wl = philly_workload(8.0, seed=0, frame=_frame(300), n_jobs=50, mode="blox", window=(10, 20))
    assert sum(j.tracked for j in wl) == 10
    with pytest.raises(InstanceError, match="mode"):
        philly_workload(8.0, frame=_frame(300), mode="gavel")


def test_modes_share_arrival_and_model_streams():
    fr = _frame(300)
    a = philly_workload(8.0, seed=2, frame=fr, n_jobs=100, window=None)
    b = philly_workload(8.0, seed=2, frame=fr, n_jobs=100, window=None, mode="blox")
    assert [j.model for j in a] == [j.model for j in b]
    # the same exponential draws: Blox's arrivals are ours with every gap rounded up
    ga = np.diff(np.concatenate([[0.0], [j.arrival_s for j in a]]))
    gb = np.diff(np.concatenate([[0.0], [j.arrival_s for j in b]]))
    assert np.array_equal(np.ceil(ga), gb)


# -- bursty dual load -------------------------------------------------------------------------------------------
def test_bursty_paper_variant():
    wl = bursty_workload(6.0, seed=0, frame=_frame(400), n_jobs=300, window=None)
    st = wl.meta["stream"]
    short = [j for j, s in zip(wl, st) if s == "short"]
    main = [j for j, s in zip(wl, st) if s == "main"]
    assert len(main) == 300 and len(short) == wl.meta["short_jobs"] > 0
    assert all(600 <= j.duration_alone_s <= 3600 and j.gpus == 1 for j in short)
    # short jobs arrive only in the first 2 h of every 4 h, at about 2x the main load there
    assert all((j.arrival_s % (4 * HOUR_S)) < 2 * HOUR_S for j in short)
    horizon = max(j.arrival_s for j in main)
    burst_hours = sum(min(2.0, max(0.0, horizon / HOUR_S - 4 * k)) for k in range(int(horizon / HOUR_S / 4) + 2))
    rate = len(short) / burst_hours
    assert 0.6 * 12.0 < rate < 1.4 * 12.0
    # ids in arrival order over both streams
    arr = [j.arrival_s for j in wl]
    assert arr == sorted(arr) and [j.id for j in wl] == [str(i) for i in range(len(wl))]


def test_bursty_code_variant():
    wl = bursty_workload(6.0, seed=1, frame=_frame(400), n_jobs=300, window=None, variant="code")
    st = wl.meta["stream"]
    short = [j for j, s in zip(wl, st) if s == "short"]
    main = [j for j, s in zip(wl, st) if s == "main"]
    assert short and wl.meta["burst_factor"] == 4.0
    for j in short:
        t = j.arrival_s % (12 * HOUR_S)
        assert 4 * HOUR_S <= t < 6 * HOUR_S or 8 * HOUR_S <= t < 12 * HOUR_S
        assert j.arrival_s % 300 == 0
    d = np.array([j.duration_alone_s for j in main])
    assert np.all((d >= 36000 - 1e-6) & (d <= 86400 + 1e-6)) and np.allclose(d, np.round(d))


def test_bursty_window_counts_both_streams_and_bad_options():
    wl = bursty_workload(8.0, seed=0, frame=_frame(400), n_jobs=300, window=(5, 25))
    assert [i for i, j in enumerate(wl) if j.tracked] == list(range(5, 25))
    for kw, field in (({"variant": "both"}, "variant"), ({"factor": -1.0}, "factor"),
                      ({"burst_h": 5.0}, "burst_h"), ({"short_s": (10.0, 5.0)}, "short_s")):
        with pytest.raises(InstanceError) as e:
            bursty_workload(8.0, frame=_frame(50), n_jobs=20, **kw)
        assert e.value.field == field


# -- plain-trace replay -----------------------------------------------------------------------------------------
def test_replay_reads_every_field(tmp_path):
    p = tmp_path / "trace.txt"
    p.write_text("job_id,model,arrival,iterations,gpus\n7,resnet18,0,100,2\n"
                 "# a comment\n\n8,Transformer/Multi30K,12.5,40,1,V100\n")
    wl = replay_workload(p)
    assert [j.id for j in wl] == ["7", "8"]
    a, b = wl.jobs
    assert a.model == MODEL_ALIASES["resnet18"] and a.iteration_time_s == PHILLY_MODELS[a.model]
    assert (a.arrival_s, a.iterations, a.gpus, a.gpu_type) == (0.0, 100.0, 2, "")
    assert (b.arrival_s, b.iterations, b.gpus, b.gpu_type) == (12.5, 40.0, 1, "V100")
    assert all(j.tracked for j in wl)
    assert [j.tracked for j in replay_workload(p, window=(1, 2))] == [False, True]
    assert resolve_workload(f"replay:{p}").jobs == wl.jobs


@pytest.mark.parametrize("line, field", [
    ("1,resnet18,0,100", "line 1"),                      # too few fields
    ("1,resnet18,0,100,1,V100,x", "line 1"),             # too many
    ("1,bert,0,100,1", "line 1.model"),                  # unknown model
    ("1,resnet18,zero,100,1", "line 1"),                 # not a number
    ("1,resnet18,0,100,1.5", "line 1.gpus"),             # not an integer
    ("1,resnet18,0,100,0", "line 1.gpus"),               # no GPU
    ("1,resnet18,-5,100,1", "line 1.arrival_s"),         # negative arrival
    ("1,resnet18,0,0,1", "line 1.iterations"),           # no work
    ("1,resnet18,0,100,1, V100 ", "line 1.gpu_type"),    # stripped to 'V100': accepted, see below
])
def test_replay_bad_lines_name_the_line_and_the_job(tmp_path, line, field):
    p = tmp_path / "bad.txt"
    p.write_text(line + "\n")
    if field == "line 1.gpu_type":
        assert replay_workload(p).jobs[0].gpu_type == "V100"
        return
    with pytest.raises(InstanceError) as e:
        replay_workload(p)
    assert e.value.field == field and e.value.job == "1"


def test_replay_refuses_empty_and_missing_files(tmp_path):
    p = tmp_path / "empty.txt"
    p.write_text("job_id,model,arrival,iterations,gpus\n")
    with pytest.raises(InstanceError, match="no job lines"):
        replay_workload(p)
    with pytest.raises(InstanceError):
        replay_workload(tmp_path / "nope.txt")
    with pytest.raises(InstanceError) as e:
        resolve_workload(f"replay:{p}", load_jph=3.0)
    assert e.value.field == "load"


# -- the CLI's names ----------------------------------------------------------------------------------------------
def test_resolve_workload_names_the_modes():
    fr = _frame(400)
    wl = resolve_workload("philly:blox", philly_frame=fr, n_jobs=100, window=(0, 100))
    assert wl.meta["mode"] == "blox" and all(j.gpus == 1 for j in wl)
    assert resolve_workload("philly", philly_frame=fr, n_jobs=100, window=(0, 100)).meta["mode"] == "ours"
    b = resolve_workload("bursty:ours:code", philly_frame=fr, n_jobs=100, window=(0, 10))
    assert b.meta["variant"] == "code" and b.meta["mode"] == "ours"
    for bad in ("philly:fast", "bursty:blox:loud", "bursty:a:b:c"):
        with pytest.raises(InstanceError) as e:
            resolve_workload(bad, philly_frame=fr)
        assert e.value.field == "workload"


# -- the real trace and the command line ------------------------------------------------------------------------
@needs_data(*PHILLY)
def test_blox_mode_on_the_real_trace_tracks_1001_jobs():
    blox = philly_workload(8.0, seed=0, n_jobs=4100, mode="blox")
    ours = philly_workload(8.0, seed=0, n_jobs=4100)
    assert sum(j.tracked for j in blox) == 1001 and sum(j.tracked for j in ours) == 1000
    assert all(j.gpus == 1 for j in blox) and blox.meta["trace_jobs"] > ours.meta["trace_jobs"]
    assert blox.meta["run_times"].startswith("Blox synthetic") and ours.meta["run_times"] == "trace"


@needs_data(*PHILLY)
def test_cli_runs_blox_mode(tmp_path):
    out = tmp_path / "r.json"
    assert main(["simulate", "philly:blox", "--jobs-window", "0:20", "--jobs", "60", "--servers", "2",
                 "--no-progress", "--quiet", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["summary"]["tracked"] == 20 and all(j["gpus"] == 1 for j in doc["jobs"])


def test_cli_replays_a_plain_trace(tmp_path, capsys):
    p = tmp_path / "t.txt"
    p.write_text("0,resnet50,0,1000,4\n1,a3c,5,10,1\n")
    out = tmp_path / "r.json"
    assert main(["simulate", f"replay:{p}", "--event", "--servers", "1", "--gpus-per-server", "4",
                 "--no-progress", "--quiet", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert sorted(j["id"] for j in doc["jobs"]) == ["0", "1"]
    p.write_text("0,resnet50,0,1000,4\n1,bert,5,10,1\n")
    capsys.readouterr()
    assert exit_code(["simulate", f"replay:{p}", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "line 2.model" in err[0] and "'1'" in err[0]


@needs_data(*PHILLY)
def test_run_one_drops_jobs_larger_than_the_cluster_from_the_bursty_workload():
    # bursty:ours keeps the trace's GPU counts (up to 16): on 2 x 2 GPUs run_one must drop the larger jobs, as it
    # does for philly, instead of handing the engine a job it can never place
    from optsched.experiments import run_one

    r = run_one("bursty:ours", servers=2, gpus_per_server=2, load=4.0, n_jobs=200, window=(0, 10))
    assert r.summary["finished_tracked"] == 10
    assert max(j["gpus"] for j in r.to_dict()["jobs"]) <= 4
