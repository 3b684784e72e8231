"""Upper bounds for RAR-DDLS (paper 000) at the paper's size: a serial schedule-generation scheme (SGS) with
contention-free placements, run under several priority rules and random perturbations.

Each job, in priority order, takes the placement and start that finish it earliest given the jobs placed
before it (a start at any slot, not only at events: the free GPUs of every server are kept per slot). Its
duration is dfast_j(n) = ceil(F_j / Phi_j(n, 1)) on n servers, which is exact when the job meets no contention;
so that it meets none, a split placement is refused on a server that hosts another split job during the window
whenever either job is p-sensitive (``bounds.p_sensitive``). Every job then runs exactly its planned
slots, and the evaluator scores the schedule exactly its planned makespan (checked by
[`best_list_schedule`][optsched.exact.rar_sgs.best_list_schedule],
which returns the evaluator's value).

```pycon
>>> from optsched.generators.rar import tiny_rar_example
>>> ms, sched = best_list_schedule(tiny_rar_example(), restarts=5)
>>> ms
5

```
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import maximum_filter1d

from ..bounds import fastest_slots, p_sensitive
from ..evaluators.rar import evaluate
from ..problems.rar import RarInstance
from ..result import Schedule, ScheduledJob


def _window_max(a: np.ndarray, d: int) -> np.ndarray:
    """w[s, t] = max(a[s, t:t+d]) for t = 0..H-d (a running maximum, O(S H) whatever d)."""
    return maximum_filter1d(a, size=d, axis=1, origin=-(d // 2), mode="nearest")[:, :a.shape[1] - d + 1]


def list_schedule(inst: RarInstance, order: list[int], horizon: int | None = None) -> Schedule | None:
    """The SGS on jobs taken in ``order`` (indices into ``inst.jobs``); ``None`` if some job does not fit in
    ``horizon`` slots (default: the sum of the jobs' slowest planned durations, always enough)."""
    jobs = inst.jobs
    servers = inst.cluster.server_ids
    cap = np.array([s.gpus for s in inst.cluster.servers], dtype=np.int64)
    durs = [fastest_slots(inst, j) for j in jobs]
    H = horizon or sum(max(d.values()) for d in durs) + 1
    used = np.zeros((len(servers), H), dtype=np.int64)
    splits = np.zeros((len(servers), H), dtype=np.int64)       # split jobs per server and slot
    sens_splits = np.zeros((len(servers), H), dtype=np.int64)  # p-sensitive split jobs per server and slot
    sens = [p_sensitive(inst, j) for j in jobs]
    rows: list[ScheduledJob] = []
    for idx in order:
        job, dur = jobs[idx], durs[idx]
        best: tuple[int, int, int, dict[str, int]] | None = None   # (completion, servers, start, placement)
        for n, d in sorted(dur.items()):
            if d > H:
                continue
            win = _window_max(used, d)                                        # [S, H - d + 1]
            free = cap[:, None] - win
            if n == 1:
                ok = free >= job.gpus
                cols = np.flatnonzero(ok.any(axis=0))
                if cols.size == 0:
                    continue
                t = int(cols[0])
                cand = np.flatnonzero(ok[:, t])
                s = int(cand[np.argmin(free[cand, t])])                      # best fit
                key = (t + d, 1, t, {servers[s]: job.gpus})
            else:
                # servers this split job may use in each window: no contention that could change a speed
                busy = _window_max(sens_splits if not sens[idx] else splits, d)
                usable = np.where(busy > 0, 0, np.maximum(free, 0))
                top = -np.sort(-usable, axis=0)[:n]                           # n largest free counts
                ok = (top.sum(axis=0) >= job.gpus) & (top[n - 1] >= 1)
                cols = np.flatnonzero(ok)
                if cols.size == 0:
                    continue
                t = int(cols[0])
                order_s = np.argsort(-usable[:, t], kind="stable")[:n]
                counts: dict[int, int] = {}
                rest = job.gpus - n
                for s in order_s:                                             # one each, then fill
                    counts[int(s)] = 1
                for s in order_s:
                    extra = min(rest, int(usable[s, t]) - 1)
                    counts[int(s)] += extra
                    rest -= extra
                if rest:
                    continue
                key = (t + d, n, t, {servers[s]: g for s, g in counts.items()})
            if best is None or key[:3] < best[:3]:
                best = key
        if best is None:
            return None
        end, n, t, pl = best
        for sid, g in pl.items():
            s = servers.index(sid)
            used[s, t:end] += g
            if n >= 2:
                splits[s, t:end] += 1
                if sens[idx]:
                    sens_splits[s, t:end] += 1
        rows.append(ScheduledJob(job.id, t, pl))
    by_id = {r.id: r for r in rows}
    return Schedule(tuple(by_id[j.id] for j in jobs), algorithm="list-sgs")


def priority_orders(inst: RarInstance, restarts: int, seed: int = 0) -> list[list[int]]:
    """Deterministic rules (longest fastest-duration first, most GPU-slots first, most GPUs first) and
    ``restarts`` random perturbations of the GPU-slot rule (multiplicative noise of up to +-30%)."""
    fast = np.array([min(fastest_slots(inst, j).values()) for j in inst.jobs], dtype=float)
    gpus = np.array([j.gpus for j in inst.jobs], dtype=float)
    keys = [fast, fast * gpus, gpus + fast / (fast.max() + 1), fast * np.sqrt(gpus)]
    orders = [list(np.argsort(-k, kind="stable")) for k in keys]
    rng = np.random.default_rng(seed)
    for _ in range(restarts):
        noise = rng.uniform(0.7, 1.3, size=len(fast))
        base = keys[int(rng.integers(len(keys)))]
        orders.append(list(np.argsort(-(base * noise), kind="stable")))
    return [[int(i) for i in o] for o in orders]


def best_list_schedule(inst: RarInstance, restarts: int = 50, seed: int = 0) -> tuple[int, Schedule]:
    """(evaluator makespan, schedule) of the best SGS run over
    [`priority_orders`][optsched.exact.rar_sgs.priority_orders]."""
    from ..bounds import lower_bound

    best: tuple[int, Schedule] | None = None
    horizon = 2 * lower_bound(inst) + max(max(fastest_slots(inst, j).values()) for j in inst.jobs)
    for order in priority_orders(inst, restarts, seed):
        sched = list_schedule(inst, order, horizon=horizon if best is None else best[0])
        if sched is None and best is None:  # the short horizon did not hold every job: the safe one does
            sched = list_schedule(inst, order)
        if sched is None:  # no better than the best so far
            continue
        ms = evaluate(inst, sched).makespan
        if best is None or ms < best[0]:
            best = (ms, sched)
    assert best is not None
    return best
