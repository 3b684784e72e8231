"""The simulator's one registry: every entry imports, is of its kind, and carries the name it is listed under."""

from __future__ import annotations

import pytest

from optsched.errors import InstanceError
from optsched.perf.base import PerfModel
from optsched.sim import registry
from optsched.sim.base import AdmissionPolicy, PlacementPolicy, SchedulerPlacer, SchedulingPolicy

KINDS = {"scheduler": (SchedulingPolicy, SchedulerPlacer), "placement": PlacementPolicy,
         "admission": AdmissionPolicy, "perf": PerfModel}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_entry_imports_with_its_kind_and_name(kind):
    for name in registry.names(kind):
        cls = registry.lookup(kind, name)
        assert isinstance(cls, type) and issubclass(cls, KINDS[kind]), (kind, name)
        # a class's name is the one it is listed under (accept-k is also reached as accept-1.2 etc.)
        if kind != "perf":
            assert cls.name == name, (kind, name, cls.name)


def test_families_partition_the_schedulers():
    every = registry.scheduler_names()
    parts = [registry.scheduler_names(f) for f in registry.FAMILIES]
    assert sorted(n for p in parts for n in p) == every
    assert {"fifo", "las", "srtf", "tiresias", "gavel", "optimus"} <= set(parts[0])
    assert {"drs", "edf", "elasticflow"} <= set(registry.scheduler_names("deadline"))
    with pytest.raises(InstanceError, match="family"):
        registry.scheduler_names("nope")


def test_the_engine_imports_no_concrete_policy():
    import ast
    import inspect

    from optsched.sim import engine

    tree = ast.parse(inspect.getsource(engine))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not imported & {"policies", "Fifo", "Consolidated", "AcceptAll"}, imported


def test_unknown_names_list_the_known_ones():
    with pytest.raises(InstanceError, match="known: .*consolidated.*first-free"):
        registry.build_placement("nope")
    with pytest.raises(InstanceError, match="unknown performance model 'nope'"):
        registry.build_perf("nope")


# the RL policies warn, as documented, that their agent cannot see a cluster other than 4 x 8
@pytest.mark.filterwarnings("ignore:rl-(base|hybrid). the agent was trained for:UserWarning")
@pytest.mark.parametrize("kind", ["scheduler", "placement", "admission"])
def test_parameters_are_declared_once(kind):
    """describe(), clone() and reset() derive from __init__'s parameters for every registered policy: a clone
    describes itself alike, every parameter is kept under its own name, and reset() keeps the object."""
    for name in registry.names(kind):
        obj = getattr(registry, f"build_{'scheduling' if kind == 'scheduler' else kind}")(name)
        params = obj.get_params()
        desc = obj.describe()
        assert desc["name"] == name
        assert set(params) <= set(desc), (name, params, desc)
        twin = obj.clone()
        assert twin is not obj and twin.describe() == desc, name
        before = id(obj)
        obj.reset()
        assert id(obj) == before and obj.describe() == desc, name


def test_reset_clears_state_created_in_init():
    from optsched.generators.deadline import tiny_deadline_workload
    from optsched.sim import simulate
    from optsched.sim.deadline import DRS

    drs = DRS()
    wl = tiny_deadline_workload(3, seed=2)
    first = simulate(wl, scheduler=drs).jobs
    n = len(drs.choices)
    assert n > 0
    again = simulate(wl, scheduler=drs).jobs   # the engine resets the policy before the run
    assert len(drs.choices) == n and first.equals(again)
