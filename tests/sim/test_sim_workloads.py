"""The workload format optsched/workload@1 (JSON and CSV): round trips and every validation error, with the field
path and the job named."""

from __future__ import annotations

import json

import pytest

from optsched.errors import InstanceError
from optsched.problems.workload import FORMAT, as_workload, workload_from_csv_text, workload_from_dict, workload_to_dict
from optsched.sim import Workload, WorkloadJob, read_workload, simulate, write_workload


def _wl():
    return Workload((WorkloadJob("a", 0, 2, 100, 0.5, model="ResNet-50", deadline_s=400.0, user="u1"),
                     WorkloadJob("b", 12.5, 1, 10.25, 2.0, predicted_iterations=12, group="g", tracked=False)),
                    name="w", seed=7, meta={"source": "test", "load_jph": 3.0})


@pytest.mark.parametrize("suffix", ["json", "csv"])
def test_round_trip(tmp_path, suffix):
    wl = _wl()
    p = tmp_path / f"w.{suffix}"
    write_workload(wl, p)
    back = read_workload(p)
    assert back.jobs == wl.jobs
    if suffix == "json":
        assert (back.name, back.seed, back.meta) == ("w", 7, {"source": "test", "load_jph": 3.0})
    else:
        assert back.name == "w"  # the file stem


def test_json_document_shape():
    d = workload_to_dict(_wl())
    assert d["format"] == FORMAT and d["seed"] == 7
    assert d["jobs"][0] == {"id": "a", "arrival_s": 0.0, "gpus": 2, "iterations": 100.0, "iteration_time_s": 0.5,
                            "model": "ResNet-50", "deadline_s": 400.0, "user": "u1"}
    assert d["jobs"][1]["tracked"] is False and d["jobs"][1]["predicted_iterations"] == 12.0


def _doc(**job_changes):
    job = {"id": "j1", "arrival_s": 0, "gpus": 2, "iterations": 10, "iteration_time_s": 1.0}
    job.update(job_changes)
    for k in [k for k, v in job.items() if v is _DROP]:
        del job[k]
    return {"format": FORMAT, "jobs": [{"id": "j0", "arrival_s": 0, "gpus": 1, "iterations": 5,
                                        "iteration_time_s": 1.0}, job]}


_DROP = object()


@pytest.mark.parametrize("changes, field, words", [
    ({"gpus": 0}, "jobs[1].gpus", "integer >= 1"),
    ({"gpus": 1.5}, "jobs[1].gpus", "integer >= 1"),
    ({"gpus": True}, "jobs[1].gpus", "integer >= 1"),
    ({"arrival_s": -1}, "jobs[1].arrival_s", ">= 0"),
    ({"arrival_s": "soon"}, "jobs[1].arrival_s", "finite number"),
    ({"iterations": 0}, "jobs[1].iterations", "> 0"),
    ({"iterations": float("inf")}, "jobs[1].iterations", "finite"),
    ({"iteration_time_s": -0.1}, "jobs[1].iteration_time_s", "> 0"),
    ({"predicted_iterations": 0}, "jobs[1].predicted_iterations", "> 0"),
    ({"deadline_s": -5, "arrival_s": 10}, "jobs[1].deadline_s", "precede the arrival"),
    ({"tracked": "yes"}, "jobs[1].tracked", "true or false"),
    ({"model": 3}, "jobs[1].model", "string"),
    ({"iterations": _DROP}, "jobs[1].iterations", "missing field"),
    ({"colour": "red"}, "jobs[1]", "unknown field"),
])
def test_json_validation_names_field_and_job(changes, field, words):
    with pytest.raises(InstanceError) as ei:
        workload_from_dict(_doc(**changes))
    assert ei.value.field == field
    assert ei.value.job == "j1"
    assert words in ei.value.reason


def test_json_document_level_errors():
    with pytest.raises(InstanceError) as ei:
        workload_from_dict({"format": "optsched/rar-ddls@1", "jobs": []})
    assert ei.value.field == "format"
    with pytest.raises(InstanceError) as ei:
        workload_from_dict({"format": FORMAT, "jobs": {}})
    assert ei.value.field == "jobs"
    doc = _doc()
    doc["jobs"][1]["id"] = "j0"
    with pytest.raises(InstanceError) as ei:
        workload_from_dict(doc)
    assert (ei.value.field, ei.value.job) == ("jobs[1].id", "j0") and "duplicate" in ei.value.reason
    with pytest.raises(InstanceError) as ei:
        workload_from_dict(_doc(id=""))
    assert ei.value.field == "jobs[1].id"


