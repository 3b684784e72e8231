"""Paper 004's round accounting of a contention run: the family's metrics collector and its tables.

A contention instance goes through the one door, ``optsched.simulate(inst, scheduler=...)``
([`optsched.sim.kinds`][]): our engine in round mode (the instance's ``round_s``, 300 s),
[`MeasuredPerf`][optsched.perf.measured.MeasuredPerf] with sticky ratios and the instance's floor, and a policy of
[`optsched.sim.contention.policies`][]. What makes it the repository's round model
(``docs/algorithms/rl-contention.md``):

* decisions only at k x ``round_s``; GPUs freed inside a round stay idle until the next one (round mode);
* ratios are fixed when jobs are placed and only fall while a job keeps its placement (sticky), so every rate
  is constant within a round, as the repository's ``isolated_thp x ratio x 300 s`` per round;
* a job that reaches its samples inside round k completes, in the repository's accounting, at the end of that
  round. [`ContentionMetrics`][optsched.sim.contention.runner.ContentionMetrics] adds both JCTs to the result: per job
  ``round_completion_s`` (rounded up to
  the round), ``round_jct_s`` = rounded completion - arrival and ``runtime_jct_s`` = rounds the job ran x
  ``round_s`` (the repository's JCT: no queueing counted), ``rounds_run``, ``cs``, ``threshold_hits``; the
  repository's summary ([`contention_summary`][optsched.sim.contention.runner.contention_summary]: its ``avg_jct_s`` is
  the rounded one) in
  ``result.custom["contention"]``, the per-round plan and ratios in ``result.custom["contention_rounds"]``;
* utilisation = GPUs held after each round's decision / all GPUs, averaged over the rounds up to the makespan
  (the repository's ``update_util``); contention sensitivity CS = 1 / ratio per job and round.

```pycon
>>> from optsched.generators.contention import random_contention_instance
>>> from optsched.sim import simulate
>>> r = simulate(random_contention_instance(jobs=4, seed=0, hours=0.25), scheduler="widest-first-fit")
>>> sorted(r.custom["contention"])[:3]
['avg_cs', 'avg_jct_s', 'avg_runtime_jct_s']
>>> all(r.jobs["round_completion_s"] % 300 == 0)
True

```
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..base import MetricCollector
from ..metrics import SimResult
from ..state import RUNNING, SimView

# these doctests read the shared DeepShare tables: skipped when they are absent (conftest.py at the root)
__doctest_requires__ = {"*": "deepshare-contention"}


class RoundRecorder(MetricCollector):
    """After every decision: the time, GPUs held, and each running job's servers, GPUs per server and ratio."""

    name = "contention"

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.rounds: list[tuple[float, int, dict[str, tuple[tuple[int, ...], tuple[int, ...], float]]]] = []

    def collect(self, view: SimView) -> None:
        perf = view.perf
        ratio_of = getattr(perf, "ratio_of", None)
        running = {j.id: (j.placement.servers, j.placement.counts, float(ratio_of(j.id)) if ratio_of else 1.0)
                   for j in view.jobs.active.values() if j.status == RUNNING and j.placement is not None}
        if self.rounds and self.rounds[-1][0] == view.now:
            self.rounds[-1] = (view.now, view.cluster.busy_gpus, running)
        else:
            self.rounds.append((view.now, view.cluster.busy_gpus, running))

    def result(self) -> dict:
        return {"decisions": len(self.rounds)}


class ContentionMetrics(RoundRecorder):
    """The contention family's collector: records every round
    ([`RoundRecorder`][optsched.sim.contention.runner.RoundRecorder]) and adds the
    repository's round accounting to the result (module docstring)."""

    def __init__(self, round_s: float = 300.0, total_gpus: int | None = None):
        self.round_s, self.total_gpus = float(round_s), total_gpus
        super().__init__()

    def result(self) -> dict:
        return {}  # finish() puts the summary under custom["contention"]

    def finish(self, result: SimResult) -> None:
        stats = dict(getattr(result.policy, "stats", {}) or {})
        total = self.total_gpus if self.total_gpus is not None else int(result.summary["total_gpus"])
        df, summary = contention_summary(result, self, self.round_s, total, stats)
        for col, src in (("round_completion_s", "completion_s"), ("round_jct_s", "jct_s"),
                         ("runtime_jct_s", "runtime_jct_s"), ("rounds_run", "rounds_run"), ("cs", "cs"),
                         ("threshold_hits", "threshold_hits")):
            result.jobs[col] = df[src].to_numpy()
        result.custom["contention"] = summary
        result.custom["contention_rounds"] = {
            "plan": [(t, {i: s for i, (s, _, _) in running.items()}) for t, _, running in self.rounds],
            "ratios": [(t, {i: r for i, (_, _, r) in running.items()}) for t, _, running in self.rounds]}


