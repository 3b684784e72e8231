"""DRS (paper 003, section 3) in the simulator: hand-computed traces, the plan decision, migration, and the
digest's invariants (capacity at every instant, GPUs released, progress kept, R_trace in [0, 1], determinism)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from optsched.cluster import Cluster, Server
from optsched.generators.deadline import deadline_workload
from optsched.perf.ring import RingPerf
from optsched.problems.deadline import DeadlineJob, DeadlineWorkload
from optsched.sim import Decision, Placement, Simulator, simulate
from optsched.sim.deadline import DRS, NoRM, migratable_nodes, migration_plan, to_workload

# 2 nodes x 2 GPUs, B_intra 10 GB/s, B_inter 5 GB/s; a 1 GB gradient (250 M parameters): T_comm(2) = 0.1 s on
# one node, 0.2 s across; T_cal = 0.4 s; 100 batches per epoch. Seconds per batch on N GPUs (T_step / N):
# 1: 0.4 | 2 on one node: 0.25 | 2 across: 0.3 | 3 across: (0.4 + 4/3 * 0.2) / 3 = 0.2222 | 4 across: 0.175
CLUSTER = Cluster((Server("n0", 2), Server("n1", 2)), intra_bandwidth=10.0, inter_bandwidth=5.0)


def _job(i, arrival, alpha, epochs):
    return DeadlineJob(i, "ResNet-50", arrival, alpha, epochs, dataset_size=1600, batch=16, params=250_000_000,
                       step_time_s=0.4)


# A: 40 s alone, urgent (deadline 20); B: arrives 5, deadline 65; C: half an epoch, arrives 10, deadline 30
HAND = DeadlineWorkload(CLUSTER, (_job("A", 0, 0.5, 1), _job("B", 5, 1.5, 1), _job("C", 10, 1.0, 0.5)))


def _spans(run):
    """Job id -> (first start, completion, the placement of each segment)."""
    return {j.id: (j.first_start_s, j.completion_s, [pl.as_dict() for _, _, pl, _ in j.segments])
            for j in run.job_objects}


def test_drs_hand_trace():
    """t=0: A's only plan that meets 20 s is 4 GPUs across the nodes (17.5 s; nodes of 2 free < 4: fragments
    by the plan-size reading): A on both nodes, 0-17.5. t=17.5: B and C wait. C's plans: one node, 2 GPUs:
    12.5 s, ends exactly at its deadline 30 (P = 0); across: 3 GPUs 28.61 (P = 0.46), 4 GPUs 26.25 (P = 0.94):
    cross-node expected, 4 GPUs, slack 3.75. B's: single-node 2 GPUs ends 42.5 (slack 22.5). Least slack first:
    C on all 4 GPUs, 17.5-26.25. t=26.25: B's single-node plans: 1 GPU ends 66.25 > 65, 2 GPUs ends 51.25
    (P = 6.875); across: 3 GPUs 48.47 (P = 5.51) is the best cross-node score, and nodes of 2 free GPUs < 3:
    B takes 3 GPUs across the nodes (fragments first: node 0's 2, then 1 of node 1), 26.25-48.47."""
    run = simulate(HAND, scheduler="drs")
    s = _spans(run)
    assert s["A"][:2] == pytest.approx((0.0, 17.5)) and s["A"][2] == [{0: 2, 1: 2}]
    assert s["C"][:2] == pytest.approx((17.5, 26.25)) and s["C"][2] == [{0: 2, 1: 2}]
    assert s["B"][:2] == pytest.approx((26.25, 26.25 + 100 * (0.4 + 4 / 3 * 0.2) / 3))
    assert s["B"][2] == [{0: 2, 1: 1}]
    kinds = [(c.job, c.kind, c.plan.n_gpu) for c in run.policy.choices]
    assert kinds == [("A", "cross-expected", 4), ("C", "cross-expected", 4), ("B", "cross-expected", 3)]
    assert run.custom["deadline"]["deadlines_met"] == 3 and run.custom["deadline"]["migrations"] == 0
    # C's one-node 2-GPU plan was expected with P = 0, the cross-node 4-GPU one had the best score
    c = run.policy.choices[1]
    assert c.candidates["single-expected"].n_gpu == 2 and c.candidates["single-expected"].slack_s == pytest.approx(0)


def test_drs_node_reading_of_the_fragment_test_keeps_b_on_one_node():
    """With N_GPU read as a node's GPU count, no node is partly busy at 26.25: B takes the single-node 2-GPU
    plan (26.25-51.25); at 0, no fragment either: A's only expected plan is cross-node, so A runs its best
    unexpected single-node plan (2 GPUs, 25 s) and misses."""
    run = simulate(HAND, scheduler=DRS(fragment="node"))
    s = _spans(run)
    assert s["A"][:2] == pytest.approx((0.0, 25.0)) and s["A"][2] == [{0: 2}]
    assert run.policy.choices[0].kind == "single-unexpected"
    assert run.custom["deadline"]["deadlines_met"] < 3


def test_edf_and_fifo_hand_traces():
    """EDF: A on all 4 GPUs 0-17.5; at 17.5 C (deadline 30) before B (65): C 17.5-26.25, B 26.25-43.75. FIFO:
    B (arrived first) 17.5-35, then C 35-43.75, past its deadline."""
    e = _spans(simulate(HAND, scheduler="edf"))
    assert [e[i][:2] for i in "ACB"] == [pytest.approx(v) for v in ((0, 17.5), (17.5, 26.25), (26.25, 43.75))]
    f = simulate(HAND, scheduler="deadline-fifo")
    s = _spans(f)
    assert [s[i][:2] for i in "ABC"] == [pytest.approx(v) for v in ((0, 17.5), (17.5, 35.0), (35.0, 43.75))]
    assert f.custom["deadline"]["deadlines_met"] == 2


# -- migration ----------------------------------------------------------------------------------------------
def _driven(wl, place_at_0, policy):
    """Start the jobs arriving at 0 where ``place_at_0`` says (an outside driver), then let ``policy`` run."""
    sim = Simulator(to_workload(wl), wl.cluster, policy=policy, perf=RingPerf.for_workload(wl), mode="event")
    sim.reset()
    view = sim.advance()
    act = view.jobs.active
    sim.apply(Decision(launch={act[j]: Placement.of(p) for j, p in place_at_0.items()}))
    decisions = []
    while (view := sim.advance()) is not None:
        d = sim.decide()
        decisions.append((view.now, d))
        sim.apply(d)
    return sim.result(), decisions


def _four_by_four(jobs):
    return DeadlineWorkload(Cluster(tuple(Server(f"n{i}", 4) for i in range(4)), 10.0, 6.0), tuple(jobs))


def test_migration_packs_jobs_when_more_than_half_the_nodes_are_migratable():
    wl = _four_by_four([DeadlineJob(f"j{i}", "TSN", 0, 1.5, 2) for i in range(4)]
                       + [DeadlineJob("late", "TSN", 100, 1.5, 1)])
    r, decisions = _driven(wl, {f"j{i}": {i: 1} for i in range(4)}, DRS())
    t, d = decisions[0]
    assert t == 100 and {j.id: p.as_dict() for j, p in d.migrate.items()} == {"j1": {0: 1}, "j2": {0: 1},
                                                                               "j3": {0: 1}}
    jobs = {j.id: j for j in r.job_objects}
    for i in range(4):
        j = jobs[f"j{i}"]
        assert {pl.gpus for _, _, pl, _ in j.segments} == {1}            # the GPU count is kept
        assert sum(it for *_, it in j.segments) == pytest.approx(j.iterations)  # and the progress
        assert j.preemptions == 0 and j.migrations == (0 if i == 0 else 1)
    assert jobs["late"].first_start_s == 100


def test_no_migration_at_exactly_half_the_nodes():
    wl = _four_by_four([DeadlineJob(f"j{i}", "TSN", 0, 1.5, 2) for i in range(2)]
                       + [DeadlineJob("x", "TSN", 0, 1.5, 2), DeadlineJob("late", "TSN", 100, 1.5, 1)])
    r, decisions = _driven(wl, {"j0": {0: 1}, "j1": {1: 1}, "x": {2: 4}}, DRS())
    assert all(not d.migrate for _, d in decisions)
    assert r.summary["migrations_total"] == 0


def test_migration_plan_places_single_node_jobs_first_by_size_then_cross_node_ones():
    wl = _four_by_four([DeadlineJob("cross", "TSN", 0, 1.5, 2), DeadlineJob("one", "TSN", 0, 1.5, 2),
                        DeadlineJob("two", "TSN", 0, 1.5, 2)])
    sim = Simulator(to_workload(wl), wl.cluster, policy=DRS(), perf=RingPerf.for_workload(wl), mode="event")
    sim.reset()
    view = sim.advance()
    act = view.jobs.active
    sim.apply(Decision(launch={act["cross"]: Placement.of({1: 1, 2: 1}), act["one"]: Placement.of({2: 1}),
                               act["two"]: Placement.of({3: 2})}))
    assert migratable_nodes(view) == [1, 2, 3]       # node 0 runs nothing; node 2 has 2 of 4 busy
    plan = {j.id: p.as_dict() for j, p in migration_plan(view).items()}
    # "two" (2 GPUs) then "one" best-fit on node 0; "cross" fills node 0's last GPU, then 1 of node 1
    assert plan == {"two": {0: 2}, "one": {0: 1}, "cross": {0: 1, 1: 1}}


# -- invariants ---------------------------------------------------------------------------------------------
def _capacity_ok(result, caps):
    """Sweep every job's segments: per node, GPUs held never exceed its capacity."""
    events = {s: [] for s in range(len(caps))}
    for j in result.job_objects:
        for t0, t1, pl, _ in j.segments:
            for s, c in zip(pl.servers, pl.counts):
                events[s] += [(t0, c), (t1, -c)]
    for s, ev in events.items():
        used = 0
        for _, d in sorted(ev, key=lambda e: (e[0], e[1])):
            used += d
            assert 0 <= used <= caps[s]


@pytest.mark.parametrize("policy", ["drs", "norm", "edf", "deadline-fifo", "themis", "elasticflow-fixed", "las",
                                    "tiresias", "elasticflow", "elasticflow-noadmit", "edf-elastic",
                                    "edf-admission", "gandiva-ts"])
def test_every_policy_respects_capacity_releases_gpus_and_keeps_progress(policy):
    wl = deadline_workload(lam=6, window_h=8, nodes=2, seed=3)
    run = simulate(wl, scheduler=policy)
    r = run
    _capacity_ok(r, wl.capacities)
    assert r.timeseries["busy_gpus"].iloc[-1] == 0                      # every GPU released at the end
    for j in r.job_objects:
        if j.status == "done":
            assert sum(it for *_, it in j.segments) == pytest.approx(j.iterations, rel=1e-9)
    m = run.custom["deadline"]
    assert 0 <= m["r_trace"] <= 1 and m["avg_wait_s"] >= 0 and 0 <= m["utilisation"] <= 1 + 1e-12
    if policy in ("drs", "norm"):
        assert all(len({pl.gpus for *_, pl, _ in j.segments}) == 1 for j in r.job_objects)
        assert m["preemptions"] == 0
    if policy == "norm":
        assert m["migrations"] == 0


def test_drs_plans_pass_the_filter_and_fit_the_free_gpus():
    wl = deadline_workload(lam=8, window_h=10, seed=5)
    run = simulate(wl, scheduler="drs")
    perf = RingPerf.for_workload(wl)
    assert run.policy.choices
    for c in run.policy.choices:
        j = wl.job(c.job)
        n = c.plan.n_gpu
        assert perf.useful(j.t_cal, j.n_params, n, c.plan.cross)              # eq. 11
        free = np.array(c.free)
        if c.plan.cross:
            assert (free > 0).sum() > 1 and 2 <= n <= free.sum()
        else:
            assert n <= free.max()
        if c.kind.endswith("-unexpected"):        # unexpected only when no plan of either list is expected
            assert not any(p is not None for k, p in c.candidates.items() if k.endswith("-expected")
                           and not k.endswith("unexpected"))


def test_drs_is_deterministic_and_reusable_and_copies_mid_run():
    wl = deadline_workload(lam=6, window_h=6, seed=9)
    a, b = simulate(wl, scheduler="drs"), simulate(wl, scheduler="drs")
    assert a.jobs.equals(b.jobs) and a.custom["deadline"] == b.custom["deadline"]
    pol = DRS()
    first = simulate(wl, scheduler=pol).jobs
    assert simulate(wl, scheduler=pol).jobs.equals(first)             # reset() between runs
    sim = Simulator(to_workload(wl), wl.cluster, policy=DRS(), perf=RingPerf.for_workload(wl), mode="event")
    sim.reset()
    for _ in range(10):
        sim.apply(sim.decide()) if sim.advance() is not None else None
    twin = copy.deepcopy(sim)
    for s in (sim, twin):
        while s.advance() is not None:
            s.apply(s.decide())
    assert sim.result().jobs.equals(twin.result().jobs)


def test_drs_and_norm_beat_the_whole_cluster_baselines_and_themis_on_the_default_trace():
    """The paper's headline ordering (section 4.3), on the paper's default trace, three seeds averaged: DRS and
    NoRM meet more deadlines than EDF, FIFO and Themis. (DRS >= NoRM is not asserted: ours differ by a few
    jobs either way; docs/results/drs.md reports it.)"""
    r = {p: np.mean([simulate(deadline_workload(seed=s), scheduler=p).custom["deadline"]["r_trace"] for s in range(3)])
         for p in ("drs", "norm", "edf", "deadline-fifo", "themis")}
    assert min(r["drs"], r["norm"]) > max(r["edf"], r["deadline-fifo"], r["themis"])


def test_norm_is_drs_without_migration():
    assert NoRM().migration is False and DRS().describe()["migration"] is True