def test_malformed_json_file(tmp_path):
    p = tmp_path / "w.json"
    p.write_text('{"format": "optsched/workload@1", "jobs": [', encoding="utf-8")
    with pytest.raises(InstanceError, match="malformed JSON"):
        read_workload(p)
    with pytest.raises(InstanceError, match="no such file"):
        read_workload(tmp_path / "missing.csv")


CSV_HEAD = "id,arrival_s,gpus,iterations,iteration_time_s,tracked\n"


@pytest.mark.parametrize("text, field, job, words", [
    (CSV_HEAD + "a,0,1,10,1,true\nb,5,x,10,1,true\n", "jobs[1].gpus", "b", "must be a number"),
    (CSV_HEAD + "a,0,1,10,1,true\nb,5,2.5,10,1,true\n", "jobs[1].gpus", "b", "integer"),
    (CSV_HEAD + "a,0,1,10,1,maybe\n", "jobs[0].tracked", "a", "true/false"),
    (CSV_HEAD + "a,0,1,10,1,true\na,3,1,10,1,true\n", "jobs[1].id", "a", "duplicate"),
    (CSV_HEAD + "a,0,1,,1,true\n", "jobs[0].iterations", "a", "missing value"),
    (CSV_HEAD + "a,-3,1,10,1,true\n", "jobs[0].arrival_s", "a", ">= 0"),
    (CSV_HEAD + "a,0,1,10\n", "jobs[0]", None, "cells"),
    ("id,arrival_s,gpus,iterations\na,0,1,10\n", "header", None, "iteration_time_s"),
    ("id,arrival_s,gpus,iterations,iteration_time_s,colour\n", "header", None, "unknown column"),
    ("", "header", None, "empty CSV"),
])
def test_csv_validation(text, field, job, words):
    with pytest.raises(InstanceError) as ei:
        workload_from_csv_text(text)
    assert (ei.value.field, ei.value.job) == (field, job)
    assert words in ei.value.reason


def test_csv_defaults_and_blank_lines():
    wl = workload_from_csv_text("id,arrival_s,gpus,iterations,iteration_time_s,model,deadline_s\n"
                                "a,0,1,10,1,,\n\nb,1,2,5,0.5,VGG,9\n")
    assert [j.id for j in wl] == ["a", "b"]
    assert wl.jobs[0].model == "" and wl.jobs[0].deadline_s is None and wl.jobs[0].tracked is True
    assert wl.jobs[1].deadline_s == 9.0 and wl.jobs[1].gpus == 2


def test_csv_cannot_carry_spec(tmp_path):
    wl = Workload((WorkloadJob("a", 0, 1, 1, 1.0, spec={"k": 1}),))
    with pytest.raises(InstanceError) as ei:
        write_workload(wl, tmp_path / "w.csv")
    assert (ei.value.field, ei.value.job) == ("spec", "a")
    write_workload(wl, tmp_path / "w.json")  # JSON carries a JSON-able spec
    assert json.loads((tmp_path / "w.json").read_text())["jobs"][0]["spec"] == {"k": 1}


def test_job_too_large_for_cluster_named_at_simulation():
    wl = Workload((WorkloadJob("small", 0, 1, 1, 1.0), WorkloadJob("huge", 0, 9, 1, 1.0)))
    with pytest.raises(InstanceError) as ei:
        simulate(wl, servers=2, gpus_per_server=4)
    assert (ei.value.field, ei.value.job) == ("gpus", "huge")


def test_track_window_and_as_workload(tmp_path):
    jobs = [WorkloadJob(f"j{i}", 10 - i, 1, 1, 1.0) for i in range(6)]  # arrival order is reversed
    wl = Workload(tuple(jobs)).track_window(0, 2)
    # the first two *arrivals* are j5 (t=5) and j4 (t=6)
    assert [j.id for j in wl if j.tracked] == ["j4", "j5"]
    assert wl.meta["track_window"] == [0, 2]
    assert as_workload(jobs).jobs == tuple(jobs)
    one = {"id": "x", "arrival_s": 0, "gpus": 1, "iterations": 2, "iteration_time_s": 1}
    assert as_workload([one]).jobs[0].id == "x"
    write_workload(wl, tmp_path / "w.json")
    assert as_workload(str(tmp_path / "w.json")).jobs == wl.jobs
    with pytest.raises(InstanceError):
        as_workload(42)
