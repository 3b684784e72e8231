"""One door per problem: load / save / solve / evaluate / generate go through the registry for every problem, the
registry's algorithm tables match what the modules register, and results pickle (issue 11's defects)."""

from __future__ import annotations

import concurrent.futures
import copy
import importlib
import json
import os
import pickle
import stat

import pytest

import optsched
from optsched import registry
from optsched.cli import main
from optsched.io import atomic_open

SOLVABLE = {  # problem name -> a small instance, generated through the door
    "rar-ddls": lambda: optsched.generate("rar", jobs=5, servers=2, seed=3),
    "total-jct": lambda: optsched.generate("total-jct", n=3, seed=1),
    "placement": lambda: optsched.generate("placement", seed=4, servers=3),
}


@pytest.mark.parametrize("name", sorted(SOLVABLE))
def test_every_offline_problem_solves_and_evaluates_through_the_doors(name, tmp_path):
    inst = SOLVABLE[name]()
    prob = registry.problem_of(inst)
    assert prob.name == name and prob is registry.get_problem(name)
    res = optsched.solve(inst)  # no algorithm given: the problem's own default
    assert res.algorithm == prob.default_algorithm and res.schedule is not None
    ev = optsched.evaluate(inst, res.schedule)
    assert ev.objective == pytest.approx(res.objective)
    assert ev.summary().startswith("feasible")
    path = tmp_path / "i.json"
    optsched.save(inst, path)
    assert optsched.load(path) == inst
    assert json.loads(path.read_text())["format"] == prob.format


def test_evaluate_scores_a_total_jct_schedule():
    inst = SOLVABLE["total-jct"]()
    res = optsched.solve(inst, "total-jct-greedy")
    ev = optsched.evaluate(inst, res.schedule)
    assert ev.objective == res.objective >= inst.trivial_lower_bound()
    assert ev.makespan == max(j.completion for j in ev.schedule)


def test_an_algorithm_of_another_problem_is_refused_by_name():
    with pytest.raises(optsched.InstanceError, match="solves rar-ddls, not total-jct"):
        optsched.solve(SOLVABLE["total-jct"](), "sjf-bco")


def test_optsched_algorithms_stays_the_subpackage_after_solving():
    inst = SOLVABLE["rar-ddls"]()
    optsched.solve(inst, "ff")
    assert optsched.algorithms.__name__ == "optsched.algorithms"
    optsched.solve(inst, "ff")
    assert optsched.algorithms is importlib.import_module("optsched.algorithms")
    assert callable(optsched.list_algorithms) and callable(optsched.evaluate) and callable(optsched.generate)


def test_algorithm_tables_match_the_registrations():
    """Every name in a problem's table is registered by the module the table names, and every registered
    algorithm appears in its problem's table (so a lookup by name never needs to import every solver)."""
    for prob in registry.problems().values():
        for module in prob.algorithms.values():
            importlib.import_module(module)
    registered = registry._ALGORITHMS
    for prob in registry.problems().values():
        for name, module in prob.algorithms.items():
            assert name in registered, name
            assert registered[name].problem is prob and registered[name].func.__module__ == module
    for name, alg in registered.items():
        assert alg.problem.algorithms.get(name) == alg.func.__module__


def test_resolving_one_algorithm_imports_only_its_module():
    code = ("import sys, optsched; optsched.registry.get_algorithm('sjf-bco'); "
            "print(sorted(m for m in ('ortools', 'pandas', 'pulp', 'networkx') if m in sys.modules))")
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_results_and_schedules_pickle_deepcopy_and_print_short():
    inst = SOLVABLE["rar-ddls"]()
    res = optsched.solve(inst, "sjf-bco")
    assert pickle.loads(pickle.dumps(res)) == res
    assert copy.deepcopy(res) == res
    assert len(repr(res)) < 200 and len(repr(res.schedule)) < 200
    d = res.to_dict()
    assert d["status"] == "feasible" and len(d["schedule"]) == inst.n_jobs
    json.dumps(d)  # JSON-ready
    frame = res.to_frame()
    assert list(frame["id"]) == [j.id for j in res.schedule] and frame.attrs["objective"] == res.objective
    with pytest.raises(TypeError):
        res.schedule.jobs[0].placement["s0"] = 1  # type: ignore[index]


def test_solve_runs_in_a_process_pool():
    insts = [optsched.generate("rar", jobs=4, servers=2, seed=s) for s in range(3)]
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        results = list(pool.map(optsched.solve, insts))
    assert [r.objective for r in results] == [optsched.solve(i).objective for i in insts]


def test_generate_names_a_bad_parameter():
    with pytest.raises(optsched.InstanceError, match="rar"):
        optsched.generate("rar", nonsense=3)
    with pytest.raises(optsched.InstanceError, match="unknown problem"):
        optsched.generate("nope")


def test_bundled_instances_load_by_name():
    inst = optsched.load("bundled:rar/mobihoc22-seed0.json")
    assert inst.n_jobs == 160
    with pytest.raises(optsched.InstanceError, match="no bundled instance"):
        optsched.load("bundled:rar/nope.json")


