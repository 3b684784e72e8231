"""An offline heuristic for paper 003's offline problem (most deadlines met, non-preemptive, node vectors
chosen): serial schedule generation with an iterated search over the job order. OUR heuristic, not a paper's;
it gives the benchmark library non-preemptive schedules the evaluator re-scores on traces too large for the
exact model (``docs/formulations/deadline.md``).

* **Generation.** Jobs are taken in a priority order; each is placed, in continuous time, at the earliest
  start (its arrival or the end of a job already placed) at which a node vector fits beside the jobs already
  placed, among the vectors on one node (any count up to the node) or on whole consecutive nodes, and only if it
  then meets its deadline. Of the vectors that can, rule ``0`` takes the one that spends the fewest GPU-seconds
  (then the earliest end), rule ``1`` the earliest end (then the fewest GPUs). A job no vector can put on time
  does not run.
* **Search.** From earliest-deadline order, ``iterations`` times: perturb the best order (move a job that missed
  its deadline earlier, or swap two jobs) or draw a fresh one (deadlines with noise), generate with a random
  rule, keep the result if it meets at least as many deadlines. Seeded: the same seed gives the same schedule.

```pycon
>>> from optsched.generators.deadline import tiny_deadline_workload
>>> from optsched.evaluators.deadline import evaluate
>>> wl = tiny_deadline_workload(5, seed=3)
>>> sched = deadline_sgs(wl, iterations=20, seed=0)
>>> evaluate(wl, sched).objective >= 1
True

```
"""

from __future__ import annotations

import random

from ..evaluators.deadline import evaluate
from ..problems.deadline import DEADLINE_TOL_S, DeadlineJob, DeadlineWorkload
from ..registry import algorithm
from ..result import Schedule, ScheduledJob

__all__ = ["compact_vectors", "deadline_sgs", "generate"]


def compact_vectors(inst: DeadlineWorkload, job: DeadlineJob) -> list[tuple[tuple[int, ...], float]]:
    """(node vector, run time) of every vector on one node or on whole consecutive nodes, up to ``max_gpus``.

    ```pycon
    >>> from optsched.problems.deadline import paper_cluster
    >>> wl = DeadlineWorkload(paper_cluster(2, 2), (DeadlineJob("a", "ResNet-50", 0, 1.0, 1),))
    >>> [v for v, _ in compact_vectors(wl, wl.jobs[0])]
    [(1, 0), (2, 0), (0, 1), (0, 2), (2, 2)]

    ```
    """
    caps = inst.capacities
    k = len(caps)
    out = []
    for i in range(k):
        for n in range(1, min(caps[i], job.max_gpus) + 1):
            out.append((tuple(n if m == i else 0 for m in range(k)), inst.run_time_s(job, n, cross=False)))
    for a in range(k):
        for b in range(a + 1, k):
            n = sum(caps[a:b + 1])
            if n <= job.max_gpus:
                vec = tuple(caps[m] if a <= m <= b else 0 for m in range(k))
                out.append((vec, inst.run_time_s(job, n, cross=True)))
    return out


def generate(inst: DeadlineWorkload, order: list[DeadlineJob], rule: int = 0,
             vectors: dict[str, list[tuple[tuple[int, ...], float]]] | None = None) -> Schedule:
    """The serial schedule generation of the module docstring, jobs in ``order``."""
    caps = inst.capacities
    placed: list[list[tuple[float, float, int]]] = [[] for _ in caps]  # (start, end, gpus) per node
    ends: list[float] = []
    rows = []
    ids = [s.id for s in inst.cluster.servers]

    def fits(vec: tuple[int, ...], s: float, e: float) -> bool:
        for i, c in enumerate(vec):
            if c:
                ivs = placed[i]
                # usage is piecewise constant: its maximum on [s, e) is at s or at a start inside
                for t in [s] + [a for a, _, _ in ivs if s < a < e]:
                    if c + sum(g for a, b, g in ivs if a <= t < b - DEADLINE_TOL_S) > caps[i]:
                        return False
        return True

    for job in order:
        starts = sorted({job.arrival_s} | {x for x in ends if x > job.arrival_s})
        best = None
        for vec, run in (vectors[job.id] if vectors is not None else compact_vectors(inst, job)):
            last = job.deadline_s + DEADLINE_TOL_S - run
            for s in starts:
                if s > last:
                    break
                if fits(vec, s, s + run):
                    key = (sum(vec) * run, s + run) if rule == 0 else (s + run, sum(vec))
                    if best is None or key < best[0]:
                        best = (key, vec, s, run)
                    break
        if best is not None:
            _, vec, s, run = best
            for i, c in enumerate(vec):
                if c:
                    placed[i].append((s, s + run, c))
            ends.append(s + run)
            rows.append(ScheduledJob(job.id, s, {ids[i]: c for i, c in enumerate(vec) if c}))
    return Schedule(tuple(rows), "deadline-sgs", inst.name)


def deadline_sgs(inst: DeadlineWorkload, *, iterations: int = 200, seed: int | None = 0) -> Schedule:
    """The best schedule of the search of the module docstring (best-effort jobs are left out)."""
    rng = random.Random(0 if seed is None else seed)
    jobs = [j for j in inst.jobs if not j.best_effort]
    vectors = {j.id: compact_vectors(inst, j) for j in jobs}
    order = sorted(jobs, key=lambda j: (j.deadline_s, j.id))
    best = generate(inst, order, 0, vectors)
    best_v = evaluate(inst, best).objective
    for _ in range(iterations):
        if rng.random() < 0.5:
            new = list(order)
            met = set(evaluate(inst, best).met)
            missed = [k for k, j in enumerate(new) if j.id not in met]
            if missed and rng.random() < 0.7:
                k = rng.choice(missed)
                new.insert(rng.randrange(0, k + 1), new.pop(k))
            else:
                a, b = rng.randrange(len(new)), rng.randrange(len(new))
                new[a], new[b] = new[b], new[a]
        else:
            noisy = {j.id: j.deadline_s + rng.gauss(0.0, 0.3) * (j.deadline_s - j.arrival_s) for j in jobs}
            new = sorted(jobs, key=lambda j: (noisy[j.id], j.id))
        sched = generate(inst, new, rng.randrange(2), vectors)
        v = evaluate(inst, sched).objective
        if v >= best_v:
            best, best_v, order = sched, v, new
    return best


@algorithm("deadline-sgs", DeadlineWorkload)
def _registered(inst: DeadlineWorkload, *, seed: int | None = None, time_limit: float | None = None,
                iterations: int = 200) -> Schedule:
    """serial schedule generation over node vectors with an iterated search on the job order (offline)"""
    return deadline_sgs(inst, iterations=iterations, seed=seed)
