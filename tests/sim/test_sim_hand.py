"""Tiny traces whose JCTs are computed by hand (the arithmetic is in the comments).

Unless stated otherwise: the constant performance model (iteration time = the profiled one on one server),
no restore overhead, iteration time 1 s, so "iterations" read as seconds of work.
"""

from __future__ import annotations

import pytest

from optsched.cluster import Cluster, Server
from optsched.perf.constant import ConstantPerf
from optsched.sim import Workload, WorkloadJob, simulate

# a: 2 GPUs, 100 s of work, arrives at 0; b: 1 GPU, 50 s, at 10; c: 1 GPU, 30 s, at 20. One server, 2 GPUs.
ABC = Workload((WorkloadJob("a", 0, 2, 100, 1.0), WorkloadJob("b", 10, 1, 50, 1.0),
                WorkloadJob("c", 20, 1, 30, 1.0)))


def run(wl=ABC, **kw):
    kw.setdefault("servers", 1)
    kw.setdefault("gpus_per_server", 2)
    r = simulate(wl, **kw)
    return {row.id: (row.first_start_s, row.completion_s, row.preemptions) for row in r.jobs.itertuples()}, r


@pytest.mark.parametrize("mode", ["event", "round"])
def test_fifo(mode):
    # a runs 0-100 (b and c wait behind it: FIFO, no backfilling); at 100 both b and c start:
    # b 100-150, c 100-130. JCT a 100, b 140, c 110 -> average 350/3. Round mode with 10 s rounds: the same,
    # every event falls on a round boundary.
    got, r = run(scheduler="fifo", mode=mode, round_s=10)
    assert got == {"a": (0, 100, 0), "b": (100, 150, 0), "c": (100, 130, 0)}
    assert r.summary["avg_jct_s"] == pytest.approx(350 / 3)
    assert r.summary["makespan_s"] == 150 and r.summary["preemptions"] == 0


def test_las_event_mode():
    # t=10: attained a 10, b 0 -> b first; b needs 1 GPU, none free -> preempt a (the only, lowest-priority
    #       running job); b starts (1 GPU stays idle: a needs 2).
    # t=20: c arrives. attained c 0, a 10, b 10 (tie -> arrival: a before b). c fits in the free GPU; a needs 2,
    #       its only lower-priority victim b frees 1 -> not enough, nobody is preempted; stop.
    # t=50: c done (30 s). b has done 40 (10 left), a 10. a first: preempt b -> a runs 50-140 (90 left).
    #       (event mode: no decision until the next event, a's completion)
    # t=140: b resumes, done at 150. JCT a 140, b 140, c 30.
    got, r = run(scheduler="las", mode="event")
    assert got == {"a": (0, 140, 1), "b": (10, 150, 1), "c": (20, 50, 0)}
    assert r.summary["avg_jct_s"] == pytest.approx(310 / 3)


def test_las_round_mode_round_robin():
    # rounds every 10 s; LAS re-sorts by attained wall-clock service each round (ties -> arrival).
    # t=0  a runs.                  t=10 b(0) < a(10): b preempts a.        t=20 c(0) fits in the idle GPU.
    # t=30 a(10) < c(10, later) < b(20): a preempts b and c.               t=40 c(10) preempts a; b(20) fits.
    # t=50 a(20) < c(20) < b(30): a preempts b, c.                          t=60 c(20) preempts a; b(30) fits.
    # t=70 c completes (work 20-30, 40-50, 60-70). a(30) < b(40): a preempts b (b has 10 left).
    # t=80 a(40) = b(40): a first (arrival), keeps running.  t=90 b(40) < a(50): b preempts a, runs 90-100.
    # t=100 a resumes with 50 left (work 0-10, 30-40, 50-60, 70-90): done at 150.
    # preemptions: a at 10, 40, 60, 90 (4); b at 30, 50, 70 (3); c at 30, 50 (2).
    got, _ = run(scheduler="las", mode="round", round_s=10)
    assert got == {"a": (0, 150, 4), "b": (10, 100, 3), "c": (20, 70, 2)}


@pytest.mark.parametrize("mode", ["event", "round"])
def test_srtf(mode):
    # t=10: remaining a 90, b 50 -> b preempts a (1 GPU idle: a needs 2).
    # t=20: remaining c 30, b 40, a 90: c takes the idle GPU; a blocked.
    # t=50: c done. b (10 left) still ahead of a; a needs 2, only 1 free, b is not a victim (higher priority).
    # t=60: b done; a resumes with 90 left -> 150. JCT a 150, b 50, c 30.
    got, r = run(scheduler="srtf", mode=mode, round_s=10)
    assert got == {"a": (0, 150, 1), "b": (10, 60, 0), "c": (20, 50, 0)}
    assert r.summary["avg_jct_s"] == pytest.approx(230 / 3)


