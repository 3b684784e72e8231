"""optsched.load / optsched.save dispatch every registered format, the simulator's workload included."""

import json

import pytest

import optsched
from optsched.errors import InstanceError
from optsched.problems.workload import Workload, WorkloadJob


def test_workload_round_trip_through_load_and_save(tmp_path):
    wl = Workload((WorkloadJob("a", 0, 2, 100, 1.0), WorkloadJob("b", 5.5, 1, 10, 0.5, user="u1", group="g")))
    path = tmp_path / "w.json"
    optsched.save(wl, path)
    back = optsched.load(path)
    assert isinstance(back, Workload)
    assert back.jobs == wl.jobs


def test_load_names_the_job_of_a_bad_workload(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": "optsched/workload@1",
                                "jobs": [{"id": "x", "arrival_s": 0, "gpus": 0, "iterations": 5,
                                          "iteration_time_s": 1.0}]}))
    with pytest.raises(InstanceError) as err:
        optsched.load(path)
    assert "gpus" in str(err.value) and "x" in str(err.value)
