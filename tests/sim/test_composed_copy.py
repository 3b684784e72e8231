"""``Composed.__deepcopy__`` (what a simulator copy, and so every what-if copy, runs for the policy) gives what
``copy.deepcopy``'s generic path gives: the same lists, the same entries shared between them, the same decisions
when the copy goes on; a subclass or an unknown attribute takes the generic path."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from optsched.generators.workload import synthetic_workload
from optsched.sim import base
from optsched.sim.base import Composed
from optsched.sim.registry import build_policy
from optsched.sim.runner import simulator


def _finish(sim):
    while sim.advance() is not None:
        sim.apply(sim.decide())
    r = sim.result()
    return r.jobs["completion_s"].to_numpy(), r.summary["decisions"], r.summary["preemptions_total"]


def _shape(p):
    """The copy's lists by value (jobs by id) and whether each entry is the one ``_entry`` holds."""
    ent = p._entry
    return ([(k, j.id, ent.get(j.id) is e) for e in p._q for k, j in [e]],
            [(k, j.id, ent.get(j.id) is e) for e in p._r for k, j in [e]],
            [(t, q, e[1].id, ent.get(e[1].id) is e) for t, q, e in p._cross],
            [(t, i, w, j.id) for t, i, w, j in p._waits], sorted(p._bumped),
            {k: v for k, v in p.__dict__.items() if k not in ("_q", "_r", "_entry", "_cross", "_waits", "_bumped",
                                                               "scheduling", "placement")},
            p.scheduling.__dict__, p.placement.__dict__, type(p.scheduling), type(p.placement))


@pytest.mark.parametrize("name", ["las", "tiresias", "srtf", "fifo"])
def test_the_fast_copy_is_the_generic_one(monkeypatch, name):
    wl = synthetic_workload(40, load_jph=14.0, seed=2, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2})
    sim = simulator(wl, (1, 4), scheduler=name, seed=2, mode="round")
    sim.reset()
    seen = 0
    for step in range(120):
        if sim.advance() is None:
            break
        sim.apply(sim.decide())
        if step % 11:
            continue
        fast = copy.deepcopy(sim)
        with monkeypatch.context() as m:
            m.delattr(Composed, "__deepcopy__")
            generic = copy.deepcopy(sim)
        assert fast.policy is not sim.policy and fast.policy._q is not sim.policy._q
        assert all(e[1] is fast.jobs[e[1].index] for e in fast.policy._q + fast.policy._r)  # the copy's jobs
        assert _shape(fast.policy) == _shape(generic.policy)
        seen += len(sim.policy._q) > 0 and len(sim.policy._r) > 0
        a, b = _finish(fast), _finish(generic)
        assert np.array_equal(a[0], b[0], equal_nan=True) and a[1:] == b[1:]
    assert seen > 3  # copies made while jobs both ran and waited


def test_a_subclass_or_another_attribute_is_copied_the_generic_way(monkeypatch):
    class Mine(Composed):
        pass

    p = build_policy("las")
    q = Mine(p.scheduling, p.placement)
    q.extra = [1]
    p.extra = [2]
    calls = []
    real = base._generic_deepcopy
    monkeypatch.setattr(base, "_generic_deepcopy", lambda x, memo: (calls.append(type(x)), real(x, memo))[1])
    cq, cp = copy.deepcopy(q), copy.deepcopy(p)
    assert calls == [Mine, Composed]
    assert type(cq) is Mine and cq.extra == [1] and cq.extra is not q.extra and cp.extra == [2]
    del p.extra
    copy.deepcopy(p)
    assert len(calls) == 2  # the own attributes only: the fast path
