"""Deadlines as ElasticFlow users know them: format 2, ElasticFlow's trace and throughput files, the table model,
ElasticFlow's re-planning admission and its baselines, best-effort jobs apart from the ratio."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.cli import main
from optsched.errors import InstanceError
from optsched.generators.deadline import elasticflow_shaped_workload
from optsched.perf.table import TablePerf
from optsched.problems.deadline import (
    FORMAT,
    FORMAT_V2,
    DeadlineJob,
    DeadlineWorkload,
    from_dict,
    paper_cluster,
    read_deadline_workload,
    to_dict,
    write_deadline_workload,
)
from optsched.problems.elasticflow import read_elasticflow_trace, read_throughputs
from optsched.sim import simulate
from optsched.sim.deadline.elasticflow import Ladder, RescaleOverhead, lend, plan_jobs
from optsched.sim.registry import build_perf, scheduler_names

HEADER = "job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu,duration"


def _files(tmp_path, rows, table="global_batch_size,1,2,4\n64,2.0,3.5,3.0\n128,1.0,1.9,3.6\n"):
    (tmp_path / "tp").mkdir(exist_ok=True)
    (tmp_path / "tp" / "bert.csv").write_text(table)
    (tmp_path / "t.csv").write_text("\n".join([HEADER, *rows]) + "\n")
    return tmp_path / "t.csv", tmp_path / "tp"


def _job(jid, arrival, deadline, iters, row=((1, 1.0), (2, 1.8), (4, 3.0)), **kw):
    return DeadlineJob(jid, "m", arrival, deadline_at_s=deadline, iterations=iters, batch=8, throughput=row, **kw)


# -- format 2 ------------------------------------------------------------------------------------------------------
def test_format_2_round_trips_and_format_1_is_still_written_for_old_workloads(tmp_path):
    jobs = (_job("a", 0.0, 500.0, 300), DeadlineJob("b", "TSN", 5.0, epochs=1, best_effort=True),
            DeadlineJob("c", "ResNet-50", 7.0, 0.5, 2, gpu_counts=(1, 2, 4), gpus=2))
    wl = DeadlineWorkload(paper_cluster(2, 2), jobs, "v2")
    doc = to_dict(wl)
    assert doc["format"] == FORMAT_V2 and doc["throughputs"] == {"m": {"8": {"1": 1.0, "2": 1.8, "4": 3.0}}}
    assert "throughput" not in doc["jobs"][0]             # carried by the table
    back = from_dict(json.loads(json.dumps(doc)))
    assert back.jobs == wl.jobs
    assert back.jobs[1].deadline_s == math.inf and back.jobs[0].deadline_s == 500.0
    old = DeadlineWorkload(paper_cluster(), (DeadlineJob("x", "TSN", 0, 1.0, 2),))
    assert to_dict(old)["format"] == FORMAT and set(to_dict(old)["jobs"][0]) == set(to_dict(old)["jobs"][0])
    p = tmp_path / "w.json"
    write_deadline_workload(wl, p)
    assert read_deadline_workload(p).jobs == wl.jobs
    with pytest.raises(InstanceError, match="only the JSON form"):
        write_deadline_workload(wl, tmp_path / "w.csv")


def test_format_2_reads_a_throughput_folder_by_a_relative_path_and_names_bad_fields(tmp_path):
    _files(tmp_path, [])
    doc = {"format": FORMAT_V2, "throughputs": "tp",
           "jobs": [{"id": "a", "model": "bert", "arrival_s": 0, "deadline_s": 900, "batch": 128, "iterations": 10}]}
    (tmp_path / "w.json").write_text(json.dumps(doc))
    wl = read_deadline_workload(tmp_path / "w.json")
    assert wl.jobs[0].throughput == ((1, 1.0), (2, 1.9), (4, 3.6))
    doc["jobs"][0]["batch"] = 32
    with pytest.raises(InstanceError, match=r"jobs\[0\]\.batch \(job 'a'\): .*no row for batch 32"):
        from_dict(doc, base=tmp_path)
    doc["jobs"][0].update(batch=128, deadline_s=-1)
    with pytest.raises(InstanceError, match=r"jobs\[0\]\.deadline_at_s \(job 'a'\)"):
        from_dict(doc, base=tmp_path)
    with pytest.raises(InstanceError, match="throughput on 2 GPUs must be a positive number"):
        DeadlineJob("z", "m", 0, iterations=1, batch=1, throughput={1: 1.0, 2: 0.0})


def test_a_non_monotone_row_times_jobs_by_the_listed_counts():
    j = _job("a", 0, 100, 10, row=((1, 2.0), (2, 1.0), (8, 4.0)))
    assert [j.iteration_time_s(n) for n in (1, 2, 3, 8, 9)] == [0.5, 1.0, 1.0, 0.25, 0.25]
    assert j.max_gpus == 8 and j.counts == (1, 2, 8) and j.run_time_1gpu_s == 5.0


# -- ElasticFlow's files -------------------------------------------------------------------------------------------
def test_an_elasticflow_trace_and_throughput_folder_are_read(tmp_path):
    trace, tp = _files(tmp_path, ["0,0,100,bert,400,64,1,50", "1,10,200,bert,900,128,2,200"])
    table = read_throughputs(tp)
    assert table == {"bert": {64: {1: 2.0, 2: 3.5, 4: 3.0}, 128: {1: 1.0, 2: 1.9, 4: 3.6}}}
    wl = read_elasticflow_trace(trace, tp, nodes=2, gpus_per_node=2)
    assert [(j.id, j.arrival_s, j.deadline_s, j.iterations, j.gpus) for j in wl.jobs] == \
        [("0", 0.0, 400.0, 100.0, 1), ("1", 10.0, 900.0, 200.0, 2)]
    assert wl.run_time_s(wl.jobs[1], 4, cross=True) == pytest.approx(200 / 3.6)


@pytest.mark.parametrize("row, where", [
    ("0,0,abc,bert,400,64,1,50", "row 1 column iteration"),
    ("0,0,100,gpt9,400,64,1,50", "row 1 column model_name"),
    ("0,0,100,bert,400,96,1,50", "row 1 column batch_size"),
    ("0,500,100,bert,400,64,1,50", "row 1 column ddl"),
    ("0,0,100,bert,400,64,1.5,50", "row 1 column num_gpu"),
])
def test_bad_trace_cells_name_the_file_row_and_column(tmp_path, row, where):
    trace, tp = _files(tmp_path, [row])
    with pytest.raises(InstanceError, match=f"t.csv {where}"):
        read_elasticflow_trace(trace, tp)


def test_bad_throughput_cells_name_the_file_row_and_column(tmp_path):
    trace, tp = _files(tmp_path, [], table="global_batch_size,1,2\n64,2.0,-1\n")
    with pytest.raises(InstanceError, match=r"bert.csv row 1 column 2: must be a positive"):
        read_throughputs(tp)


def test_the_cli_runs_an_elasticflow_trace_with_its_throughputs(tmp_path, capsys):
    trace, tp = _files(tmp_path, ["0,0,1000,bert,400,64,1,500", "1,10,400,bert,900,128,2,400",
                                  "2,20,100000,bert,30,64,1,50000"])
    assert main(["simulate", str(trace), "--throughputs", str(tp), "--scheduler", "elasticflow", "--servers", "1",
                 "--json", "--no-progress"]) == 0
    s = json.loads(capsys.readouterr().out)["summary"]
    assert (s["deadlines_met"], s["declined"]) == (2, 1)
    assert main(["simulate", str(trace), "--scheduler", "elasticflow", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert "throughput folder" in err and len(err.splitlines()) == 1


# -- the table model -------------------------------------------------------------------------------------------------
def test_the_table_model_is_registered_and_is_the_default_for_table_workloads():
    assert isinstance(build_perf("table"), TablePerf)
    wl = DeadlineWorkload(paper_cluster(1, 2), (_job("a", 0.0, 1000.0, 360),))
    run = simulate(wl, scheduler="edf-elastic")
    assert run.jobs["completion_s"][0] == pytest.approx(360 / 1.8)        # 2 GPUs: 1.8 iterations/s


# -- the plan and the leftovers ----------------------------------------------------------------------------------------
def _brute_lend(jobs, target, spare):
    """Reference: rescan every job per step (the loop the heap replaces)."""
    while spare > 0:
        best = None
        for key, lad, work in jobs:
            g = target[key]
            k = lad.best_upto(g) + 1
            if k >= len(lad.counts) or lad.counts[k] - g > spare:
                continue
            now = math.inf if g <= 0 else work / lad.speeds[k - 1]
            gain = (now - work / lad.speeds[k]) / (lad.counts[k] - g)
            if best is None or gain > best[0]:
                best = (gain, key, lad.counts[k])
        if best is None:
            break
        spare -= best[2] - target[best[1]]
        target[best[1]] = best[2]
    return spare


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(st.floats(0.1, 10.0), min_size=1, max_size=5), st.floats(1.0, 1000.0),
                          st.integers(0, 3)), min_size=1, max_size=6), st.integers(0, 20))
def test_the_heap_of_leftover_steps_lends_as_the_rescanning_loop(specs, spare):
    jobs, target = [], {}
    for i, (speeds, work, start) in enumerate(specs):
        lad = Ladder.of_speeds({2 ** k: s for k, s in enumerate(speeds)})
        jobs.append((i, lad, work))
        target[i] = lad.counts[min(start, len(lad.counts)) - 1] if start else 0
    t1, t2 = dict(target), dict(target)
    assert lend(jobs, t1, spare) == _brute_lend(jobs, t2, spare)
    assert t1 == t2


def test_minimum_satisfactory_shares_change_over_time():
    lin = Ladder([1, 2, 4], [1.0, 2.0, 4.0])
    plans, failed = plan_jobs([("a", lin, 200.0, 100.0), ("b", lin, 300.0, 125.0)], 0.0, 4)
    assert plans == {"a": (2, 100.0), "b": (2, 100.0)} and failed == []   # b: 2 GPUs now, 4 from t = 100
    plans, _ = plan_jobs([("a", lin, 200.0, 100.0), ("b", lin, 300.0, 125.0)], 0.0, 4, share="max")
    assert plans == {"a": (4, 50.0), "b": (0, 50.0)}  # EDF's plan: a on all 4 GPUs until 50, then b


# -- the policies ------------------------------------------------------------------------------------------------------
def test_elasticflow_replans_where_the_fixed_reservation_declines():
    # a long job with a loose deadline, then an urgent one: re-planning shrinks the long job for a while,
    # a fixed reservation cannot
    row = ((1, 1.0), (2, 2.0), (4, 4.0))
    wl = DeadlineWorkload(paper_cluster(1, 4), (_job("long", 0.0, 600.0, 2000, row),
                                                _job("urgent", 10.0, 110.0, 200, row)))
    new, fixed = simulate(wl, scheduler="elasticflow"), simulate(wl, scheduler="elasticflow-fixed")
    assert (new.summary["deadlines_met"], new.summary["declined"]) == (2, 0)
    assert fixed.summary["declined"] == 1
    segs = {j.id: [pl.gpus for *_, pl, _ in j.segments] for j in new.job_objects}
    assert len(set(segs["long"])) > 1                # its allocation changed over time
    assert new.summary["migrations"] >= 1


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([1, 2]))
def test_elasticflow_admitted_jobs_with_one_gpu_count_meet_their_deadlines(seed, count):
    # with one allowed count per job the deadline-order plan is monotone (a job with less work left and at least
    # as many free GPUs ends no later and uses no more), so admission is a guarantee (no overheads); with several
    # counts a smaller re-planned share can push a later job past its deadline (docs/algorithms/elasticflow.md)
    base = elasticflow_shaped_workload(12, nodes=2, gpus_per_node=4, seed=seed)
    wl = base.with_jobs(replace(j, gpu_counts=(count,)) for j in base.jobs)
    run = simulate(wl, scheduler="elasticflow")
    declined = set(run.admission.declined)
    df = run.jobs
    admitted = df[~df["id"].isin(declined)]
    assert (admitted["completion_s"] <= admitted["deadline_s"] + 1e-6).all()
    assert run.summary["declined"] == len(declined)


def test_the_baselines_are_registered_apart_from_paper_003s():
    names = set(scheduler_names("deadline"))
    assert {"elasticflow", "elasticflow-fixed", "elasticflow-noadmit", "edf-elastic", "edf-admission",
            "gandiva-ts", "edf", "themis"} <= names


def test_elastic_edf_gives_each_job_in_deadline_order_its_largest_useful_count():
    row = ((1, 1.0), (2, 1.8), (4, 1.5))            # 4 GPUs are slower than 2: never useful
    wl = DeadlineWorkload(paper_cluster(1, 4), (_job("a", 0.0, 500.0, 100, row), _job("b", 0.0, 400.0, 100, row),
                                                _job("c", 0.0, 300.0, 100, row)))
    run = simulate(wl, scheduler="edf-elastic")
    first = {j.id: j.segments[0][2].gpus for j in run.job_objects}
    assert first == {"c": 2, "b": 2, "a": 2}         # c, b on 2 GPUs each; a waits, then gets 2
    assert run.jobs.set_index("id")["first_start_s"]["a"] > 0


def test_gandiva_time_slices_jobs_on_their_requested_counts():
    row = ((1, 1.0), (2, 2.0))
    wl = DeadlineWorkload(paper_cluster(1, 2), (_job("a", 0.0, 1e5, 300, row, gpus=2),
                                                _job("b", 0.0, 1e5, 300, row, gpus=2)))
    run = simulate(wl, scheduler="gandiva-ts")
    for j in run.job_objects:
        assert all(pl.gpus == 2 for *_, pl, _ in j.segments)
        assert len(j.segments) > 1                    # suspended and resumed: time slices
    assert run.summary["preemptions"] >= 2
    assert run.jobs["completion_s"].max() == pytest.approx(300.0)   # 600 iterations at 2/s, no overhead


def test_rescaling_stalls_grow_with_the_gpu_count_and_default_to_none():
    row = ((1, 1.0), (2, 2.0), (4, 4.0))
    wl = DeadlineWorkload(paper_cluster(1, 4), (_job("long", 0.0, 5000.0, 2000, row),
                                                _job("urgent", 10.0, 400.0, 200, row)))
    free = simulate(wl, scheduler="elasticflow")
    slow = simulate(wl, scheduler="elasticflow", launch=RescaleOverhead(migration_per_gpu_s=1.0))
    same = simulate(wl, scheduler="elasticflow", launch=RescaleOverhead())
    assert same.jobs["completion_s"].tolist() == free.jobs["completion_s"].tolist()
    assert free.summary["migrations"] >= 1
    assert slow.jobs["completion_s"].max() > free.jobs["completion_s"].max()


# -- best-effort jobs --------------------------------------------------------------------------------------------------
def test_best_effort_jobs_are_reported_apart_from_the_deadline_ratio():
    wl = DeadlineWorkload(paper_cluster(1, 2), (_job("a", 0.0, 400.0, 300), _job("b", 0.0, 50.0, 300),
                                                _job("c", 0.0, None, 100, best_effort=True)))
    for name in ("elasticflow", "edf-elastic", "drs"):
        run = simulate(wl, scheduler=name)
        m = run.custom["deadline"]
        assert m["jobs"] == 2 and m["best_effort_jobs"] == 1, name
        assert m["r_trace"] == m["deadlines_met"] / 2
        assert run.summary["best_effort_finished"] == 1
        assert run.jobs.set_index("id")["best_effort"].to_dict() == {"a": False, "b": False, "c": True}
    plain = simulate(DeadlineWorkload(paper_cluster(1, 2), wl.jobs[:2]), scheduler="elasticflow")
    assert "best_effort" not in plain.jobs and "best_effort_jobs" not in plain.summary


def test_the_elasticflow_shaped_generator_is_deterministic_and_has_non_monotone_rows():
    a, b = elasticflow_shaped_workload(30, seed=4), elasticflow_shaped_workload(30, seed=4)
    assert a.jobs == b.jobs and a.total_gpus == 64
    rows = {j.throughput for j in a.jobs}
    assert any(any(v2 < v1 for (_, v1), (_, v2) in zip(r, r[1:])) for r in rows)
    assert np.all([j.deadline_s > j.arrival_s for j in a.jobs])


# -- the exact side ----------------------------------------------------------------------------------------------------
def test_the_exact_models_take_table_jobs_and_refuse_best_effort_ones():
    from optsched.exact.deadline import brute_force_deadline, deadline_upper_bound, solve_deadline_cpsat

    row = ((1, 1.0), (2, 0.8), (4, 2.4))             # non-monotone: 2 GPUs slower than 1
    jobs = (_job("a", 0.0, 300.0, 240, row), _job("b", 60.0, 240.0, 240, row), _job("c", 0.0, 600.0, 360, row))
    wl = DeadlineWorkload(paper_cluster(2, 2), jobs, time_unit_s=60.0)
    opt, brute = solve_deadline_cpsat(wl, time_limit=20, seed=0), brute_force_deadline(wl)
    assert opt.status.value == "optimal" and opt.objective == brute.objective      # two methods agree
    bound = deadline_upper_bound(wl).value
    assert opt.objective <= bound + 1e-9
    for name in ("elasticflow", "edf-elastic", "elasticflow-fixed"):
        assert simulate(wl, scheduler=name).summary["deadlines_met"] <= bound + 1e-9
    be = wl.with_jobs([*jobs, _job("z", 0.0, None, 10, row, best_effort=True)])
    with pytest.raises(InstanceError, match=r"best_effort \(job 'z'\)"):
        solve_deadline_cpsat(be, time_limit=5)
    assert deadline_upper_bound(be).value == bound


def test_a_policy_with_wake_ups_launches_between_rounds_and_is_not_bounded_by_the_grid_optimum():
    # issue 28's reproducer (docs/algorithms/drs.md, section 6): elasticflow-fixed wakes at a reservation's start
    from optsched.exact.deadline import deadline_upper_bound, solve_deadline_cpsat
    from optsched.generators.deadline import tiny_deadline_workload

    wl = tiny_deadline_workload(4, nodes=4, gpus_per_node=1, intra_bandwidth=2.0, inter_bandwidth=20.0, seed=146)
    run = simulate(wl, scheduler="elasticflow-fixed", round_s=60.0)
    starts = [t0 for j in run.job_objects for t0, *_ in j.segments]
    assert any(not float(t / 60.0).is_integer() for t in starts)          # a launch between rounds
    opt = solve_deadline_cpsat(wl, time_limit=10, seed=0)
    assert run.summary["deadlines_met"] > opt.objective                 # not a grid schedule: not bounded by it
    assert run.summary["deadlines_met"] <= deadline_upper_bound(wl).value + 1e-9


def test_the_generate_command_writes_an_elasticflow_shaped_format_2_workload(tmp_path, capsys):
    out = tmp_path / "ef.json"
    assert main(["generate", "deadline", "--elasticflow", "12", "--seed", "3", "-o", str(out)]) == 0
    wl = read_deadline_workload(out)
    assert json.loads(out.read_text())["format"] == FORMAT_V2
    assert wl.jobs == elasticflow_shaped_workload(12, seed=3).jobs
    capsys.readouterr()
    assert main(["simulate", str(out), "--scheduler", "elasticflow", "--json", "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["jobs"] == 12
