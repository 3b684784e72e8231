"""Total-JCT instance files (format optsched/total-jct@1) and their command line: generate -> solve ->
evaluate, the round trip, the validation errors (field path and job named, exit code 2)."""

from __future__ import annotations

import json
import math

import pytest

import optsched as io  # load, save and from_dict are the package doors
from cli import exit_code
from optsched.cli import main
from optsched.errors import InstanceError
from optsched.exact.total_jct import brute_force_total_jct, solve_total_jct
from optsched.generators.total_jct import random_pipeline_jobs, random_total_jct_instance
from optsched.problems.total_jct import FORMAT


def test_round_trip_keeps_every_field(tmp_path):
    inst = random_total_jct_instance(4, 3)
    path = tmp_path / "a.json"
    io.save(inst, path)
    back = io.load(path)
    assert back == inst  # cluster, jobs, modes (shape, duration, alpha), time unit
    assert [m.stages for j in back.jobs for m in j.modes] == [m.stages for j in inst.jobs for m in j.modes]
    assert back.jobs[0].alpha_tilde_min == inst.jobs[0].alpha_tilde_min
    assert json.loads(path.read_text())["format"] == FORMAT


def test_optional_fields_may_be_left_out():
    servers = [{"id": "a", "gpus": 2}, {"id": "b", "gpus": 2}]
    inst = io.from_dict({"format": FORMAT, "cluster": {"servers": servers},
                         "jobs": [{"id": "x", "release": 0, "gpus": 2,
                                   "modes": [{"shape": [2], "duration": 4}, {"shape": [1, 1], "duration": 3}]},
                                  {"id": "y", "release": 1, "gpus": 1, "weight": 2,
                                   "modes": [{"shape": [1], "duration": 2}]}]})
    assert inst.time_unit_s == 1.0 and inst.jobs[1].weight == 2 and inst.jobs[0].modes[0].alpha is None
    # the two exact solvers agree on the file's instance
    assert solve_total_jct(inst, time_limit=10).objective == brute_force_total_jct(inst).objective


def _base() -> dict:
    return {"format": FORMAT, "cluster": {"servers": [{"id": "s0", "gpus": 2}]},
            "jobs": [{"id": "a", "release": 0, "gpus": 2, "modes": [{"shape": [2], "duration": 3}]}]}


@pytest.mark.parametrize("edit, field, message", [
    (lambda d: d["jobs"][0].pop("release"), "jobs[0].release", "missing field"),
    (lambda d: d["jobs"][0]["modes"][0].update(duration="3"), "jobs[0].modes[0].duration", "must be a number"),
    (lambda d: d["jobs"][0]["modes"][0].update(shape=[1, 1]), "jobs[0].modes[0].shape", "does not fit"),
    (lambda d: d["jobs"][0]["modes"][0].update(shape=[1.5]), "jobs[0].modes[0].shape", "positive integers"),
    (lambda d: d["jobs"][0].update(gpus=0), "jobs[0].gpus", "positive integer"),
    (lambda d: d["jobs"][0]["modes"][0].update(stages=[[1], [1]]), "jobs[0].modes[0].stages", "per server"),
    (lambda d: d["jobs"].append(dict(d["jobs"][0])), "jobs[1].id", "duplicate"),
    (lambda d: d["jobs"][0].update(release=-1), "jobs[0].release", ">= 0"),
])
def test_bad_files_name_the_field_and_the_job(edit, field, message):
    data = _base()
    edit(data)
    with pytest.raises(InstanceError, match=message) as exc:
        io.from_dict(data)
    assert exc.value.field == field and exc.value.job == "a"


def test_generator_is_seeded_and_matches_the_benchmark_rule():
    assert random_total_jct_instance(5, 2) == random_total_jct_instance(5, 2)
    assert random_total_jct_instance(5, 2) != random_total_jct_instance(5, 3)
    jobs = random_pipeline_jobs(6, 1)
    inst = random_total_jct_instance(6, 1)
    # releases in [0, 5] s become 10 ms units rounded up; every job has every shape of its GPUs on 2 x 4
    assert [j.release for j in inst.jobs] == [math.ceil(r / 0.01 - 1e-9) for _, r, *_ in jobs]
    assert all(0 <= j.release <= 500 for j in inst.jobs)
    assert all(len(j.modes) >= 1 and all(sum(m.shape) == j.gpus for m in j.modes) for j in inst.jobs)


def test_cli_generate_solve_evaluate(tmp_path, capsys):
    inst, sched = tmp_path / "i.json", tmp_path / "s.json"
    assert main(["generate", "total-jct", "--jobs", "4", "--seed", "1", "-o", str(inst)]) == 0
    assert main(["solve", str(inst), "--time-limit", "10", "-o", str(sched)]) == 0
    out = capsys.readouterr().out
    assert "algorithm=total-jct-bnb status=optimal" in out
    data = json.loads(sched.read_text())
    loaded = io.load(inst)
    brute = brute_force_total_jct(loaded)
    assert data["objective"] == brute.objective
    assert data["makespan"] == max(j["completion"] for j in data["jobs"])
    release = {j.id: j.release for j in loaded.jobs}
    avg = sum(j["completion"] - release[j["id"]] for j in data["jobs"]) / len(data["jobs"])
    assert main(["evaluate", str(inst), str(sched)]) == 0
    assert f"objective={brute.objective} makespan={data['makespan']} average JCT={avg:.2f}" \
        in capsys.readouterr().out


def test_cli_rejects_bad_input_with_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    data = _base()
    data["jobs"][0]["modes"][0]["duration"] = -2
    bad.write_text(json.dumps(data))
    assert main(["solve", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "jobs[0].modes[0].duration" in err and "'a'" in err and "Traceback" not in err
    # flag values are checked by argparse (one-line usage error, exit 2), the seed by the build step
    for flag, value in (("--jobs", "0"), ("--time-unit", "0"), ("--nic-gbps", "-1")):
        with pytest.raises(SystemExit) as stop:
            main(["generate", "total-jct", flag, value, "-o", str(tmp_path / "x.json")])
        assert stop.value.code == 2 and flag in capsys.readouterr().err
    assert exit_code(["generate", "total-jct", "--seed", "-1", "-o", str(tmp_path / "x.json")]) == 2
    assert "--seed" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()
    # a schedule that overloads the server is rejected, not scored
    good = tmp_path / "good.json"
    data = _base()
    data["jobs"].append({"id": "b", "release": 0, "gpus": 1, "modes": [{"shape": [1], "duration": 3}]})
    good.write_text(json.dumps(data))
    sched = tmp_path / "s.json"
    sched.write_text(json.dumps({"format": "optsched/schedule@1", "jobs": [
        {"id": "a", "start": 0, "placement": {"s0": 2}}, {"id": "b", "start": 1, "placement": {"s0": 1}}]}))
    assert main(["evaluate", str(good), str(sched)]) == 2
    assert "s0" in capsys.readouterr().err
