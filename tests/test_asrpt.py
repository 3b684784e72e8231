"""A-SRPT and its baselines (paper 001, Alg. 1 and section V-A-1-d): hand-computed tiny cases, the delay window,
server selection, the mixed-parallelism performance model, registration, determinism, and the recurring-job
workloads (Philly mapping, generator, 80/20 prediction)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.sim.shared_data import PHILLY, needs_data

from optsched.errors import InstanceError
from optsched.generators.recurring import (
    config_names,
    map_models,
    offered_load,
    rescale_to_load,
    spec_of,
    split_train_test,
    synthetic_recurring_frame,
    to_workload,
)
from optsched.models import catalogue_job
from optsched.perf.mixed import MixedPerf
from optsched.perf.pipeline import Network, alpha
from optsched.predict import predict_frame
from optsched.problems.workload import Workload, WorkloadJob
from optsched.sim import build_scheduling, simulate
from optsched.sim.asrpt import ASRPT, AlphaMinCache, run_asrpt, run_policy, select_servers
from optsched.sim.registry import scheduler_names
from optsched.sim.state import Job, Placement


# -- hand-computed cases without a pipeline spec (profiled time 1 s/iteration, one server of 2 GPUs) -------------
def _abc(with_c: bool = True) -> Workload:
    jobs = [WorkloadJob("a", 0, 2, 10, 1.0, predicted_iterations=10),
            WorkloadJob("b", 0, 1, 4, 1.0, predicted_iterations=4)]
    if with_c:
        jobs.append(WorkloadJob("c", 0, 1, 20, 1.0, predicted_iterations=20))
    return Workload(tuple(jobs))


def _run(name, wl, servers=1, gpus=2, **kw):
    r = simulate(wl, servers=servers, gpus_per_server=gpus, scheduler=name, mode="event", **kw)
    return {j.id: (j.first_start_s, j.completion_s) for j in r.job_objects}, r


def test_asrpt_two_jobs_by_hand():
    # virtual sizes (g/G) n~ alpha: a = 2/2*10 = 10, b = 1/2*4 = 2; SRPT: b done at 2, a at 12.
    # b starts at 2 (1 GPU) and ends at 6; a enters the queue at 12 and runs 12-22.
    times, _ = _run("a-srpt", _abc(False))
    assert times == {"a": (12.0, 22.0), "b": (2.0, 6.0)}


def test_asrpt_three_jobs_by_hand_and_perfect_equal():
    # sizes a 10, b 2, c 10; SRPT: b at 2, then a (tie with c: same release, smaller id) at 12, c at 22.
    times, _ = _run("a-srpt", _abc())
    assert times == {"b": (2.0, 6.0), "a": (12.0, 22.0), "c": (22.0, 42.0)}
    perfect, _ = _run("a-srpt-perfect", _abc())
    assert perfect == times  # predictions are exact here


@pytest.mark.parametrize("name, expected", [
    # strict order b(4) < a(10) < c(20): a blocks c until b ends at 4
    ("spjf", {"b": (0.0, 4.0), "a": (4.0, 14.0), "c": (14.0, 34.0)}),
    # workloads a 20, b 4, c 20; a before c by position; strict
    ("spwf", {"b": (0.0, 4.0), "a": (4.0, 14.0), "c": (14.0, 34.0)}),
    # work-conserving: b, then c fits (a does not), a waits for both
    ("wcs-duration", {"b": (0.0, 4.0), "c": (0.0, 20.0), "a": (20.0, 30.0)}),
    ("wcs-workload", {"b": (0.0, 4.0), "c": (0.0, 20.0), "a": (20.0, 30.0)}),
    # submission order (all at 0, positions a, b, c): a takes both GPUs, then b and c together
    ("wcs-subtime", {"a": (0.0, 10.0), "b": (10.0, 14.0), "c": (10.0, 30.0)}),
])
def test_baselines_by_hand(name, expected):
    times, _ = _run(name, _abc())
    assert times == expected


def test_unseen_job_goes_straight_to_the_queue():
    # b has no prediction (n~ = 0): it completes at once on the virtual machine and starts at its arrival
    wl = Workload((WorkloadJob("a", 0, 1, 10, 1.0, predicted_iterations=10),
                   WorkloadJob("b", 3, 1, 50, 1.0)))
    times, r = _run("a-srpt", wl)
    assert times["b"] == (3.0, 53.0)
    assert times["a"] == (5.0, 15.0)  # virtual size 1/2*10 = 5


def test_strict_fifo_head_of_line_blocking():
    # a (1 GPU, long) runs; b (2 GPUs) is at the head and does not fit; c (1 GPU) entered the queue after b and
    # must not start before b even though one GPU is free (no backfilling)
    wl = Workload((WorkloadJob("a", 0, 1, 100, 1.0, predicted_iterations=1),
                   WorkloadJob("b", 1, 2, 10, 1.0, predicted_iterations=1),
                   WorkloadJob("c", 2, 1, 5, 1.0, predicted_iterations=1)))
    times, r = _run("a-srpt", wl)
    assert times["b"][0] == times["a"][1] == 100.5
    assert times["c"][0] >= times["b"][0]


# -- server selection ------------------------------------------------------------------------------------------
def test_select_most_and_least():
    free = np.array([4, 1, 3, 0, 2])
    assert select_servers(free, 5, True) == [(0, 4), (2, 1)]
    assert select_servers(free, 5, False) == [(1, 1), (4, 2), (2, 2)]
    assert select_servers(np.array([2, 2]), 3, True) == [(0, 2), (1, 1)]  # ties by index
    with pytest.raises(InstanceError):
        select_servers(free, 11, True)


def test_select_servers_agrees_with_placement_module():
    from optsched.placement import select_least, select_most

    rng = np.random.default_rng(0)
    for _ in range(200):
        free = rng.integers(0, 9, size=int(rng.integers(1, 7)))
        if free.sum() == 0:
            continue
        g = int(rng.integers(1, free.sum() + 1))
        names = {str(i): int(f) for i, f in enumerate(free)}
        for most, ref in ((True, select_most), (False, select_least)):
            assert {str(s): n for s, n in select_servers(free, g, most)} == ref(names, g)


def test_non_comm_heavy_multi_gpu_job_uses_select_least():
    # spec-less jobs are never communication-heavy; three unseen blockers (1, 3, 2 GPUs) start at 0
    jobs = [WorkloadJob("x0", 0, 1, 1000, 1.0), WorkloadJob("x1", 0, 3, 1000, 1.0),
            WorkloadJob("x2", 0, 2, 1000, 1.0), WorkloadJob("j", 1, 2, 10, 1.0)]
    # j (unseen) is popped at 1 and takes SelectLeast servers of the free counts the blockers left
    r2 = simulate(Workload(tuple(jobs)), servers=3, gpus_per_server=4, scheduler="a-srpt", mode="event")
    j = {x.id: x for x in r2.job_objects}["j"]
    free = [4, 4, 4]
    for x in r2.job_objects[:3]:
        for s, n in x.segments[0][2].as_dict().items():
            free[s] -= n
    assert j.segments[0][2].as_dict() == dict(select_servers(np.array(free), 2, False))
    assert r2.policy.records["j"]["comm_heavy"] is False and j.first_start_s == 1.0


# -- the communication-heavy branch and the delay window --------------------------------------------------------
def _window_case(tau):
    """Two 4-GPU servers; two 1-GPU blockers (unseen, so they start at 0), then a comm-heavy VGG19:dp4 job at
    t=1: SelectMost gives (3, 1), alpha >> 1.5 alpha~min. The blocker on server 1 ends at 50.

    ``comm_heavy=0`` makes every job take the communication-heavy branch (a 1-GPU job never qualifies at 1.5),
    so the blockers use SelectMost and land on different servers; with threshold 0 the line-12 test
    alpha / alpha~min <= 0 never passes, so h starts only on improvement or at the end of its window."""
    net = Network.from_gbps(4, 10.0, 300.0)
    cache = AlphaMinCache(net)
    spec = catalogue_job("VGG19:dp4")
    one = catalogue_job("ResNet152:1gpu")
    t1 = cache.alpha_tilde_min_ms(one) / 1000
    atmin = cache.alpha_tilde_min_ms(spec) / 1000
    jobs = [WorkloadJob("b0", 0, 1, 1000 / t1, t1, spec=one), WorkloadJob("b1", 0, 1, 50 / t1, t1, spec=one),
            WorkloadJob("h", 1, 4, 100, atmin, predicted_iterations=100, spec=spec)]
    r = simulate(Workload(tuple(jobs)), servers=2, gpus_per_server=4, scheduler="a-srpt", mode="event",
                 perf=MixedPerf(4, 10.0, 300.0), tau=tau, comm_heavy=0.0)
    return {j.id: j for j in r.job_objects}, atmin, cache, r.policy.records


def test_comm_heavy_waits_and_starts_early_on_improvement():
    jobs, atmin, cache, records = _window_case(tau=1000.0)
    h, m = jobs["h"], records["h"]
    assert m["comm_heavy"] is True
    vsize = 4 / 8 * 100 * atmin
    assert math.isclose(m["popped_s"], 1 + vsize)
    assert m["kappa_s"] > 1.5 * atmin                     # the first (3, 1) attempt is too slow
    assert math.isclose(h.first_start_s, jobs["b1"].completion_s)  # early start when server 1 empties
    assert h.first_start_s - m["popped_s"] <= m["window_s"]
    assert h.segments[0][2].n_servers == 1 and math.isclose(h.iteration_now_s, atmin)
    assert m["early_start"] is True


def test_comm_heavy_window_expires_with_latest_placement():
    jobs, atmin, cache, records = _window_case(tau=0.5)
    h, m = jobs["h"], records["h"]
    # window 0.5 * p~ ends long before the blocker (t=50): start at its end on the fragmented placement
    assert math.isclose(h.first_start_s, m["popped_s"] + m["window_s"])
    assert h.first_start_s < jobs["b1"].completion_s
    assert h.segments[0][2].n_servers == 2 and m["early_start"] is False


def test_tau_zero_means_no_wait():
    jobs, atmin, cache, records = _window_case(tau=0.0)
    h, m = jobs["h"], records["h"]
    assert m["window_s"] == 0.0 and h.first_start_s == m["popped_s"]
    assert h.segments[0][2].n_servers == 2


# -- performance model -----------------------------------------------------------------------------------------
def test_mixed_perf_is_eq7():
    spec = catalogue_job("BERT-large:pp4x2")
    net = Network.from_gbps(8, 10.0, 300.0)
    m = MixedPerf(8, 10.0, 300.0)
    stages = {0: (2, 2, 0, 0), 3: (0, 0, 2, 1), 5: (0, 0, 0, 1)}
    job = Job("j", 0, 8, 10, 1.0, spec=spec)
    got = m.alone_time_s(job, Placement.of({0: 4, 3: 3, 5: 1}, stages=stages))
    assert math.isclose(got, alpha(spec, net, stages) / 1000)
    plain = Job("p", 0, 2, 10, 0.7)
    assert m.alone_time_s(plain, Placement.of({0: 1, 1: 1})) == 0.7  # no spec: profiled time
    with pytest.raises(InstanceError):
        MixedPerf(8, 0.0)


def test_policy_placements_carry_stage_counts_matching_the_job():
    spec = catalogue_job("ResNet152:pp4x2")
    run = run_policy("wcs-subtime", [("a", 0.0, spec, 10), ("b", 0.0, catalogue_job("VGG19:1gpu"), 10)], (3, 4))
    for jid, pl in run.first_placements().items():
        cols = list(pl.values())
        assert [sum(c[s] for c in cols) for s in range(len(cols[0]))] == list(
            (spec if jid == "a" else catalogue_job("VGG19:1gpu")).replicas)


# -- registration, options, determinism -----------------------------------------------------------------------
def test_names_registered_and_options():
    for name in scheduler_names("a-srpt"):
        assert build_scheduling(name).name == name
    assert build_scheduling("a-srpt", tau=3).tau == 3.0
    with pytest.raises(InstanceError):
        build_scheduling("a-srpt", tau=-1)
    with pytest.raises(InstanceError):
        build_scheduling("a-srpt", predictor="oracle")
    with pytest.raises(InstanceError):
        build_scheduling("a-srpt-perfect", predictor="workload")


def _small_recurring(n=120, seed=3, share=None):
    fr = map_models(synthetic_recurring_frame(n, seed=seed), seed=seed, single_gpu_share=share)
    tr, te = split_train_test(fr, 0.5)
    pred = predict_frame(tr, te, "median")
    return rescale_to_load(to_workload(te, pred), 32, 1.5)


@pytest.mark.parametrize("name", scheduler_names("a-srpt"))
def test_every_policy_deterministic_and_complete(name):
    wl = _small_recurring()
    a = simulate(wl, servers=4, gpus_per_server=8, scheduler=name, perf=MixedPerf(8), mode="event", seed=1)
    b = simulate(wl, servers=4, gpus_per_server=8, scheduler=name, perf=MixedPerf(8), mode="event", seed=1)
    assert a.jobs["completion_s"].tolist() == b.jobs["completion_s"].tolist()
    assert a.jobs["completion_s"].notna().all()
    assert (a.jobs["preemptions"] == 0).all()


def test_fitted_predictor_object_matches_precomputed_predictions():
    from optsched.predict import MedianPredictor

    fr = map_models(synthetic_recurring_frame(200, seed=5), seed=5)
    tr, te = split_train_test(fr, 0.5)
    pred = predict_frame(tr, te, "median")
    p = MedianPredictor().fit(tr[["group_id", "user_id", "iterations"]])
    wl_pre = to_workload(te, pred)
    wl_obj = to_workload(te, None)
    r1 = simulate(wl_pre, servers=4, gpus_per_server=8, scheduler="a-srpt", perf=MixedPerf(8), mode="event")
    r2 = simulate(wl_obj, servers=4, gpus_per_server=8, scheduler=ASRPT(predictor=p), perf=MixedPerf(8),
                  mode="event")
    assert r1.jobs["completion_s"].tolist() == r2.jobs["completion_s"].tolist()


def test_run_asrpt_offline_api():
    spec = catalogue_job("Inception-V3:dp4")
    run = run_asrpt([("a", 0.0, spec, 100, 100), ("b", 5.0, catalogue_job("VGG19:1gpu"), 10, 10)], (2, 4))
    done, start, alpha = run.by_id("completion_s"), run.by_id("first_start_s"), run.by_id("alpha_s")
    assert set(done) == {"a", "b"}
    assert math.isclose(run.jobs["jct_s"].sum(), done["a"] + done["b"] - 5.0)
    for k in done:
        assert math.isclose(done[k] - start[k], {"a": 100, "b": 10}[k] * alpha[k], rel_tol=1e-9)
    with pytest.raises(InstanceError):
        run_asrpt([("a", 0.0, "not a spec", 1)], (1, 4))


# -- recurring workloads ---------------------------------------------------------------------------------------
def test_mapping_rules():
    fr = synthetic_recurring_frame(600, seed=7)
    m = map_models(fr, seed=7)
    assert (m.groupby("group_id")["config"].nunique() == 1).all()
    single = m["trace_gpus"] == 1
    assert (m.loc[single, "gpus"] == 1).all()
    d, g = m.loc[~single, "trace_gpus"], m.loc[~single, "gpus"]
    assert ((g >= d / 2) & (g <= 2 * d)).all()  # every demand in the generator's mix has a config within 2x
    assert np.allclose(m["iterations"] * m["atmin_s"], m["duration_s"])
    for share in (0.0, 0.5, 1.0):
        ms = map_models(fr, seed=7, single_gpu_share=share)
        got = float((ms["gpus"] == 1).mean())
        assert got >= share - 1e-12
        # groups are assigned whole: the overshoot is below one group's size
        assert got - share <= ms["group_id"].value_counts().max() / len(ms)
    assert map_models(fr, seed=7).equals(m)
    with pytest.raises(InstanceError):
        map_models(fr, single_gpu_share=1.5)


def test_config_pools():
    assert all(spec_of(c).gpus == 1 for c in config_names(True))
    assert all(spec_of(c).gpus > 1 for c in config_names(False))


def test_predictions_zero_for_unseen_and_load_rescaling():
    fr = map_models(synthetic_recurring_frame(400, seed=2), seed=2)
    tr, te = split_train_test(fr, 0.8)
    pred = predict_frame(tr, te, "mean")
    unseen = ~te["group_id"].isin(set(tr["group_id"]))
    assert (pred[unseen.to_numpy()] == 0).all() and (pred[~unseen.to_numpy()] > 0).all()
    wl = to_workload(te, pred)
    assert [j.predicted_iterations is None for j in wl] == unseen.tolist()
    wl2 = rescale_to_load(wl, 64, 0.8)
    assert math.isclose(offered_load(wl2, 64), 0.8)
    assert wl2.jobs[0].arrival_s == 0.0


@needs_data(*PHILLY)
def test_philly_frame_group_rules():
    from optsched.generators.recurring import philly_frame
    a = philly_frame("vc-gpus-dur")
    b = philly_frame("vc-gpus")
    assert len(a) == len(b) == 82247
    assert a["group_id"].nunique() > b["group_id"].nunique()
    assert (a["user_id"] == b["user_id"]).all()
    with pytest.raises(InstanceError):
        philly_frame("by-magic")


def test_rolling_predictions_use_only_earlier_jobs():
    from optsched.predict import rolling_predictions

    fr = map_models(synthetic_recurring_frame(300, seed=6), seed=6)
    period = 5 * 86400.0
    pred = rolling_predictions(fr, "mean", period_s=period)
    start = fr["submit_s"].iloc[0]
    for i in range(0, len(fr), 7):
        cut = start + np.floor((fr["submit_s"].iloc[i] - start) / period) * period
        hist = fr[(fr["submit_s"] < cut) & (fr["group_id"] == fr["group_id"].iloc[i])]
        want = hist["iterations"].mean() if len(hist) else 0.0
        assert math.isclose(pred[i], want, rel_tol=1e-9)


def test_cli_simulate_a_srpt_on_a_workload_file(tmp_path):
    import json
    import subprocess
    import sys

    wl = tmp_path / "abc.csv"
    wl.write_text("id,arrival_s,gpus,iterations,iteration_time_s,predicted_iterations\n"
                  "a,0,2,10,1,10\nb,0,1,4,1,4\nc,0,1,20,1,20\n")
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "optsched", "simulate", str(wl), "--scheduler", "a-srpt", "--event",
                           "--servers", "1", "--gpus-per-server", "2", "--no-progress", "--quiet", "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    jobs = {j["id"]: (j["first_start_s"], j["completion_s"]) for j in json.loads(out.read_text())["jobs"]}
    assert jobs == {"b": (2.0, 6.0), "a": (12.0, 22.0), "c": (22.0, 42.0)}  # the hand-computed case above
    # --perf mixed takes the cluster's g = 2 (jobs without a pipeline spec keep their profiled time)
    out2 = tmp_path / "r2.json"
    ok = subprocess.run([sys.executable, "-m", "optsched", "simulate", str(wl), "--scheduler", "a-srpt", "--event",
                         "--servers", "1", "--gpus-per-server", "2", "--perf", "mixed", "--no-progress", "--quiet",
                         "-o", str(out2)], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(out2.read_text())["config"]["perf"]["gpus_per_server"] == 2
    bad = subprocess.run([sys.executable, "-m", "optsched", "simulate", str(wl), "--scheduler", "a-srpt",
                          "--event", "--servers", "1", "--gpus-per-server", "2", "--perf", "nosuch", "--quiet"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
