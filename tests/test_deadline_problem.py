"""The deadline problem's data (paper 003): the optsched/deadline-workload@1 format (JSON and CSV), validation
(one error naming the field and the job), the time model of eqs. 1-11, the catalogue's Fig. 5 facts, the
generator and the evaluator."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import optsched
from optsched.cli import main
from optsched.errors import InstanceError, ScheduleError
from optsched.evaluators.deadline import evaluate
from optsched.generators.deadline import deadline_workload, tiny_deadline_workload
from optsched.problems.deadline import (
    FORMAT,
    MODELS,
    DeadlineJob,
    DeadlineWorkload,
    comm_time_s,
    from_csv_text,
    from_dict,
    meets_deadline,
    paper_cluster,
    read_deadline_workload,
    run_time_s,
    speedup_ok,
    to_csv_text,
    write_deadline_workload,
)
from optsched.result import Schedule, ScheduledJob

GOOD = {"id": "a", "model": "ResNet-50", "arrival_s": 0, "alpha": 1, "epochs": 3}


def _doc(**job):
    return {"format": FORMAT, "jobs": [{**GOOD, **job}]}


# -- format -------------------------------------------------------------------------------------------------
def test_json_and_csv_round_trip_through_the_doors(tmp_path):
    wl = deadline_workload(lam=4, window_h=6, seed=3)
    p = tmp_path / "w.json"
    optsched.save(wl, p)
    assert optsched.load(p) == wl
    assert json.loads(p.read_text())["format"] == FORMAT
    c = tmp_path / "w.csv"
    write_deadline_workload(wl, c)
    back = read_deadline_workload(c)
    assert back.jobs == wl.jobs and back.capacities == wl.capacities and back.seed == wl.seed
    assert back.cluster.inter_bandwidth == wl.cluster.inter_bandwidth and back.name == wl.name
    assert from_csv_text(to_csv_text(wl)).jobs == wl.jobs


def test_missing_profile_fields_take_the_catalogue_and_the_cluster_defaults_to_the_papers():
    wl = from_dict(_doc())
    prof = MODELS["ResNet-50"]
    j = wl.jobs[0]
    assert (j.dataset_size, j.batch, j.params, j.step_time_s) == (prof.dataset_size, prof.batch, prof.params,
                                                                  prof.step_time_s)
    assert wl.capacities == (4, 4, 4, 4) and (wl.cluster.intra_bandwidth, wl.cluster.inter_bandwidth) == (10.0, 6.0)


@pytest.mark.parametrize("field,value,match", [
    ("epochs", 0, "must be a positive number"),
    ("epochs", -2, "must be a positive number"),
    ("batch", 0, "must be a positive integer"),
    ("batch", 2.5, "must be a positive integer"),
    ("params", 0, "must be a positive integer"),
    ("dataset_size", -1, "must be a positive integer"),
    ("step_time_s", 0, "must be a positive number"),
    ("model", "ResNet-51", "unknown model 'ResNet-51'"),
    ("alpha", 2, "must be one of 0.5, 1, 1.5"),
    ("alpha", 0.7, "must be one of 0.5, 1, 1.5"),
    ("arrival_s", -1, "must be a finite number >= 0"),
    ("dataset_size", 8, "no plan can ever run"),   # 8 samples < one batch of 16
])
def test_each_bad_value_is_one_error_naming_the_field_and_the_job(field, value, match):
    with pytest.raises(InstanceError, match=match) as err:
        from_dict(_doc(**{field: value}))
    assert err.value.field == f"jobs[0].{field}" and err.value.job == "a"


def test_unknown_keys_and_bad_csv_cells_are_refused():
    with pytest.raises(InstanceError, match=r"unknown field\(s\) \['lamda'\]") as err:
        from_dict(_doc(lamda=2))
    assert err.value.job == "a"
    with pytest.raises(InstanceError, match="unknown field"):
        from_dict({**_doc(), "horizon": 3})
    with pytest.raises(InstanceError, match="unknown column"):
        from_csv_text("id,model,arrival_s,alpha,epochs,gpus\na,TSN,0,1,1,4\n")
    with pytest.raises(InstanceError, match="must be a number") as err:
        from_csv_text("id,model,arrival_s,alpha,epochs\na,TSN,zero,1,1\n")
    assert err.value.field == "jobs[0].arrival_s" and err.value.job == "a"
    with pytest.raises(InstanceError, match="unknown header line"):
        from_csv_text("# nodes: 4\nid,model,arrival_s,alpha,epochs\na,TSN,0,1,1\n")


def test_the_cli_reports_a_bad_file_on_one_line_with_exit_2(tmp_path, capsys):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(_doc(alpha=3)))
    assert main(["solve", str(p)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "jobs[0].alpha (job 'a')" in err


def test_cli_generate_deadline_and_solve_a_tiny_instance(tmp_path, capsys):
    p = tmp_path / "t.json"
    assert main(["generate", "deadline", "--tiny", "3", "--nodes", "2", "--gpus-per-node", "2", "--seed", "1",
                 "-o", str(p)]) == 0
    assert "3 jobs" in capsys.readouterr().out
    assert main(["solve", str(p), "-a", "deadline-brute"]) == 0
    assert "status=optimal" in capsys.readouterr().out
    q = tmp_path / "d.json"
    assert main(["generate", "deadline", "--lam", "2", "--window-h", "3", "--seed", "2", "-o", str(q)]) == 0
    assert optsched.load(q) == deadline_workload(lam=2, window_h=3, seed=2)
    assert main(["generate", "deadline", "--urgent-share", "1.5", "-o", str(q)]) == 2


# -- the time model -----------------------------------------------------------------------------------------
def test_ring_allreduce_time_by_hand():
    # 1e9 parameters x 4 bytes at 10 GB/s: 0.4 s per (2 (N-1) / N) of the payload
    assert comm_time_s(1, 1e9, 10.0) == 0.0
    assert comm_time_s(2, 1e9, 10.0) == pytest.approx(0.4)
    assert comm_time_s(4, 1e9, 10.0) == pytest.approx(0.6)
    # 800 batches, T_cal 0.5 s, 4 GPUs, 0.6 s of communication per step: 200 steps of 1.1 s
    assert run_time_s(800, 0.5, 4, 1e9, 10.0) == pytest.approx(220.0)


@given(n=st.integers(1, 32), params=st.floats(1e3, 1e10), b1=st.floats(0.1, 100), b2=st.floats(0.1, 100),
       t_cal=st.floats(1e-3, 5.0), work=st.floats(1.0, 1e6))
def test_time_model_monotone_in_bandwidth_and_filter_is_eq_10(n, params, b1, b2, t_cal, work):
    lo, hi = sorted((b1, b2))
    assert comm_time_s(n, params, hi) <= comm_time_s(n, params, lo)
    # the same count on one node (B_intra >= B_inter) is never slower
    assert run_time_s(work, t_cal, n, params, hi) <= run_time_s(work, t_cal, n, params, lo)
    # eq. 11 <=> eq. 10: one epoch on n GPUs is shorter than on one (n >= 2); always true at n = 1
    if n == 1:
        assert speedup_ok(t_cal, n, params, lo)
    else:
        t_n, t_1 = run_time_s(work, t_cal, n, params, lo), run_time_s(work, t_cal, 1, params, lo)
        if not math.isclose(t_n, t_1, rel_tol=1e-9):
            assert speedup_ok(t_cal, n, params, lo) == (t_n < t_1)


@given(n=st.integers(1, 64), t_cal=st.floats(1e-3, 5.0), work=st.floats(1.0, 1e6))
def test_without_communication_run_time_is_inverse_in_the_gpus(n, t_cal, work):
    assert run_time_s(work, t_cal, n, 0.0, 1.0) == pytest.approx(run_time_s(work, t_cal, 1, 0.0, 1.0) / n)


def test_the_catalogue_reproduces_the_facts_the_text_states_about_fig_5():
    """Section 2.5 on the paper's cluster (10 / 6 GB/s): VGG-16 on 2 GPUs and AlexNet on 2 and 4 GPUs are slower
    than on one; VGG-16 speeds up within a node but not across nodes at the same count; ResNet-50 speeds up
    within and across nodes, a little slower across."""
    wl = DeadlineWorkload(paper_cluster(), tuple(DeadlineJob(m, m, 0, 1.5, 1) for m in MODELS))
    t = {(j.id, n, x): wl.run_time_s(j, n, x) for j in wl.jobs for n in (1, 2, 3, 4) for x in (False, True)}
    one = {m: t[m, 1, False] for m in MODELS}
    assert t["VGG-16", 2, True] > one["VGG-16"]
    assert t["AlexNet", 2, True] > one["AlexNet"] and t["AlexNet", 4, True] > one["AlexNet"]
    assert t["AlexNet", 2, False] > one["AlexNet"] and t["AlexNet", 4, False] > one["AlexNet"]
    for n in (2, 3):
        assert t["VGG-16", n, False] < one["VGG-16"] < t["VGG-16", n, True]
    for n in (2, 3, 4):
        assert t["ResNet-50", n, False] < t["ResNet-50", n, True] < one["ResNet-50"]
    # the filter agrees: VGG-16's 2-GPU cross-node plan and AlexNet's small plans are dropped
    vgg, alex = wl.job("VGG-16"), wl.job("AlexNet")
    assert not speedup_ok(vgg.t_cal, 2, vgg.n_params, 6.0) and speedup_ok(vgg.t_cal, 2, vgg.n_params, 10.0)
    assert not speedup_ok(alex.t_cal, 4, alex.n_params, 10.0)


def test_deadline_is_arrival_plus_alpha_times_the_one_gpu_run_time():
    j = DeadlineJob("a", "TSN", 100.0, 0.5, epochs=2)
    t1 = 2 * j.dataset_size / j.batch * j.step_time_s
    assert j.run_time_1gpu_s == pytest.approx(t1) and j.deadline_s == pytest.approx(100 + 0.5 * t1)
    assert meets_deadline(j.deadline_s, j.deadline_s) and not meets_deadline(j.deadline_s + 1e-3, j.deadline_s)


def test_unreachable_lists_jobs_no_plan_can_finish_in_time():
    wl = DeadlineWorkload(paper_cluster(), (DeadlineJob("a", "AlexNet", 0, 0.5, 1),    # gains < 2x
                                            DeadlineJob("b", "ResNet-50", 0, 0.5, 1),  # gains > 2x
                                            DeadlineJob("c", "AlexNet", 0, 1.0, 1)))
    assert wl.unreachable() == ["a"]


# -- the generator --------------------------------------------------------------------------------------------
def test_generator_follows_the_papers_defaults_and_is_deterministic():
    runs = [deadline_workload(seed=s) for s in range(20)]
    assert deadline_workload(seed=7) == deadline_workload(seed=7) and runs[0] != runs[1]
    jobs = [j for wl in runs for j in wl.jobs]
    assert all(0 <= j.arrival_s < 24 * 3600 for j in jobs)
    # 20 seeds x 24 h x 4 jobs/h = 1920 expected arrivals (Poisson: sd ~ 44)
    assert 1920 - 200 < len(jobs) < 1920 + 200
    share = {a: sum(j.alpha == a for j in jobs) / len(jobs) for a in (0.5, 1.0, 1.5)}
    assert abs(share[0.5] - 0.1) < 0.03 and abs(share[1.0] - 0.3) < 0.04 and abs(share[1.5] - 0.6) < 0.04
    heavy = sum(j.model in ("AlexNet", "VGG-16") for j in jobs) / len(jobs)
    assert abs(heavy - 0.2) < 0.03
    assert runs[0].capacities == (4, 4, 4, 4) and runs[0].cluster.inter_bandwidth == 6.0


def test_generator_sweeps_change_only_what_they_sweep():
    a, b = deadline_workload(seed=2, heavy_share=0.2), deadline_workload(seed=2, heavy_share=1 / 3)
    assert [j.arrival_s for j in a.jobs] == [j.arrival_s for j in b.jobs]
    assert [j.alpha for j in a.jobs] == [j.alpha for j in b.jobs]
    heavy = ("AlexNet", "VGG-16")
    assert {j.id for j in a.jobs if j.model in heavy} <= {j.id for j in b.jobs if j.model in heavy}
    assert len(deadline_workload(seed=2, nodes=2).jobs) == len(a.jobs)
    assert deadline_workload(seed=2, window_h=12).jobs == tuple(j for j in a.jobs if j.arrival_s < 12 * 3600)
    with pytest.raises(InstanceError, match="urgent_share"):
        deadline_workload(urgent_share=1.2)
    with pytest.raises(InstanceError, match="alpha_shares"):
        deadline_workload(alpha_shares=(0.5, 0.5, 0.5))


def test_tiny_instances_are_on_the_grid():
    wl = tiny_deadline_workload(4, nodes=2, gpus_per_node=3, seed=4, time_unit_s=30.0)
    assert wl.capacities == (3, 3) and wl.time_unit_s == 30.0
    assert all((j.arrival_s / 30.0).is_integer() for j in wl.jobs)
    assert all(3 * 30 - 1e-6 <= j.run_time_1gpu_s <= 16 * 30 + 1e-6 for j in wl.jobs)


# -- the evaluator --------------------------------------------------------------------------------------------
WL2 = DeadlineWorkload(paper_cluster(2, 2), (DeadlineJob("a", "ResNet-50", 0, 1.0, 1),
                                             DeadlineJob("b", "ResNet-50", 10, 1.5, 1)))


def test_evaluator_recomputes_completions_and_counts_deadlines():
    a, b = WL2.jobs
    t_a = WL2.run_time_s(a, 2, cross=True)
    ev = evaluate(WL2, Schedule((ScheduledJob("a", 0, {"n0": 1, "n1": 1}), ScheduledJob("b", 10, {"n0": 1}))))
    assert ev.schedule["a"].completion == pytest.approx(t_a)
    assert ev.schedule["b"].completion == pytest.approx(10 + b.run_time_1gpu_s)
    assert ev.met == ("a", "b") and ev.objective == 2 and ev.ratio == 1.0
    late = evaluate(WL2, Schedule((ScheduledJob("b", b.deadline_s, {"n0": 1}),)))
    assert late.met == () and late.missed == ("a", "b") and late.objective == 0
    urg = evaluate(WL2, Schedule((ScheduledJob("a", 0, {"n0": 1}), ScheduledJob("b", 10, {"n1": 1}))), "urgency")
    assert urg.objective == pytest.approx(1 / 1.0 + 1 / 1.5)


@pytest.mark.parametrize("rows,field,match", [
    ([ScheduledJob("a", -1, {"n0": 1})], "start", "before its arrival"),
    ([ScheduledJob("z", 0, {"n0": 1})], "schedule", "not a job"),
    ([ScheduledJob("a", 0, {"n9": 1})], "placement", "unknown server"),
    ([ScheduledJob("a", 0, {"n0": 3})], "placement", "which has 2"),
    ([ScheduledJob("a", 0, {"n0": 2}), ScheduledJob("b", 10, {"n0": 1})], "placement", "uses 3 GPUs"),
    ([ScheduledJob("a", 0, {"n0": 1}), ScheduledJob("a", 5, {"n1": 1})], "schedule", "twice"),
    ([ScheduledJob("a", 0, {"n0": 1}, completion=5.0)], "completion", "!= start"),
])
def test_evaluator_rejects_infeasible_schedules(rows, field, match):
    with pytest.raises(ScheduleError, match=match) as err:
        evaluate(WL2, Schedule(tuple(rows)))
    assert err.value.field == field
