"""A new policy is one file and one registration line: a toy policy written that way (both ways a policy is
written: a scheduling key composed with a placement, and ``decide`` with the decision builder) runs through
``optsched.simulate``, the command line (``simulate`` and ``list``) and a sweep."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

import optsched
from optsched.cli import main
from optsched.experiments import SerialExecutor, sweep
from optsched.problems.workload import Workload, WorkloadJob
from optsched.sim import registry

TOY = textwrap.dedent('''
    """Two toy policies, as a contributor writes them: this file and one line in the registry."""
    from optsched.sim.base import DecisionBuilder, SchedulerPlacer, SchedulingPolicy
    from optsched.sim.fitting import first_free
    from optsched.sim.state import QUEUED, Placement


    class BiggestFirst(SchedulingPolicy):
        """Most GPUs first (a key: composed with any placement and admission)."""

        name = "toy-biggest"

        def key(self, job, now):
            return -job.gpus


    class SmallestFirstFit(SchedulerPlacer):
        """Fewest GPUs first, each on the first free GPUs, skipping what does not fit (decide with a builder)."""

        name = "toy-smallest"

        def decide(self, view):
            b = DecisionBuilder(view)
            for job in sorted((j for j in view.active() if j.status == QUEUED), key=lambda j: (j.gpus, j.index)):
                got = first_free(b.free, job.gpus)
                if got is not None:
                    b.launch(job, Placement.of(got))
            return b.build()
''')

# three jobs at t = 0 on one 4-GPU server: 1, 2 and 4 GPUs, 100 s each
WL = Workload((WorkloadJob("one", 0, 1, 100, 1.0), WorkloadJob("two", 0, 2, 100, 1.0),
               WorkloadJob("four", 0, 4, 100, 1.0)))


@pytest.fixture
def toy(tmp_path, monkeypatch):
    (tmp_path / "optsched_toy_policy.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(tmp_path))
    # the one registration line, as it would stand in optsched/sim/registry.py's table
    monkeypatch.setitem(registry.SCHEDULERS, "toy-biggest", "optsched_toy_policy:BiggestFirst")
    monkeypatch.setitem(registry.SCHEDULERS, "toy-smallest", "optsched_toy_policy:SmallestFirstFit")
    yield tmp_path
    sys.modules.pop("optsched_toy_policy", None)


def _starts(result):
    return dict(zip(result.jobs["id"], result.jobs["first_start_s"]))


def test_a_toy_policy_runs_through_simulate(toy):
    big = optsched.simulate(WL, servers=1, gpus_per_server=4, scheduler="toy-biggest", mode="event")
    assert _starts(big) == {"four": 0.0, "two": 100.0, "one": 100.0}
    small = optsched.simulate(WL, servers=1, gpus_per_server=4, scheduler="toy-smallest", mode="event")
    assert _starts(small) == {"one": 0.0, "two": 0.0, "four": 100.0}
    assert big.config["scheduler"]["name"] == "toy-biggest" and small.config["placement"]["name"] == "(combined)"
    assert "toy-biggest" in registry.scheduler_names("blox")


def test_a_toy_policy_runs_through_the_command_line(toy, capsys):
    path = toy / "w.json"
    optsched.save(WL, path)
    assert main(["simulate", str(path), "--scheduler", "toy-smallest", "--servers", "1", "--gpus-per-server", "4",
                 "--event", "--json", "--no-progress"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["config"]["scheduler"]["name"] == "toy-smallest" and doc["summary"]["avg_jct_s"] == 400 / 3
    assert main(["list", "schedulers"]) == 0
    listed = capsys.readouterr().out
    assert "toy-biggest" in listed and "Most GPUs first" in listed


def test_a_toy_policy_runs_through_a_sweep(toy):
    path = toy / "w.json"
    optsched.save(WL, path)
    res = sweep({"workload": str(path), "scheduler": ["toy-biggest", "toy-smallest", "fifo"], "servers": 1,
                 "gpus_per_server": 4, "event": True}, seeds=[0], executor=SerialExecutor(), progress=False)
    rows = res.runs.set_index("scheduler")
    assert rows["finished_tracked"].tolist() == [3, 3, 3]
    assert rows.loc["toy-smallest", "avg_jct_s"] == 400 / 3 < rows.loc["toy-biggest", "avg_jct_s"] == 500 / 3
