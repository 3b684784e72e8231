"""Every validation error of a RAR-DDLS instance file, through ``optsched.load`` (the error names the field
and the job) and through the CLI (``python -m optsched solve BAD.json``: exit code 2, one line on stderr, no
traceback)."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys

import pytest

import optsched
from optsched import InstanceError
from optsched.generators.rar import tiny_rar_example
from optsched.problems.rar import to_dict as rar_to_dict

# tiny_rar_example: s0, s1 with 4 GPUs each (8 in all); j0 (G = 4), j1 (G = 2).
BASE = rar_to_dict(tiny_rar_example())


def mutate(fn):
    data = copy.deepcopy(BASE)
    fn(data)
    return data


def _set(path, value):
    def fn(d):
        *head, last = path
        for k in head:
            d = d[k]
        d[last] = value
    return fn


def _del(path):
    def fn(d):
        *head, last = path
        for k in head:
            d = d[k]
        del d[last]
    return fn


# (name, mutated JSON text, expected field, expected job, message fragment)
CASES = [
    ("malformed-json", '{"format": "optsched/rar-ddls@1", "jobs": [', None, None, "malformed JSON"),
    ("missing-iterations", mutate(_del(["jobs", 1, "iterations"])), "jobs[1].iterations", "j1", "missing field"),
    ("missing-cluster-field", mutate(_del(["cluster", "inter_bandwidth"])), "cluster.inter_bandwidth", None,
     "missing field"),
    ("missing-horizon", mutate(_del(["horizon"])), "horizon", None, "missing field"),
    ("non-numeric-gradient", mutate(_set(["jobs", 0, "gradient_size"], "big")), "jobs[0].gradient_size", "j0",
     "must be a number"),
    ("non-numeric-gpus", mutate(_set(["jobs", 1, "gpus"], "2")), "jobs[1].gpus", "j1", "must be a number"),
    ("non-numeric-horizon", mutate(_set(["horizon"], None)), "horizon", None, "must be a number"),
    ("zero-gpus", mutate(_set(["jobs", 1, "gpus"], 0)), "jobs[1].gpus", "j1", "positive integer"),
    ("negative-gpus", mutate(_set(["jobs", 0, "gpus"], -2)), "jobs[0].gpus", "j0", "positive integer"),
    ("zero-iterations", mutate(_set(["jobs", 0, "iterations"], 0)), "jobs[0].iterations", "j0", "positive integer"),
    ("negative-iterations", mutate(_set(["jobs", 1, "iterations"], -5)), "jobs[1].iterations", "j1",
     "positive integer"),
    ("duplicate-id", mutate(_set(["jobs", 1, "id"], "j0")), "jobs[1].id", "j0", "duplicate job id"),
    ("larger-than-cluster", mutate(_set(["jobs", 1, "gpus"], 9)), "jobs[1].gpus", "j1",
     "needs 9 GPUs but the cluster has 8"),
    # j0 (G = 4, m = 0.05, M = 32, df = 0.0005, C = 100, b^i = 50, b^e = 5, xi_2 = 0.002, xi_1 = 0.5, alpha = 0.2)
    # with backward time 0.975: on one server tau = 0.975 + 0.016 + 2*0.0375/50 + 0.0375/100 + 0.002
    # = 0.994875 < 1, but split over both servers (p <= 2, k = max(1, 0.5*2) = 1, B = 5):
    # tau = 0.975 + 0.016 + 2*0.0375/5 + 0.000375 + 0.004 = 1.010375 >= 1 -> floor(1/tau) = 0: rejected.
    ("tau-at-least-one-slot", mutate(_set(["jobs", 0, "backward_time"], 0.975)), "jobs[0]", "j0",
     "per-iteration time reaches 1.01 slots (2 servers"),
]


def write(tmp_path, name, data):
    path = tmp_path / f"{name}.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_base_is_valid_and_the_tau_case_is_valid_on_one_server(tmp_path):
    assert optsched.load(write(tmp_path, "ok", BASE)).n_jobs == 2
    # the same job with backward time 0.975 is fine when no split placement exists (one 8-GPU server)
    ok = mutate(_set(["jobs", 0, "backward_time"], 0.975))
    ok["cluster"]["servers"] = [{"id": "s0", "gpus": 8}]
    assert optsched.load(write(tmp_path, "one", ok)).jobs[0].backward_time == 0.975


@pytest.mark.parametrize("name, data, field, job, message", CASES, ids=[c[0] for c in CASES])
def test_load_names_field_and_job(tmp_path, name, data, field, job, message):
    with pytest.raises(InstanceError, match=re.escape(message)) as err:
        optsched.load(write(tmp_path, name, data))
    assert err.value.field == field
    assert err.value.job == job
    if field:
        assert field in str(err.value)


@pytest.mark.parametrize("name, data, field, job, message", CASES, ids=[c[0] for c in CASES])
def test_cli_exits_2_with_one_line(tmp_path, name, data, field, job, message):
    path = write(tmp_path, name, data)
    proc = subprocess.run([sys.executable, "-m", "optsched", "solve", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert message in lines[0] and (field is None or field in lines[0])
    if job:
        assert f"job {job!r}" in lines[0]
    assert proc.stdout == ""
