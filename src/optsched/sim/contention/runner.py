"""One run of a contention policy under the repository's round semantics, and its metrics.

:func:`run_contention` simulates a :class:`~optsched.problems.contention.ContentionInstance` with our engine in
round mode (``round_s``, 300 s), :class:`~optsched.perf.measured.MeasuredPerf` with sticky ratios and the
instance's floor, and a policy of :mod:`optsched.sim.contention.policies` (a name, options, or an object).
What makes it the repository's round model (``docs/algorithms/rl-contention.md``):

* decisions only at k x ``round_s``; GPUs freed inside a round stay idle until the next one (round mode);
* ratios are fixed when jobs are placed and only fall while a job keeps its placement (sticky), so every rate
  is constant within a round, as the repository's ``isolated_thp x ratio x 300 s`` per round;
* a job that reaches its samples inside round k completes, in the repository's accounting, at the end of that
  round: :func:`contention_summary` reports completions rounded up to the round (``completion_s``) and both
  JCTs: ``jct_s`` = rounded completion - arrival, ``runtime_jct_s`` = rounds the job ran x ``round_s`` (the
  repository's JCT: no queueing counted);
* utilisation = GPUs held after each round's decision / all GPUs, averaged over the rounds up to the makespan
  (the repository's ``update_util``); contention sensitivity CS = 1 / ratio per job and round.

>>> from optsched.generators.contention import random_contention_instance
>>> run = run_contention(random_contention_instance(jobs=4, seed=0, hours=0.25), "widest-first-fit")
>>> sorted(run.summary)[:3]
['avg_cs', 'avg_jct_s', 'avg_runtime_jct_s']
>>> all(run.jobs["completion_s"] % 300 == 0)
True
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...cluster import Cluster
from ...errors import InstanceError
from ...perf.measured import MeasuredPerf
from ...problems.contention import ContentionInstance
from ..base import MetricCollector, SchedulerPlacer
from ..engine import Simulator
from ..metrics import SimResult
from ..registry import build_scheduling, lookup
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
        running = {j.id: (j.placement.servers, j.placement.counts, float(perf.ratio_of(j.id)))
                   for j in view.jobs.active.values() if j.status == RUNNING and j.placement is not None}
        if self.rounds and self.rounds[-1][0] == view.now:
            self.rounds[-1] = (view.now, view.cluster.busy_gpus, running)
        else:
            self.rounds.append((view.now, view.cluster.busy_gpus, running))

    def result(self) -> dict:
        return {"decisions": len(self.rounds)}


def round_up(t: float, round_s: float) -> float:
    """``t`` rounded up to a multiple of ``round_s`` (a relative slack absorbs floating-point noise).

    >>> round_up(300.0000001, 300), round_up(301, 300)
    (300.0, 600.0)
    """
    return float(math.ceil(t / round_s - 1e-6) * round_s)


@dataclass
class ContentionRun:
    """A run: the simulator's result, per-job records in round accounting, the summary, the per-round plan
    (time -> {job: servers}), the ratios after each decision (time -> {job: ratio}) and the policy's counters."""

    result: SimResult
    jobs: pd.DataFrame
    summary: dict[str, Any]
    plan: list[tuple[float, dict[str, tuple[int, ...]]]]
    stats: dict[str, Any] = field(default_factory=dict)
    ratios: list[tuple[float, dict[str, float]]] = field(default_factory=list)


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


def _build(policy: Any, seed: int | None, threshold: float, options: dict) -> SchedulerPlacer:
    if isinstance(policy, SchedulerPlacer):
        if options:
            raise InstanceError(f"options {sorted(options)} given with a policy object", field="policy")
        return policy
    name = policy["name"] if isinstance(policy, dict) else policy
    opts = {**({k: v for k, v in policy.items() if k != "name"} if isinstance(policy, dict) else {}), **options}
    cls = lookup("scheduler", name)
    if "threshold" in inspect.signature(cls).parameters and "threshold" not in opts:
        opts["threshold"] = threshold
    built = build_scheduling({"name": name, **opts}, seed=seed)
    assert isinstance(built, SchedulerPlacer)
    return built


