"""A-SRPT's ablation options (docs/algorithms/a-srpt.md, "Ablation: why A-SRPT loses at scale").

Hand-computed tiny schedules where each option changes the schedule in the predicted way, and hypothesis
invariants (capacity, non-preemption, start >= release, bounded wait) for the variants.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.properties.test_asrpt_policy import instances

from optsched.errors import InstanceError
from optsched.models import catalogue_job
from optsched.perf.mixed import MixedPerf
from optsched.sim import simulate
from optsched.sim.asrpt import ASRPT, run_policy

BIG = 10**7  # iterations of the jobs that keep GPUs busy for the whole test


def _virtual_completion(spec, iters, servers_gpus) -> float:
    """p~ = (g / G) n~ alpha~min of a job alone on the virtual machine (released at 0)."""
    r = run_policy("a-srpt", [("x", 0.0, spec, iters, iters)], servers_gpus)
    return r.by_id("first_start_s")["x"]  # alone and not communication-heavy-delayed on an empty cluster: starts at p~


def _window_case():
    """2 x 8 GPUs. f1, f2 (6-GPU, unseen) fill 6 GPUs of each server at t = 0; h (3 GPUs, predicted) is queued at
    its virtual completion v and only finds 2 + 1 free GPUs -> communication-heavy spread -> delay window of
    tau * v = 100 v; u (1 GPU, unseen) arrives at v + 1, when 1 GPU outside h's picks is free."""
    v = _virtual_completion(catalogue_job("T5:pp3"), 1000, (2, 8))
    return v, [("f1", 0.0, catalogue_job("GPT-6.7B:pp3x2"), BIG, 0),
               ("f2", 0.0, catalogue_job("GPT-6.7B:pp3x2"), BIG, 0),
               ("h", 0.0, catalogue_job("T5:pp3"), 1000, 1000),
               ("u", v + 1.0, catalogue_job("VGG19:1gpu"), 10, 0)]


def test_window_blocks_queue_false_lets_u_start_beside_the_waiting_head():
    v, jobs = _window_case()
    paper = run_policy("a-srpt", jobs, (2, 8))
    nb = run_policy("a-srpt", jobs, (2, 8), window_blocks_queue=False)
    hj = paper.policy.records["h"]
    assert math.isclose(hj["virtual_completion_s"], v)
    # h is communication-heavy on the 2 + 1 spread and, with f1/f2 never finishing, waits its whole window
    assert hj["comm_heavy"] and math.isclose(hj["window_s"], 100 * v)
    assert math.isclose(paper.by_id("first_start_s")["h"], v + 100 * v)
    # paper reading: u is stuck behind the waiting head and starts with it, not at its arrival
    assert paper.by_id("first_start_s")["u"] >= paper.by_id("first_start_s")["h"]
    # ablation: u starts at its arrival on the one GPU h did not pick (server 1), h's schedule is unchanged
    assert nb.by_id("first_start_s")["u"] == v + 1.0
    assert nb.first_placements()["u"] == {1: (1,)}
    assert nb.by_id("first_start_s")["h"] == paper.by_id("first_start_s")["h"]
    assert nb.first_placements()["h"] == paper.first_placements()["h"]


def test_head_blocks_queue_false_backfills_past_a_head_that_does_not_fit():
    # 1 x 8 GPUs: f (6 GPUs) runs; h (4 GPUs) heads the queue from its virtual completion v but does not fit;
    # u (1 GPU, unseen) arrives at v + 1
    v = _virtual_completion(catalogue_job("VGG19:dp4"), 100, (1, 8))
    jobs = [("f", 0.0, catalogue_job("GPT-6.7B:pp3x2"), 2000, 0),
            ("h", 0.0, catalogue_job("VGG19:dp4"), 100, 100),
            ("u", v + 1.0, catalogue_job("VGG19:1gpu"), 10, 0)]
    paper = run_policy("a-srpt", jobs, (1, 8))
    bf = run_policy("a-srpt", jobs, (1, 8), head_blocks_queue=False)
    c_f = paper.by_id("completion_s")["f"]
    assert c_f > v + 1.0
    assert paper.by_id("first_start_s")["h"] == c_f  # strict FIFO: both wait for f
    assert paper.by_id("first_start_s")["u"] == c_f
    assert bf.by_id("first_start_s")["u"] == v + 1.0  # u backfills at its arrival
    assert bf.by_id("first_start_s")["h"] == c_f


def test_release_arrival_skips_the_virtual_wait_and_keeps_srpt_order():
    # 1 x 1 GPU, both at t = 0: a (1000 it), b (100 it), exact predictions; alpha = alpha~min (one GPU)
    a_spec = catalogue_job("VGG19:1gpu")
    jobs = [("a", 0.0, a_spec, 1000, 1000), ("b", 0.0, a_spec, 100, 100)]
    paper = run_policy("a-srpt", jobs, (1, 1))
    arr = run_policy("a-srpt", jobs, (1, 1), release="arrival")
    al = paper.by_id("alpha_s")["b"]
    # paper: b enters the queue at its virtual completion 100 al, a at 1100 al (> C_b = 200 al)
    assert math.isclose(paper.by_id("first_start_s")["b"], 100 * al)
    assert math.isclose(paper.by_id("first_start_s")["a"], 1100 * al)
    # arrival: queued at once in p~ order: b at 0, a right after b
    assert arr.start_order() == ("b", "a") and arr.by_id("first_start_s")["b"] == 0.0
    assert math.isclose(arr.by_id("first_start_s")["a"], 100 * al)
    assert arr.jobs["jct_s"].sum() < paper.jobs["jct_s"].sum()


def test_bad_options_raise():
    with pytest.raises(InstanceError) as e:
        ASRPT(release="now")
    assert e.value.field == "release"
    with pytest.raises(InstanceError) as e:
        ASRPT(window_blocks_queue=0)
    assert e.value.field == "window_blocks_queue"


OPTION_SETS = [{"window_blocks_queue": False}, {"head_blocks_queue": False}, {"release": "arrival"},
               {"window_blocks_queue": False, "head_blocks_queue": False, "release": "arrival"}]


@settings(max_examples=40, deadline=None)
@given(instances(), st.sampled_from(OPTION_SETS))
def test_variant_invariants(inst, opts):
    wl, servers, g, tau, nic = inst
    pol = ASRPT(tau=tau, **opts)
    res = simulate(wl, servers=servers, gpus_per_server=g, scheduler=pol, perf=MixedPerf(g, nic, 300.0),
                   mode="event")
    jobs = res.job_objects
    assert len(jobs) == len(wl.jobs)
    eps = 1e-9
    for j in jobs:
        assert j.launches == 1 and j.preemptions == 0 and len(j.segments) == 1   # non-preemptive
        assert j.segments[0][2].gpus == j.gpus
        assert j.first_start_s >= j.arrival_s - eps                               # start >= release
        if opts.get("release", "virtual") == "virtual":
            assert j.first_start_s >= pol.records[j.id]["virtual_completion_s"] - eps
        wait = j.first_start_s - pol.records[j.id]["popped_s"]                            # bounded wait after the pop
        m = pol.records[j.id]
        assert -eps <= wait <= (m.get("window_s", 0.0) if m["comm_heavy"] else 0.0) + eps
    for t in {j.first_start_s for j in jobs}:                                     # per-server capacity
        used = [0] * servers
        for j in jobs:
            if j.first_start_s <= t < j.completion_s:
                for s, n in j.segments[0][2].as_dict().items():
                    used[s] += n
        assert max(used) <= g
