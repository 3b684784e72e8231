"""Paper 000's baselines (section 7): First-Fit (FF), List-Scheduling (LS) and Random (RAND).

All three run the same list-schedule packing as SJF-BCO ([`optsched.algorithms.sjf_bco.Packer`][]): jobs
in the instance's order (the trace's arrival order, not sorted by size), a monotone clock, a job placed on
GPUs idle at the current slot whose estimated load U stays within the limit theta, waiting for a completion
otherwise. They differ in the GPUs they pick and in theta (``docs/algorithms/sjf-bco.md``):

* FF: the first G_j eligible GPUs, server by server in the cluster's order (GPU index order); theta^FF is
  found by Algorithm 1's bisection, run with the FF rule;
* LS: the G_j eligible GPUs with least U (ties: lower GPU index); theta^LS by the same bisection;
* RAND: G_j GPUs drawn uniformly without replacement among the eligible ones, theta^RAND = T ("to avoid the
  long running time"); if theta = T cannot pack every job, no limit at all.

```pycon
>>> from optsched.generators.rar import tiny_rar_example
>>> from optsched.evaluators.rar import evaluate
>>> inst = tiny_rar_example()
>>> sched, info = first_fit(inst)
>>> evaluate(inst, sched).makespan == info["makespan_packing"]
True

```
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..limits import paused_gc
from ..problems.rar import RarInstance
from ..registry import algorithm
from .sjf_bco import FirstFit, LeastLoaded, MaskRule, Packer, Packing, Rule, bisect_rule, info_for

#: FF's rule: the first G_j idle GPUs passing the limit, server by server in the cluster's order
ff_rule: Rule = FirstFit()
#: LS's rule: the G_j idle GPUs passing the limit with least estimated load U (ties: lower GPU index)
ls_rule: Rule = LeastLoaded("ls")


def _bisected(inst: RarInstance, rule, name: str):
    with paused_gc():   # as in SJF-BCO: the packings' objects are acyclic
        pk = Packer(inst)
        best = bisect_rule(pk, rule)
        assert best is not None
        return pk.schedule(best, name), info_for(pk, best)


@algorithm("ff", RarInstance)
def first_fit(inst: RarInstance, *, seed: int | None = None, time_limit: float | None = None):
    """First-Fit (paper 000, section 7): first G_j available GPUs server by server, load <= theta^FF."""
    return _bisected(inst, ff_rule, "ff")


@algorithm("ls", RarInstance)
def list_scheduling(inst: RarInstance, *, seed: int | None = None, time_limit: float | None = None):
    """List-Scheduling (paper 000, section 7): G_j least-loaded available GPUs, load <= theta^LS."""
    return _bisected(inst, ls_rule, "ls")


class RandRule(MaskRule):
    """RAND's rule: G_j GPUs drawn uniformly without replacement among the idle GPUs passing the limit (in
    GPU index order, as numpy's ``choice`` sees them), returned sorted. Random draws are made only when enough
    GPUs pass, so the packer's "can this job ever fit?" test consumes none."""

    name = "rand"

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def pick(self, pk: Packer, j: int, cand: np.ndarray) -> list[int] | None:
        return np.sort(self.rng.choice(cand, size=int(pk.size[j]), replace=False)).tolist()


def _same_rule(rule: RandRule, j: int) -> RandRule:
    return rule


@algorithm("rand", RarInstance)
def random_placement(inst: RarInstance, *, seed: int | None = None, time_limit: float | None = None):
    """Random (paper 000, section 7): random available GPUs, load <= theta^RAND = T; uses ``seed``."""
    pk = Packer(inst)
    order = list(range(len(inst.jobs)))
    best: Packing | None = None
    for theta in (float(inst.horizon), math.inf):
        rule = RandRule(np.random.default_rng(seed))  # same draws whichever limit is used
        best = pk.run(order, theta, functools.partial(_same_rule, rule))
        if best is not None:
            break
    assert best is not None
    return pk.schedule(best, "rand"), info_for(pk, best)
