"""Brute-force enumeration of starts and placements for micro RAR-DDLS instances: the independent check of the
CP-SAT optimum (``optsched.exact.rar_cpsat``, ``docs/formulations/rar-ddls-cpsat.md``).

Every job's placement (every vector of GPUs per server summing to G_j) and start slot is enumerated, job by
job, and every complete schedule is scored by [`optsched.evaluate`][]. Nothing of the CP-SAT model is
reused (no symmetry breaking, no phi tables). Two prunings keep it usable on <= 3 jobs and <= 2 servers, both
consequences of the evaluator's monotonicity (adding a job never lowers anyone's contention, so never makes
anyone finish earlier; proof in ``docs/formulations/rar-ddls-cpsat.md``, section "Monotonicity"):

* a partial schedule of the first i jobs, evaluated alone, gives completions no later than in any completion
  of it: if its makespan already reaches the best one found, or it overloads a server, prune;
* starts are enumerated only up to (best makespan - 1) - (fewest slots the job can take), the latter counted
  from the evaluator's own ``phi_for`` on each placement alone.

```pycon
>>> from optsched.generators.rar import tiny_rar_example
>>> brute_force(tiny_rar_example()).makespan
5

```
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import InstanceError, ScheduleError
from ..evaluators.rar import evaluate
from ..problems.rar import RarInstance, RarJob
from ..registry import algorithm
from ..result import Result, Schedule, ScheduledJob, SolveStatus

MAX_JOBS = 3
MAX_SERVERS = 2


@dataclass(frozen=True)
class BruteResult:
    makespan: int
    schedule: Schedule
    leaves: int          # complete schedules scored
    nodes: int           # partial schedules scored


def placements(inst: RarInstance, job: RarJob) -> Iterator[dict[str, int]]:
    """Every placement of ``job``: GPUs per server, summing to G_j, within each server's size."""
    ids = inst.cluster.server_ids
    caps = [s.gpus for s in inst.cluster.servers]
    for combo in itertools.product(*(range(min(c, job.gpus) + 1) for c in caps)):
        if sum(combo) == job.gpus:
            yield {s: g for s, g in zip(ids, combo) if g}


def brute_force(inst: RarInstance, *, max_jobs: int = MAX_JOBS, max_servers: int = MAX_SERVERS) -> BruteResult:
    """The optimal makespan by exhaustive enumeration (raises InstanceError above the size limits)."""
    if inst.n_jobs > max_jobs or len(inst.cluster.servers) > max_servers:
        raise InstanceError(f"brute force is for <= {max_jobs} jobs and <= {max_servers} servers, got "
                            f"{inst.n_jobs} jobs and {len(inst.cluster.servers)} servers", field="jobs")
    jobs = list(inst.jobs)
    options = []
    for j in jobs:
        opts = []
        for pl in placements(inst, j):
            # fewest slots on this placement: alone, with the least contention the evaluator can give it
            alone = dict(evaluate(dataclasses.replace(inst, jobs=(j,)),
                                  Schedule((ScheduledJob(j.id, 0, pl),))).completions)[j.id]
            opts.append((pl, alone))
        options.append(opts)
    # incumbent: all jobs one after another, each on its first placement (always feasible)
    t, rows = 0, []
    for j, opts in zip(jobs, options):
        rows.append(ScheduledJob(j.id, t, opts[0][0]))
        t += opts[0][1]
    best_sched = evaluate(inst, Schedule(tuple(rows))).schedule
    best = evaluate(inst, best_sched).makespan
    counters = {"leaves": 0, "nodes": 0}
    subs = [dataclasses.replace(inst, jobs=tuple(jobs[:i + 1])) for i in range(len(jobs))]

    def rec(i: int, partial: tuple[ScheduledJob, ...]) -> None:
        nonlocal best, best_sched
        for pl, alone in options[i]:
            for start in range(0, best - alone):  # start + alone <= best - 1: only strict improvements
                cand = partial + (ScheduledJob(jobs[i].id, start, pl),)
                try:
                    ev = evaluate(subs[i], Schedule(cand))
                except ScheduleError:
                    counters["nodes"] += 1
                    continue
                counters["nodes"] += 1
                if ev.makespan >= best:
                    continue
                if i + 1 == len(jobs):
                    counters["leaves"] += 1
                    best, best_sched = ev.makespan, ev.schedule
                else:
                    rec(i + 1, cand)

    rec(0, ())
    return BruteResult(best, Schedule(best_sched.jobs, algorithm="brute-force"), counters["leaves"],
                       counters["nodes"])


@algorithm("brute-force", RarInstance, exact=True,
          description="exhaustive enumeration of starts and placements (<= 3 jobs, <= 2 servers)")
def brute(inst: RarInstance, *, seed: int | None = None, time_limit: float | None = None, **options) -> Result:
    """Exhaustive enumeration of starts and placements (<= 3 jobs, <= 2 servers)."""
    t0 = time.perf_counter()
    br = brute_force(inst, **options)
    return Result(objective=br.makespan, status=SolveStatus.OPTIMAL, runtime_s=time.perf_counter() - t0,
                  schedule=br.schedule, algorithm="brute-force", lower_bound=br.makespan, seed=seed,
                  info={"leaves": br.leaves, "nodes": br.nodes})
