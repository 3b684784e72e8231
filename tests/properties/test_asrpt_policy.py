"""A-SRPT's invariants on random small instances (digest 001, P8), checked on the simulator's record of the run.

* start_i >= max(r_i, C_i(A~1)), and C_i(A~1) is exactly preemptive SRPT on the virtual sizes (batch ``srpt``);
* jobs enter pending_queue in virtual-completion order and start in pending_queue order (strict FIFO);
* capacity: at every instant each server's GPUs in use <= its size; runs are non-preemptive (one segment each,
  of length n_i * alpha_i(x) with alpha from eq. 7 of the placement used);
* bounded wait: a job starts when popped, except a communication-heavy one, which starts within tau * p~_i;
  tau = 0 -> no wait; an unseen job (n~ = 0) enters the queue at its arrival;
* the same run twice gives the same schedule.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.exact.single_machine import srpt
from optsched.models import catalogue_job
from optsched.perf.mixed import MixedPerf
from optsched.perf.pipeline import Network, alpha
from optsched.problems.workload import Workload, WorkloadJob
from optsched.sim import simulate
from optsched.sim.asrpt import ASRPT

SPECS = ["ResNet152:1gpu", "VGG19:1gpu", "VGG19:dp4", "Inception-V3:pp2x2", "T5:pp3", "GPT-175B:pp3",
         "GPT-6.7B:pp3x2", "ResNet152:pp4x2"]
EPS = 1e-9


@st.composite
def instances(draw):
    servers = draw(st.integers(1, 3))
    g = draw(st.sampled_from([4, 8]))
    G = servers * g
    n = draw(st.integers(1, 7))
    jobs = []
    for i in range(n):
        arrival = float(draw(st.integers(0, 30)))
        if draw(st.booleans()):
            name = draw(st.sampled_from(SPECS))
            spec = catalogue_job(name)
            if spec.gpus > G:
                spec = catalogue_job("VGG19:1gpu")
            gpus, it_time = spec.gpus, 0.05  # iteration_time_s only scales the unseen/spec-less path
        else:
            spec, gpus, it_time = None, draw(st.integers(1, G)), float(draw(st.integers(1, 3)))
        iters = float(draw(st.integers(1, 400)))
        pred = draw(st.one_of(st.none(), st.integers(1, 500).map(float)))
        jobs.append(WorkloadJob(f"j{i}", arrival, gpus, iters, it_time, predicted_iterations=pred, spec=spec))
    tau = draw(st.sampled_from([0.0, 0.5, 5.0, 200.0]))
    nic = draw(st.sampled_from([1.0, 10.0, 50.0]))
    return Workload(tuple(jobs)), servers, g, tau, nic


def _run(wl, servers, g, tau, nic):
    pol = ASRPT(tau=tau)
    perf = MixedPerf(g, nic, 300.0)
    res = simulate(wl, servers=servers, gpus_per_server=g, scheduler=pol, perf=perf, mode="event")
    return pol, res, perf


@settings(max_examples=60, deadline=None)
@given(instances())
def test_asrpt_invariants(inst):
    wl, servers, g, tau, nic = inst
    pol, res, perf = _run(wl, servers, g, tau, nic)
    jobs = {j.id: j for j in res.job_objects}
    G = servers * g
    net = Network.from_gbps(g, nic, 300.0)

    # the virtual machine is exact preemptive SRPT on p~_i = (g_i/G) n~_i alpha~_i^min
    sizes = {j.id: j.gpus / G * pol.pred[j.id] * pol.atmin_s[j.id] for j in jobs.values()}
    ref = srpt([(j.id, j.arrival_s, sizes[j.id]) for j in jobs.values()])
    for jid, j in jobs.items():
        assert math.isclose(pol.records[j.id]["virtual_completion_s"], ref.completion[jid], rel_tol=1e-9, abs_tol=1e-9)

    # start >= max(release, virtual completion); the queue receives jobs in virtual-completion order
    for j in jobs.values():
        assert j.first_start_s >= max(j.arrival_s, pol.records[j.id]["virtual_completion_s"]) - EPS
    vc = [pol.records[jid]["virtual_completion_s"] for jid, _ in pol.queue_log]
    assert vc == sorted(vc)
    assert all(t >= pol.records[jid]["virtual_completion_s"] - EPS for jid, t in pol.queue_log)

    # strict FIFO: start order == queue order, start times non-decreasing along it
    qorder = [jid for jid, _ in pol.queue_log]
    assert pol.start_order == qorder
    starts = [jobs[jid].first_start_s for jid in qorder]
    assert starts == sorted(starts)

    # non-preemptive; duration = n_i * alpha_i(x) (eq. 7 on the placement's per-stage counts)
    for j in jobs.values():
        assert j.launches == 1 and j.preemptions == 0 and len(j.segments) == 1
        pl = j.segments[0][2]
        assert pl.gpus == j.gpus
        if j.spec is not None:
            cols = pl.stages if j.spec.n_stages > 1 else {s: (n,) for s, n in pl.as_dict().items()}
            a = alpha(j.spec, net, cols) / 1000
        else:
            a = j.iteration_time_s
        assert math.isclose(j.completion_s - j.first_start_s, j.iterations * a, rel_tol=1e-9)

    # capacity at every start instant (usage only rises at starts)
    for t in {j.first_start_s for j in jobs.values()}:
        used = [0] * servers
        for j in jobs.values():
            if j.first_start_s <= t < j.completion_s:
                for s, n in j.segments[0][2].as_dict().items():
                    used[s] += n
        assert max(used) <= g

    # bounded wait after the pop; unseen jobs are queued at their arrival
    for j in jobs.values():
        wait = j.first_start_s - pol.records[j.id]["popped_s"]
        if pol.records[j.id]["comm_heavy"]:
            assert -EPS <= wait <= pol.records[j.id]["window_s"] + EPS
            if tau == 0:
                assert wait == 0
        else:
            assert wait == 0
        if pol.pred[j.id] == 0:
            assert pol.records[j.id]["queued_s"] == j.arrival_s


@settings(max_examples=15, deadline=None)
@given(instances())
def test_asrpt_deterministic(inst):
    wl, servers, g, tau, nic = inst
    _, a, _ = _run(wl, servers, g, tau, nic)
    _, b, _ = _run(wl, servers, g, tau, nic)
    assert a.jobs["first_start_s"].tolist() == b.jobs["first_start_s"].tolist()
    assert a.jobs["completion_s"].tolist() == b.jobs["completion_s"].tolist()
