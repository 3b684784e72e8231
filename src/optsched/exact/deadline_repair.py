"""Schedules for paper 003's deadline problem built from the time-indexed bound's choice of jobs. OUR heuristic,
not a paper's (``docs/formulations/deadline.md``, "Schedules from the bound's choice").

The time-indexed relaxation ([`deadline_time_indexed_bound`][optsched.exact.deadline.deadline_time_indexed_bound])
chooses which jobs to meet (its y_j = 1, [`DeadlineBound.chosen`][optsched.exact.deadline.DeadlineBound]) by
looking at the whole trace at once; an online policy decides job by job. The search here hands a *set* of jobs
to a scheduler that runs that set only (the other jobs do not run) and repairs the set greedily:

* **score** (given by the caller): a function that schedules a sub-instance (the chosen jobs, the same
  cluster) and returns the ids of the jobs on time in that schedule. The schedule must be one the evaluator or
  the simulator verifies: the benchmark (``benchmarks/deadline_gap.py``) passes a simulator run of an elastic
  policy (this module sits below the simulator and does not import it); the tests pass the simulator too and a
  toy rule. A job that is not chosen does not run, so the met jobs of the sub-instance's schedule are the met
  jobs of a schedule of the whole instance.
* **drop** ([`repair_selection`][optsched.exact.deadline_repair.repair_selection]): while a chosen job misses its
  deadline, try removing each missing job, keep the removal whose schedule meets the most (ties: the earliest job
  in the instance's order), repeat until every chosen job is met;
* **add**: try each job left out (reachable alone, cheapest
  [`min_energy_gpu_s`][optsched.exact.deadline.min_energy_gpu_s] first); if the schedule then meets strictly
  more, drop again, and keep the change if the repaired set still meets strictly more than before the addition;
  stop after a pass without a gain or after ``max_evaluations`` distinct sets scored.

The best set seen is returned (the most met; among equals, the fewest chosen). Its value is never below the
starting set's, nor below that of the set of every reachable job, which is scored once as a reference.

```pycon
>>> from optsched.generators.deadline import tiny_deadline_workload
>>> wl = tiny_deadline_workload(5, seed=3)
>>> def score(sub):  # a toy scheduler: the three cheapest chosen jobs are on time
...     return sorted(sub.jobs, key=lambda j: (j.run_time_1gpu_s, j.id))[:3]
>>> sel = repair_selection(wl, lambda sub: [j.id for j in score(sub)], [j.id for j in wl.jobs])
>>> sel.value, len(sel.chosen), set(sel.met) <= set(sel.chosen)
(3.0, 3, True)

```
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..errors import InstanceError
from ..problems.deadline import DeadlineWorkload, job_weight
from .deadline import min_energy_gpu_s

__all__ = ["Selection", "repair_selection"]

#: schedules a sub-instance and returns the ids of its jobs on time
Score = Callable[[DeadlineWorkload], Iterable[str]]


@dataclass(frozen=True)
class Selection:
    """The best set found: ``chosen`` (the jobs handed to the scheduler, in the instance's order), ``met`` (those
    on time in its schedule), ``value`` (their weighted count), ``evaluations`` (calls of the score), ``start``
    (the value of the starting set) and ``steps`` (the accepted drops ``-id`` and additions ``+id``)."""

    value: float
    chosen: tuple[str, ...]
    met: tuple[str, ...]
    evaluations: int
    start: float
    steps: tuple[str, ...] = ()


def repair_selection(inst: DeadlineWorkload, score: Score, start: Iterable[str], *, weights: str = "count",
                     max_evaluations: int = 400) -> Selection:
    """The drop-and-add search of the module docstring from the set ``start`` (job ids; e.g. the time-indexed
    bound's ``chosen``). ``score(sub)`` schedules ``sub`` (``inst`` with the chosen jobs only) and returns the ids
    of its jobs on time; an id outside the chosen set raises [`InstanceError`][optsched.errors.InstanceError].
    Deterministic when ``score`` is."""
    jobs = [j for j in inst.jobs if not j.best_effort]
    order = {j.id: k for k, j in enumerate(jobs)}
    by_id = {j.id: j for j in jobs}
    unknown = [i for i in start if i not in order]
    if unknown:
        raise InstanceError("is not a deadline job of the instance", field="start", job=unknown[0])
    energy = {j.id: min_energy_gpu_s(inst, j) for j in jobs}
    reachable = [j.id for j in jobs if energy[j.id] < float("inf")]
    if max_evaluations < 1:
        raise InstanceError(f"must be at least 1, got {max_evaluations!r}", field="max_evaluations")
    cache: dict[frozenset[str], frozenset[str]] = {}

    def run(chosen: frozenset[str]) -> tuple[float, frozenset[str]]:
        if chosen not in cache:
            sub = inst.with_jobs(j for j in jobs if j.id in chosen)
            met = frozenset(score(sub))
            stray = sorted(met - chosen)
            if stray:
                raise InstanceError("is reported on time but was not chosen", field="score", job=stray[0])
            cache[chosen] = met
        met = cache[chosen]
        return sum(job_weight(by_id[i].alpha, weights) for i in met), met

    def key(ids: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted(ids, key=order.__getitem__))

    best: tuple[float, frozenset[str], frozenset[str]] = (-1.0, frozenset(), frozenset())

    def consider(v: float, chosen: frozenset[str], met: frozenset[str]) -> None:
        # the most met; among equals, the fewest chosen (a set whose jobs are all on time)
        nonlocal best
        if v > best[0] or (v == best[0] and len(chosen) < len(best[1])):
            best = (v, chosen, met)

    cur = frozenset(start) & frozenset(reachable)
    cur_v, cur_met = run(cur)
    start_v = cur_v
    consider(cur_v, cur, cur_met)
    everyone = frozenset(reachable)
    ref_v, ref_met = run(everyone)
    consider(ref_v, everyone, ref_met)

    def drop(chosen: frozenset[str], v: float,
             met: frozenset[str]) -> tuple[frozenset[str], float, frozenset[str], list[str]]:
        dropped = []
        while met != chosen and len(cache) < max_evaluations:
            trials = []
            for x in key(chosen - met):
                if len(cache) >= max_evaluations:
                    break
                tv, tm = run(chosen - {x})
                trials.append((-tv, order[x], x, tm))
            if not trials:
                break
            neg, _, x, met = min(trials)
            chosen, v = chosen - {x}, -neg
            dropped.append(f"-{x}")
            consider(v, chosen, met)
        return chosen, v, met, dropped

    cur, cur_v, cur_met, steps = drop(cur, cur_v, cur_met)
    gained = True
    while gained and len(cache) < max_evaluations:
        gained = False
        for x in sorted(set(reachable) - cur, key=lambda i: (energy[i], order[i])):
            if len(cache) >= max_evaluations:
                break
            tv, tm = run(cur | {x})
            if tv <= cur_v:
                continue
            consider(tv, cur | {x}, tm)
            nxt, nv, nm, dropped = drop(cur | {x}, tv, tm)
            if nv > cur_v:  # kept only if still a gain once repaired: the value rises at every step, so it ends
                cur, cur_v, cur_met = nxt, nv, nm
                steps += [f"+{x}", *dropped]
                gained = True
    v, chosen, met = best
    return Selection(v, key(chosen), key(met), len(cache), start_v, tuple(steps))
