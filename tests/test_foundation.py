"""The shared foundation: atomic writes, schedule files, registry errors, contention counting, cluster checks."""

from __future__ import annotations

import json

import pytest

import optsched
from optsched import InstanceError, Schedule, ScheduledJob, io
from optsched.api import solve
from optsched.cluster import Cluster, Server
from optsched.generators.rar import tiny_rar_example
from optsched.perf.rar import contention, contention_k, f_degradation, iteration_time, tau_bounds
from optsched.registry import get_algorithm as get
from optsched.result import Result, SolveStatus


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with io.atomic_open(target) as fh:
            fh.write("half")
            raise RuntimeError("crash mid-write")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left behind


def test_schedule_file_round_trip(tmp_path):
    sched = Schedule((ScheduledJob("a", 0, {"s1": 2, "s0": 1, "s2": 0}, completion=7),
                      ScheduledJob("b", 3, {"s0": 3})), algorithm="x", instance="inst")
    path = tmp_path / "s.json"
    io.save_schedule(sched, path)
    back = io.load_schedule(path)
    assert back == sched
    assert dict(back["a"].placement) == {"s0": 1, "s1": 2}  # zero entries dropped, servers sorted
    assert json.loads(path.read_text())["format"] == "optsched/schedule@1"


def test_instance_round_trip(tmp_path):
    inst = tiny_rar_example()
    optsched.save(inst, tmp_path / "i.json")
    assert optsched.load(tmp_path / "i.json") == inst


def test_schedule_file_errors_name_field_and_job(tmp_path):
    bad = {"format": "optsched/schedule@1", "jobs": [{"id": "j7", "start": 0, "placement": {"s0": "two"}}]}
    (tmp_path / "b.json").write_text(json.dumps(bad))
    with pytest.raises(InstanceError) as err:
        io.load_schedule(tmp_path / "b.json")
    assert err.value.field == "jobs[0].placement.s0" and err.value.job == "j7"


def test_unknown_format_and_algorithm():
    with pytest.raises(InstanceError, match="unknown format"):
        optsched.from_dict({"format": "nope@1"})
    with pytest.raises(InstanceError, match="unknown algorithm 'nope'"):
        get("nope")
    with pytest.raises(InstanceError, match="algorithm"):
        solve(tiny_rar_example(), "nope")


def test_cluster_rejects_bad_servers():
    with pytest.raises(InstanceError, match=r"cluster.servers\[1\].id"):
        Cluster((Server("a", 2), Server("a", 2)))
    with pytest.raises(InstanceError, match=r"cluster.servers\[0\].gpus"):
        Cluster((Server("a", 0),))
    c = Cluster((Server("a", 4), Server("b", 8), Server("c", 2)))
    assert c.min_servers_for(9) == 2 and c.min_servers_for(8) == 1 and c.min_servers_for(14) == 3
    with pytest.raises(InstanceError, match="unknown server 'z'"):
        c.check_placement({"z": 1}, field="placement", job="j")
    with pytest.raises(InstanceError, match="has 2"):
        c.check_placement({"c": 3}, field="placement", job="j")


def test_contention_counts_split_jobs_sharing_a_server():
    # a and b are split and share s1; c is split over s2, s3 and shares s2 with b; d sits on one server.
    placements = {"a": {"s0": 1, "s1": 1}, "b": {"s1": 1, "s2": 1}, "c": {"s2": 2, "s3": 2}, "d": {"s1": 2}}
    assert contention(placements) == {"a": 2, "b": 2, "c": 2, "d": 0}
    # three split jobs on s0: each sees 3; a single split job alone sees 1
    assert contention({"x": {"s0": 1, "s1": 1}, "y": {"s0": 1, "s2": 1}, "z": {"s0": 1, "s3": 1}}) == \
        {"x": 3, "y": 3, "z": 3}
    assert contention({"x": {"s0": 1, "s1": 1}}) == {"x": 1}


def test_alone_on_links_keeps_full_bandwidth():
    # k = max(1, xi1 p) with p = 1 gives f = 1 for any alpha and xi1 <= 1
    assert f_degradation(contention_k(1, 0.3), 0.7) == 1.0
    assert f_degradation(contention_k(4, 0.5), 0.5) == pytest.approx(2 + 0.5 * 1)


def test_tau_bounds_cover_every_placement_and_contention():
    inst = tiny_rar_example()
    for job in inst.jobs:
        lo, hi = tau_bounds(inst, job)
        taus = [iteration_time(inst, job, n, p) for n in (1, 2) for p in (0, 1, 2)
                if (n == 1 and job.gpus <= 4) or n == 2]
        assert lo <= min(taus) + 1e-12 and max(taus) <= hi + 1e-12


def test_result_gap():
    r = Result(objective=10, status=SolveStatus.FEASIBLE, runtime_s=0.1, schedule=None, algorithm="x",
               lower_bound=8)
    assert r.gap == pytest.approx(0.2)
    assert "gap=20.00%" in r.summary()


def test_cli_usage_errors_are_one_line_with_exit_2(capsys):
    from optsched.cli import main

    for argv in (["simulate", "synthetic", "--servers", "0"], ["nosuch"], ["solve"], ["evaluate"]):
        try:
            code = main(argv)
        except SystemExit as stop:  # argparse's usage errors
            code = stop.code
        assert code == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "error:" in err[0], (argv, err)