def test_tiresias_round_mode():
    # one threshold at 50 GPU-seconds; 10 s rounds. a holds 2 GPUs: 20 GPU-s at t=10, 40 at t=20 (queue 0,
    # FIFO inside the queue: a before b and c), 60 at t=30 -> queue 1. At t=30 b and c (queue 0) go first:
    # b preempts a, c fits. b 30-80, c 30-60. At 60 a still waits (b, in queue 0, is ahead and a needs 2).
    # At 80 b completes, a resumes with 70 left (it did 30): done at 150. JCT a 150, b 70, c 40.
    got, _ = run(scheduler={"name": "tiresias", "thresholds_gpu_s": [50]}, mode="round", round_s=10)
    assert got == {"a": (0, 150, 1), "b": (30, 80, 0), "c": (30, 60, 0)}


def test_tiresias_event_mode_threshold_crossing_is_an_event():
    # a crosses 50 GPU-s at t=25 (2 GPUs x 25 s): a decision then. b and c start at 25 (b preempts a):
    # b 25-75, c 25-55. a did 25, resumes at 75 with 75 left: done at 150. JCT a 150, b 65, c 35.
    got, _ = run(scheduler={"name": "tiresias", "thresholds_gpu_s": [50]}, mode="event")
    assert got == {"a": (0, 150, 1), "b": (25, 75, 0), "c": (25, 55, 0)}


def test_tiresias_time_service_and_two_thresholds():
    # service="time" (wall-clock seconds held), thresholds 15 and 1000 s; event mode, so every threshold
    # crossing of a running job is a decision.
    # t=10: b arrives; a (10 s held) and b are both in queue 0, FIFO inside it: a keeps running.
    # t=15: a crosses 15 -> queue 1; b (queue 0) goes first and preempts a; a (needs 2) cannot use the idle GPU.
    # t=20: c arrives into queue 0 and takes the idle GPU.
    # t=30: b crosses (held 15-30) -> queue 1, behind a (FIFO in the queue: a arrived first). a needs 2 GPUs;
    #       its only lower-priority running victim is b (c is still in queue 0) -> 1 GPU, not enough: no change.
    # t=35: c crosses (20-35) -> queue 1. Order a, b, c (arrivals). a preempts c then b (lowest first) and
    #       runs from 35 with 85 left (it did 15) -> 120.
    # t=120: b (30 left: it did 15-35) and c (15 left: 20-35) both start: b 120-150, c 120-135.
    got, _ = run(scheduler={"name": "tiresias", "thresholds_gpu_s": [15, 1000], "service": "time"}, mode="event")
    assert got == {"a": (0, 120, 1), "b": (15, 150, 1), "c": (20, 135, 1)}


def test_restore_overhead_las_event():
    # as test_las_event_mode with a 5 s checkpoint-restore stall on every resume (not on first starts):
    # t=50: a resumes, stalls to 55, 90 left -> 145. b (10 left) resumes at 145, stalls to 150, done 160.
    got, r = run(scheduler="las", mode="event", restore_s=5)
    assert got == {"a": (0, 145, 1), "b": (10, 160, 1), "c": (20, 50, 0)}
    # the segments: a's second one holds GPUs 50-145 for 90 iterations
    a = next(j for j in r.job_objects if j.id == "a")
    assert [(s, e, it) for s, e, _, it in a.segments] == [(0, 10, 10), (50, 145, 90)]


def test_round_vs_event_mode():
    # 2 GPUs. a: 1 GPU 100 s at 0; b: 1 GPU 50 s at 10.
    # event mode: b starts on arrival (10-60). round mode (300 s): b waits for the round at 300 (300-350),
    # even though a GPU is free, and a's completion at 100 is exact (not rounded up).
    wl = Workload((WorkloadJob("a", 0, 1, 100, 1.0), WorkloadJob("b", 10, 1, 50, 1.0)))
    ev, _ = run(wl, mode="event")
    rd, r = run(wl, mode="round")  # round_s defaults to 300
    assert ev == {"a": (0, 100, 0), "b": (10, 60, 0)}
    assert rd == {"a": (0, 100, 0), "b": (300, 350, 0)}
    assert r.summary["avg_responsiveness_s"] == pytest.approx((0 + 290) / 2)


