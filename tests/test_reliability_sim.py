"""Issue 28's simulator and CLI items: each input below used to be accepted, or to fail late, or to destroy or
hide an output; each must now be refused before any work with one line naming the field and the job."""

from __future__ import annotations

import pytest

import optsched
from optsched.cli import main
from optsched.cluster import parse_cluster
from optsched.errors import InstanceError
from optsched.problems.workload import Workload, WorkloadJob


def test_a_job_larger_than_every_gpu_type_is_refused_at_start():
    wl = Workload((WorkloadJob("big", 0, 6, 10, 1.0), WorkloadJob("ok", 0, 2, 10, 1.0)))
    with pytest.raises(InstanceError, match="largest type has 4") as e:
        optsched.simulate(wl, parse_cluster("V100:1x4,K80:1x4"), mode="event")
    assert e.value.job == "big" and e.value.field == "gpus"


@pytest.mark.parametrize("cells, field", [("j0,0,cifar10,1.5,128", "num_replicas"), ("j0,,cifar10,1,128", "time"),
                                          ("j0,0,cifar10,abc,128", "num_replicas"),
                                          ("j0,0,cifar10,1e30,128", "num_replicas"),
                                          ("j0,0,cifar10,0,128", "num_replicas"), ("j0,x,cifar10,1,128", "time")])
def test_bad_pollux_cells_are_refused_naming_the_column_and_the_job(tmp_path, cells, field):
    p = tmp_path / "w.csv"
    p.write_text("name,time,application,num_replicas,batch_size\n" + cells + "\n")
    with pytest.raises(InstanceError) as e:
        optsched.simulate(str(p), servers=1, gpus_per_server=4)
    assert e.value.field == field and e.value.job == "j0"


@pytest.mark.parametrize("name", ["", ".hidden", "a/b", " x"])
def test_a_sweep_name_must_be_a_plain_stem(name, capsys):
    with pytest.raises(SystemExit) as e:
        main(["simulate", "--sweep", "synthetic", "--name", name, "--no-progress"])
    assert e.value.code == 2 and "--name" in capsys.readouterr().err


def test_a_batch_with_two_instances_of_one_name_writes_both_schedules(tmp_path):
    (tmp_path / "in" / "sub").mkdir(parents=True)
    for seed, rel in ((0, "a.json"), (1, "sub/a.json"), (2, "b.json")):
        optsched.save(optsched.generate("rar", jobs=3, servers=2, seed=seed), tmp_path / "in" / rel)
    assert main(["solve", str(tmp_path / "in"), "-a", "ff", "--out-dir", str(tmp_path / "out"), "--no-progress"]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.ff.schedule.json", "b.ff.schedule.json",
                                                                    "sub__a.ff.schedule.json"]


def test_list_prints_plain_text(capsys):
    assert main(["list", "schedulers"]) == 0
    out = capsys.readouterr().out
    assert "][" not in out and "``" not in out


def test_the_command_line_takes_a_cluster_with_gpu_types(capsys):
    assert main(["simulate", "synthetic", "--jobs", "12", "--servers", "V100:2x4,K80:2x4", "--scheduler", "gavel",
                 "--perf", "hetero", "--no-progress", "--json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    assert doc["config"]["cluster"] == {"servers": 4, "total_gpus": 16} and doc["summary"]["finished_tracked"] == 12
    with pytest.raises(SystemExit) as e:
        main(["simulate", "synthetic", "--servers", "V100:2xq"])
    assert e.value.code == 2


def _two_equal_jobs() -> Workload:
    return Workload((WorkloadJob("a", 0, 4, 1000, 1.0), WorkloadJob("b", 0, 4, 1000, 1.0)))


def test_a_preemption_thrash_ends_with_one_error_instead_of_running_forever():
    # LAS swaps two equal jobs every 60-s round; a 120-s restore stall means neither ever progresses again. It
    # used to run forever (here: to the horizon, without an error); now 100 windows of (stall + round) without
    # progress end it, naming the cause
    from optsched.sim.engine import SimulationStalled

    with pytest.raises(SimulationStalled, match="preemption thrash") as e:
        optsched.simulate(_two_equal_jobs(), servers=1, gpus_per_server=4, scheduler="las", mode="round",
                          round_s=60, restore_s=120, max_time_s=10**6)
    assert "120 s" in str(e.value)


def test_a_stall_shorter_than_the_round_still_finishes_under_las():
    r = optsched.simulate(_two_equal_jobs(), servers=1, gpus_per_server=4, scheduler="las", mode="round",
                          round_s=60, restore_s=30)
    assert r.jobs["completion_s"].notna().all() and r.summary["preemptions"] > 0
