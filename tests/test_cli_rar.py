"""``optsched generate rar`` -> ``solve`` -> ``evaluate`` through the CLI, and the section-7 generator."""

from __future__ import annotations

import gc
import json
import re
from collections import Counter

import pytest

import optsched
from cli import exit_code
from optsched.cli import main
from optsched.generators.rar import mobihoc22_preset, random_rar_instance
from optsched.perf.rar import iteration_time, tau_bounds


@pytest.mark.parametrize("algorithm", ["sjf-bco", "ff", "ls", "rand"])
def test_generate_solve_evaluate_round_trip(tmp_path, capsys, algorithm):
    inst_path, sched_path = tmp_path / "i.json", tmp_path / "s.json"
    assert main(["generate", "rar", "--jobs", "12", "--servers", "3", "--seed", "5", "-o", str(inst_path)]) == 0
    out = capsys.readouterr().out
    assert "12 jobs" in out and "3 servers" in out and str(inst_path) in out
    assert json.loads(inst_path.read_text())["format"] == "optsched/rar-ddls@1"
    assert main(["solve", str(inst_path), "-a", algorithm, "-o", str(sched_path), "--seed", "3"]) == 0
    solved = capsys.readouterr().out
    makespan = int(re.search(r"objective=(\d+)", solved).group(1))
    assert json.loads(sched_path.read_text())["makespan"] == makespan
    assert main(["evaluate", str(inst_path), str(sched_path)]) == 0
    assert f"feasible: makespan={makespan} " in capsys.readouterr().out
    assert gc.isenabled()  # the command pauses the collector and gives it back
    # the library agrees with the files
    inst = optsched.load(inst_path)
    assert optsched.evaluate(inst, optsched.load_schedule(sched_path)).makespan == makespan


def test_evaluate_rejects_a_tampered_schedule(tmp_path, capsys):
    inst_path, sched_path = tmp_path / "i.json", tmp_path / "s.json"
    main(["generate", "rar", "--jobs", "6", "--servers", "2", "--seed", "1", "-o", str(inst_path)])
    main(["solve", str(inst_path), "-o", str(sched_path)])
    capsys.readouterr()
    data = json.loads(sched_path.read_text())
    data["jobs"][0]["start"] = -3
    sched_path.write_text(json.dumps(data))
    assert main(["evaluate", str(inst_path), str(sched_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "negative start" in err[0]
    assert gc.isenabled()  # given back after an error too


def test_generate_preset_and_bad_arguments(tmp_path, capsys):
    path = tmp_path / "p.json"
    assert main(["generate", "rar", "--preset", "mobihoc22", "--seed", "3", "-o", str(path)]) == 0
    out = capsys.readouterr().out
    assert "160 jobs (80x1, 14x2, 26x4, 30x8, 8x16, 2x32 GPUs), 20 servers" in out
    assert optsched.load(path) == mobihoc22_preset(3)
    assert exit_code(["generate", "rar", "--jobs", "0", "-o", str(tmp_path / "x.json")]) == 2
    assert "--jobs" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("seed, xi1", [(0, None), (1, None), (7, None), (2, 1.0)])
def test_mobihoc22_preset_is_the_papers_setting(seed, xi1):
    inst = mobihoc22_preset(seed, contention_xi=xi1)
    assert Counter(j.gpus for j in inst.jobs) == {1: 80, 2: 14, 4: 26, 8: 30, 16: 8, 32: 2}
    assert [j.gpus for j in inst.jobs] != sorted(j.gpus for j in inst.jobs)   # arrival order, not by size
    assert len(inst.cluster.servers) == 20 and inst.horizon == 1200
    assert {s.gpus for s in inst.cluster.servers} <= {4, 8, 16, 32}
    if xi1 is None:
        assert inst.contention_xi == inst.overhead_xi                          # xi_1 = xi_2
    else:                                                                      # the contention-active variant
        assert inst.contention_xi == xi1 != inst.overhead_xi
    for j in inst.jobs:
        assert 1000 <= j.iterations <= 6000 and j.lam == 1.0
        lo, hi = tau_bounds(inst, j)
        assert 0.01 <= lo <= hi <= 0.05                                     # every placement and contention
        # contention + overhead: the worst case exceeds the job's one-server time by at most 15% of it
        one_server = iteration_time(inst, j, 1, 0)
        assert hi - one_server <= 0.15 * hi + 1e-12
    assert mobihoc22_preset(seed, contention_xi=xi1) == inst                 # seeded


def test_random_instances_are_valid_and_seeded():
    a = random_rar_instance(30, 5, seed=4, horizon=900)
    assert a == random_rar_instance(30, 5, seed=4, horizon=900) != random_rar_instance(30, 5, seed=5)
    assert a.n_jobs == 30 and len(a.cluster.servers) == 5 and a.horizon == 900
    assert all(j.gpus <= a.cluster.total_gpus for j in a.jobs)