def test_freed_gpus_idle_until_next_round():
    # 1 GPU, rounds of 300 s. a (100 s) at 0; b (50 s) at 0 waits. a completes at 100; b starts at the round
    # at 300, not at 100. JCT b = 350.
    wl = Workload((WorkloadJob("a", 0, 1, 100, 1.0), WorkloadJob("b", 0, 1, 50, 1.0)))
    got, _ = run(wl, gpus_per_server=1)
    assert got == {"a": (0, 100, 0), "b": (300, 350, 0)}


def test_cross_server_penalty_and_placements():
    # 2 servers x 2 GPUs. j4 needs 4 GPUs: consolidated takes both whole servers, 1.25 x slower: 100 -> 125.
    # Then j2 (2 GPUs, arrives 1) fits in one server under consolidated (100 s); scattered spreads it over both
    # servers (one GPU each) -> 125 s. first-free fills server 0 first -> one server, 100 s.
    wl = Workload((WorkloadJob("j4", 0, 4, 100, 1.0), WorkloadJob("j2", 1, 2, 100, 1.0)))
    for placement, j2_time in (("consolidated", 100), ("first-free", 100), ("scattered", 125)):
        got, r = run(wl, servers=2, gpus_per_server=2, placement=placement, mode="event")
        assert got["j4"] == (0, 125, 0)
        assert got["j2"] == (125, 125 + j2_time, 0), placement
    # no penalty with a factor of 1
    got, _ = run(wl, servers=2, gpus_per_server=2, mode="event", perf=ConstantPerf(1.0))
    assert got["j4"] == (0, 100, 0)


def test_consolidated_exact_fit_then_tightest_server():
    # servers with 4, 2, 3 GPUs. x (2 GPUs) goes to the exact fit (server 1); y (3 GPUs) to server 2 (exact
    # fit); z (1 GPU) to the server with the fewest free GPUs >= 1: server 0 (4 free). All start at 0.
    cl = Cluster((Server("s0", 4), Server("s1", 2), Server("s2", 3)))
    wl = Workload((WorkloadJob("x", 0, 2, 10, 1.0), WorkloadJob("y", 0, 3, 10, 1.0), WorkloadJob("z", 0, 1, 10, 1.0)))
    r = simulate(wl, cl, mode="event")
    where = {j.id: j.segments[0][2].as_dict() for j in r.job_objects}
    assert where == {"x": {1: 2}, "y": {2: 3}, "z": {0: 1}}


def test_anti_starvation_bump_srtf():
    # 1 GPU, SRTF, starvation_s = 100, event mode (a bump is an event). L: 500 s at 0; s1: 60 s at 0; s2: 60 s
    # at 30. Without the bump: s1 0-60, s2 60-120, L 120-620.
    # With it: s1 0-60; s2 starts at 60; at 100 L has waited 100 s -> priority 1 (for good, as in Blox) ->
    # preempts s2 (20 left); L runs from 100; s2 has waited since 100 -> bumped at 200 -> both have priority 1,
    # SRTF among them: s2 (20 left) preempts L (400 left); s2 200-220; L resumes 220 -> 620.
    wl = Workload((WorkloadJob("L", 0, 1, 500, 1.0), WorkloadJob("s1", 0, 1, 60, 1.0),
                   WorkloadJob("s2", 30, 1, 60, 1.0)))
    plain, _ = run(wl, gpus_per_server=1, scheduler="srtf", mode="event")
    assert plain == {"L": (120, 620, 0), "s1": (0, 60, 0), "s2": (60, 120, 0)}
    got, _ = run(wl, gpus_per_server=1, scheduler={"name": "srtf", "starvation_s": 100}, mode="event")
    assert got == {"L": (100, 620, 1), "s1": (0, 60, 0), "s2": (60, 220, 1)}