def test_solve_list_and_optsched_list(capsys):
    assert main(["solve", "--list"]) == 0
    out = capsys.readouterr().out
    for name in ("sjf-bco", "exact", "total-jct-cpsat", "heavy-edge", "exact-time"):
        assert any(line.split()[0] == name for line in out.splitlines()), name
    assert "exact " in out and "heuristic" in out
    assert main(["list", "problems"]) == 0
    out = capsys.readouterr().out
    assert "rar-ddls" in out and "optsched/total-jct@1" in out


def test_cli_placement_problem_end_to_end(tmp_path, capsys):
    inst, sched = tmp_path / "p.json", tmp_path / "s.json"
    assert main(["generate", "placement", "--job", "VGG19:hybrid16", "--servers", "3", "-o", str(inst)]) == 0
    assert main(["solve", str(inst), "-a", "exact-time", "-o", str(sched)]) == 0
    out = capsys.readouterr().out
    assert "status=optimal" in out and "alpha=" in out
    assert main(["evaluate", str(inst), str(sched)]) == 0
    assert "alpha=" in capsys.readouterr().out


def test_atomic_writes_keep_links_and_get_normal_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        target = tmp_path / "real.json"
        with atomic_open(target) as fh:
            fh.write("one")
        assert stat.S_IMODE(target.stat().st_mode) == 0o644
        link = tmp_path / "link.json"
        link.symlink_to(target)
        with atomic_open(link) as fh:
            fh.write("two")
        assert link.is_symlink() and target.read_text() == "two"
        hard = tmp_path / "hard.json"
        os.link(target, hard)
        with atomic_open(target) as fh:
            fh.write("three")
        assert hard.read_text() == "three" and os.stat(hard).st_ino == os.stat(target).st_ino
        with pytest.raises(RuntimeError):
            with atomic_open(target) as fh:
                fh.write("half")
                raise RuntimeError("fails mid-write")
        assert target.read_text() == "three" and sorted(p.name for p in tmp_path.iterdir()) == \
            ["hard.json", "link.json", "real.json"]
    finally:
        os.umask(old)


def test_atomic_open_writes_straight_into_a_fifo(tmp_path):
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    with atomic_open(fifo) as fh:
        fh.write("through the pipe")
    reader.join(5)
    assert got == ["through the pipe"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("where,patch", [
    ("jobs[0]", lambda d: d["jobs"][0].update(lamda=2.0)),
    ("cluster", lambda d: d["cluster"].update(speed=1)),
    ("", lambda d: d.update(horizn=5)),
])
def test_unknown_keys_are_refused_in_every_format(tmp_path, where, patch):
    data = optsched.to_dict(optsched.generate("rar", jobs=2, servers=2, seed=0))
    patch(data)
    with pytest.raises(optsched.InstanceError, match="unknown field") as err:
        optsched.from_dict(data)
    assert (err.value.field or "") == where
    for name in ("total-jct", "placement"):
        d = optsched.to_dict(SOLVABLE[name]())
        d["typo"] = 1
        with pytest.raises(optsched.InstanceError, match=r"unknown field\(s\) \['typo'\]"):
            optsched.from_dict(d)


def test_schedule_files_refuse_unknown_keys_and_bad_stage_counts(tmp_path):
    from optsched.io import schedule_from_dict

    base = {"format": "optsched/schedule@1", "jobs": [{"id": "a", "start": 0, "placement": {"s0": 1}}]}
    assert schedule_from_dict(base)["a"].gpus == 1
    with pytest.raises(optsched.InstanceError, match="unknown field"):
        schedule_from_dict({**base, "jobz": []})
    bad = {"format": "optsched/schedule@1",
           "jobs": [{"id": "a", "start": 0, "placement": {"s0": 1}, "stage_placement": {"s0": "x"}}]}
    with pytest.raises(optsched.InstanceError) as err:
        schedule_from_dict(bad)
    assert err.value.field == "jobs[0].stage_placement.s0" and err.value.job == "a"


def test_generate_builds_its_kinds_from_the_registry():
    """``optsched generate KIND`` has one sub-command per registered problem that names one (no table of its own),
    and prints that problem's one-line summary."""
    import argparse

    from optsched.commands import generate
    from optsched.registry import problems

    parser = argparse.ArgumentParser()
    generate.register(parser.add_subparsers())
    sub = next(a for a in parser._subparsers._group_actions[0].choices["generate"]._actions
               if isinstance(a, argparse._SubParsersAction))
    named = {p.name for p in problems().values() if p.generate_cli}
    assert named == {"rar-ddls", "total-jct", "placement", "deadline", "contention", "workload"}
    assert len(sub.choices) == len(named) and {"rar", "workload", "contention"} <= set(sub.choices)
    inst = optsched.generate("rar", jobs=2, servers=2, seed=0)
    assert problems()["rar-ddls"].describe_instance(inst).startswith(inst.name)