def round_up(t: float, round_s: float) -> float:
    """``t`` rounded up to a multiple of ``round_s`` (a relative slack absorbs floating-point noise).

    ```pycon
    >>> round_up(300.0000001, 300), round_up(301, 300)
    (300.0, 600.0)

    ```
    """
    return float(math.ceil(t / round_s - 1e-6) * round_s)


def contention_summary(result: SimResult, recorder: RoundRecorder, round_s: float, total_gpus: int,
                       stats: dict | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Per-job records and the summary in the repository's round accounting (module docstring)."""
    objs = {j.id: j for j in result.job_objects}
    df = result.jobs[["id", "arrival_s", "gpus", "model", "first_start_s"]].copy()
    df["exact_completion_s"] = result.jobs["completion_s"]
    df["completion_s"] = [round_up(c, round_s) if c == c else math.nan for c in df["exact_completion_s"]]
    df["jct_s"] = df["completion_s"] - df["arrival_s"]
    df["runtime_jct_s"] = [round_up(objs[i].attained_s, round_s) for i in df["id"]]
    cs: dict[str, list[float]] = {i: [] for i in df["id"]}
    util = []
    end = float(df["completion_s"].max()) if len(df) else 0.0
    for t, busy, running in recorder.rounds:
        if t < end:
            util.append(busy / total_gpus)
        for i, (_, _, r) in running.items():
            cs[i].append(1.0 / r)
    df["rounds_run"] = [len(cs[i]) for i in df["id"]]
    df["cs"] = [float(np.mean(cs[i])) if cs[i] else math.nan for i in df["id"]]
    df["threshold_hits"] = [sum(1 for x in cs[i] if x >= 1 / 0.6 - 1e-12) for i in df["id"]]
    jct, run = df["jct_s"].dropna().to_numpy(), df["runtime_jct_s"].to_numpy()
    all_cs = [x for v in cs.values() for x in v]
    start = float(df["arrival_s"].min()) if len(df) else 0.0
    summary: dict[str, Any] = {
        "jobs": int(len(df)), "finished": int(len(jct)),
        "avg_jct_s": float(jct.mean()) if len(jct) else None,
        "p90_jct_s": float(np.percentile(jct, 90)) if len(jct) else None,
        "avg_runtime_jct_s": float(run.mean()) if len(run) else None,
        "p90_runtime_jct_s": float(np.percentile(run, 90)) if len(run) else None,
        "makespan_s": end - start if len(jct) else None,
        "utilisation": float(np.mean(util)) if util else 0.0,
        "avg_cs": float(np.mean(all_cs)) if all_cs else 1.0,
        "p90_job_cs": float(np.nanpercentile(df["cs"], 90)) if df["cs"].notna().any() else 1.0,
        "restarts_and_preemptions": int(result.summary["preemptions_total"]),
    }
    for k, v in (stats or {}).items():
        summary[k] = v
    return df, summary


__all__ = ["ContentionMetrics", "RoundRecorder", "baseline_names", "contention_summary", "round_up"]


def baseline_names() -> list[str]:
    """The contention family's policies that are not learned agents: the baselines every agent table shows
    (from the registry, so a new baseline is listed once it is registered).

    ```pycon
    >>> "contention-greedy" in baseline_names(), "rl-base" in baseline_names()
    (True, False)

    ```
    """
    from ..registry import lookup, scheduler_names

    return [n for n in scheduler_names("contention") if not getattr(lookup("scheduler", n), "learned", False)]