def test_accept_k():
    # 4 GPUs, SRTF, event mode. a and b: 4 GPUs, 100 s, at 0; c: 1 GPU, 10 s, at 0.
    # accept-all: c is shortest -> c 0-10 (a needs 4, blocked); a 10-110, b 110-210. JCT c = 10.
    # accept-1.0: demand 0 <= 4 admits a, 4 <= 4 admits b (the check precedes each add: overshoot by one job,
    # as Blox's loadBasedAccept), 8 > 4 holds c. a 0-100. At 100 demand is b's 4 <= 4: c is admitted and, being
    # shorter, goes first: c 100-110, b 110-210. JCT c = 110, and c's admission time is 100.
    wl = Workload((WorkloadJob("a", 0, 4, 100, 1.0), WorkloadJob("b", 0, 4, 100, 1.0),
                   WorkloadJob("c", 0, 1, 10, 1.0)))
    allr, _ = run(wl, gpus_per_server=4, scheduler="srtf", mode="event")
    assert allr == {"a": (10, 110, 0), "b": (110, 210, 0), "c": (0, 10, 0)}
    for adm in ("accept-1.0", {"name": "accept-k", "k": 1.0}):
        got, r = run(wl, gpus_per_server=4, scheduler="srtf", mode="event", admission=adm)
        assert got == {"a": (0, 100, 0), "b": (110, 210, 0), "c": (100, 110, 0)}
        assert r.jobs.set_index("id").loc["c", "admitted_s"] == 100
    # k = 1.5: limit 6; 0 <= 6 admits a, 4 <= 6 admits b, 8 > 6 holds c: the same as k = 1.0 here;
    # k = 2.0 (limit 8): 8 <= 8 admits c as well -> like accept-all.
    got, _ = run(wl, gpus_per_server=4, scheduler="srtf", mode="event", admission="accept-1.5")
    assert got["c"] == (100, 110, 0)
    got, _ = run(wl, gpus_per_server=4, scheduler="srtf", mode="event", admission="accept-2")
    assert got == allr


@pytest.mark.parametrize("mode", ["event", "round"])
def test_accept_k_holds_while_nothing_waits(mode):
    # same jobs, k = 0.5 (limit 2 GPUs): 0 <= 2 admits a; 4 > 2 holds b and c. Nothing is queued while a runs
    # (the held jobs wait in admission). At 100 demand is 0: b is admitted (4 > 2 then holds c); b 100-200. At 200
    # c is admitted: c 200-210. Round mode with 10 s rounds: every event falls on a round.
    wl = Workload((WorkloadJob("a", 0, 4, 100, 1.0), WorkloadJob("b", 0, 4, 100, 1.0),
                   WorkloadJob("c", 0, 1, 10, 1.0)))
    got, r = run(wl, gpus_per_server=4, scheduler="fifo", mode=mode, round_s=10, admission="accept-0.5")
    assert got == {"a": (0, 100, 0), "b": (100, 200, 0), "c": (200, 210, 0)}
    assert r.jobs["admitted_s"].tolist() == [0, 100, 200]


def test_no_backfill_but_backfill_on_request():
    # 2 GPUs, FIFO. a: 1 GPU 100 s at 0; b: 2 GPUs 10 s at 1; c: 1 GPU 10 s at 2.
    # Blox (no backfilling): b is blocked behind a, c waits behind b although a GPU is free: b 100-110, c 110-120.
    # With backfill: c takes the free GPU at 2 (2-12); b still starts at 100.
    from optsched.sim.base import Composed
    from optsched.sim.policies import Consolidated, Fifo

    wl = Workload((WorkloadJob("a", 0, 1, 100, 1.0), WorkloadJob("b", 1, 2, 10, 1.0), WorkloadJob("c", 2, 1, 10, 1.0)))
    got, _ = run(wl, mode="event")
    assert got == {"a": (0, 100, 0), "b": (100, 110, 0), "c": (110, 120, 0)}
    got, _ = run(wl, mode="event", scheduler=Composed(Fifo(), Consolidated(backfill=True)))
    assert got == {"a": (0, 100, 0), "b": (100, 110, 0), "c": (2, 12, 0)}


def test_metrics_hand():
    # FIFO on ABC (test_fifo): JCTs 100, 140, 110; responsiveness 0, 90, 80; makespan 150.
    # utilisation: 2 GPUs busy 0-100, 2 busy 100-130, 1 busy 130-150 -> (200 + 60 + 20) / (2 x 150) = 280/300.
    # queue: b waits 10-100, c 20-100 -> time-average (90 + 80) / 150.
    _, r = run(scheduler="fifo", mode="event")
    s = r.summary
    assert s["avg_responsiveness_s"] == pytest.approx(170 / 3)
    assert s["p50_jct_s"] == 110 and s["mean_utilisation"] == pytest.approx(280 / 300)
    assert s["mean_queue"] == pytest.approx(170 / 150) and s["max_queue"] == 2
    x, y = r.jct_cdf()
    assert x.tolist() == [100, 110, 140] and y.tolist() == pytest.approx([1 / 3, 2 / 3, 1])