def run_contention(inst: ContentionInstance, policy: Any = "contention-greedy", *, seed: int | None = 0,
                   progress: bool = False, perf: MeasuredPerf | None = None, **options: Any) -> ContentionRun:
    """Simulate ``inst`` under ``policy`` with the repository's round semantics (module docstring)."""
    from ...generators.contention import to_workload

    pol = _build(policy, seed, inst.threshold, options)
    pm = perf if perf is not None else MeasuredPerf(floor=inst.floor, sticky=True,
                                                    extrapolate=any(j.gpus > 8 for j in inst.jobs))
    rec = RoundRecorder()
    config = {"scheduler": pol.describe(), "perf": pm.describe(), "round_s": inst.round_s,
              "instance": inst.name, "seed": seed, "label": pol.describe().get("name", "policy")}
    sim = Simulator(to_workload(inst), Cluster.homogeneous(inst.nodes, inst.gpus_per_node), policy=pol, perf=pm,
                    mode="round", round_s=inst.round_s, collectors=[rec], progress=progress, config=config, seed=seed)
    result = sim.run()
    stats = dict(getattr(pol, "stats", {}) or {})
    df, summary = contention_summary(result, rec, inst.round_s, inst.total_gpus, stats)
    plan = [(t, {i: s for i, (s, _, _) in running.items()}) for t, _, running in rec.rounds]
    ratios = [(t, {i: r for i, (_, _, r) in running.items()}) for t, _, running in rec.rounds]
    return ContentionRun(result, df, summary, plan, stats, ratios)


METRICS = (("avg_jct_s", "avg JCT (h)", 3600.0), ("p90_jct_s", "p90 JCT (h)", 3600.0),
           ("avg_runtime_jct_s", "avg run-time JCT (h)", 3600.0), ("p90_runtime_jct_s", "p90 run-time JCT (h)", 3600.0),
           ("utilisation", "utilisation", 1.0), ("avg_cs", "mean CS", 1.0), ("makespan_s", "makespan (h)", 3600.0))


def text_table(header: list[str], rows: list[list[Any]]) -> str:
    """A fixed-width markdown table; floats with 3 decimals.

    >>> print(text_table(["a", "b"], [["x", 1.0]]))
    | a |     b |
    |---|-------|
    | x | 1.000 |
    """
    cells = [list(map(str, header))] + [[f"{c:.3f}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    w = [max(len(r[i]) for r in cells) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(c.rjust(x) for c, x in zip(r, w)) + " |"  # noqa: E731
    return "\n".join([line(cells[0]), "|" + "|".join("-" * (x + 2) for x in w) + "|", *map(line, cells[1:])])


def evaluation_table(df: pd.DataFrame) -> str:
    """Mean of each metric per policy (rows of :func:`compare`), and the agents' average-JCT change against
    LAS and SRTF (policies labelled ``LAS``, ``SRTF``, ``rl-base``, ``rl-hybrid``)."""
    means = df.groupby("policy", sort=False).mean(numeric_only=True)
    rows = [[pol, *[float(r[k]) / div for k, _, div in METRICS]] for pol, r in means.iterrows()]
    out = text_table(["policy", *[h for _, h, _ in METRICS]], rows)
    notes = []
    for ref in ("LAS", "SRTF"):
        for agent in ("rl-base", "rl-hybrid"):
            if ref in means.index and agent in means.index:
                d = means.loc[agent, "avg_jct_s"] / means.loc[ref, "avg_jct_s"] - 1
                notes.append(f"{agent} vs {ref}: {d:+.1%} average JCT")
    return out + ("\n" + "; ".join(notes) if notes else "")


__all__ = ["BASELINES", "ContentionRun", "METRICS", "RoundRecorder", "compare", "contention_summary",
           "evaluation_table", "round_up", "run_contention", "text_table"]


BASELINES: tuple[str, ...] = ("contention-las", "contention-srtf", "widest-first-fit", "contention-random",
                              "contention-greedy")


def compare(instances: list[ContentionInstance], policies: dict[str, Any], *, seed: int | None = 0) -> pd.DataFrame:
    """Run every policy (label -> name, dict or object) on every instance; one row per (policy, instance) with
    the summary of :func:`contention_summary`.

    >>> from optsched.generators.contention import random_contention_instance
    >>> insts = [random_contention_instance(jobs=4, seed=s, hours=0.25) for s in (0, 1)]
    >>> df = compare(insts, {"LAS": "contention-las", "greedy": "contention-greedy"})
    >>> df.shape[0], sorted(df["policy"].unique())
    (4, ['LAS', 'greedy'])
    """
    rows = []
    for label, pol in policies.items():
        for inst in instances:
            run = run_contention(inst, pol, seed=seed)
            rows.append({"policy": label, "instance": inst.name, "instance_seed": inst.seed, **run.summary})
    return pd.DataFrame(rows)
