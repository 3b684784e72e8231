"""Deadline metrics of a simulation run (paper 003, section 4) and their plots.

* R_trace (eq. 13) = deadlines met / jobs, over every job of the trace with a deadline (a declined or
  unfinished job misses); also weighted by 1/alpha (``r_trace_urgency``). Best-effort jobs (format 2, no
  deadline) are left out of both, as ElasticFlow counts them, and reported apart: ``best_effort_jobs``,
  ``best_effort_finished``, ``best_effort_avg_completion_s`` (in the summary too) and a ``best_effort`` column
  of the per-job table, present when the workload has such jobs;
* average wait T_wait = mean(T_start - T_arr) and average completion T_comp = mean(T_end - T_arr), over the jobs
  that started / finished (the paper divides by M: all its jobs run; ours differ only for declined jobs);
* utilisation: time-weighted busy GPUs / GPUs over [first arrival, end of the run], and its series over time
  ([`utilisation_series`][optsched.sim.deadline.metrics.utilisation_series], Fig. 12);
* migrations (moves of running jobs; an elastic rescaling counts as one), preemptions, jobs declined by an
  admission policy.

Numbers are our simulator's. Plot functions take and return a matplotlib ``Axes``.

```pycon
>>> from optsched.problems.deadline import DeadlineJob, DeadlineWorkload, paper_cluster
>>> from optsched.sim import simulate
>>> wl = DeadlineWorkload(paper_cluster(1, 1), (DeadlineJob("a", "TSN", 0, 1.0, 1), DeadlineJob("b", "TSN", 0, 1.0, 1)))
>>> m = simulate(wl, scheduler="edf").custom["deadline"]
>>> m["jobs"], m["deadlines_met"], m["r_trace"], m["avg_wait_s"] == m["avg_completion_s"] / 3
(2, 1, 0.5, True)

```
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from ...problems.deadline import DEADLINE_TOL_S, job_weight
from ..base import MetricCollector
from ..metrics import SimResult

__all__ = ["DeadlineMetrics", "deadline_metrics", "met_mask", "plot_utilisation",
           "utilisation_series"]

#: the deadline metrics that also go into ``SimResult.summary`` (the others share a name with a summary key of
#: another meaning: ``jobs``, ``preemptions``, ``makespan_s``, ...; all are in ``custom["deadline"]``)
SUMMARY_KEYS = ("deadlines_met", "r_trace", "r_trace_urgency", "avg_wait_s", "avg_completion_s", "declined",
                "unfinished")
#: added to the summary when the workload has best-effort jobs
BEST_EFFORT_KEYS = ("best_effort_jobs", "best_effort_finished", "best_effort_avg_completion_s")


def met_mask(jobs: pd.DataFrame) -> np.ndarray:
    """Per job: finished and completion <= deadline (+ the package's tolerance)."""
    c = jobs["completion_s"].to_numpy(dtype=float)
    d = jobs["deadline_s"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        return np.isfinite(c) & (c <= d + DEADLINE_TOL_S)


def deadline_metrics(result: SimResult, alphas: Mapping[str, float] | None = None,
                     declined: int | None = None, best_effort: Iterable[str] | None = None) -> dict[str, Any]:
    """The deadline metrics of one run (module docstring). ``alphas`` (job id -> alpha) enables the
    urgency-weighted ratio; taken from the jobs' specs when absent. ``declined`` overrides the count of jobs
    never admitted. ``best_effort``: ids of the jobs without a deadline (left out of the ratios)."""
    full = result.jobs
    be_ids = set(best_effort or ())
    be = full["id"].isin(be_ids).to_numpy() if be_ids else np.zeros(len(full), dtype=bool)
    df = full[~be] if be_ids else full
    n = len(df)
    met = met_mask(df)
    if alphas is None:
        alphas = {j.id: float(getattr(j.spec, "alpha", 1.0)) for j in result.job_objects}
    w = np.array([job_weight(alphas.get(i, 1.0), "urgency") for i in df["id"]])
    started = df["first_start_s"].notna()
    finished = df["completion_s"].notna()
    wait = (df["first_start_s"] - df["arrival_s"])[started]
    comp = (df["completion_s"] - df["arrival_s"])[finished]
    s = result.summary
    n_declined = int(df["admitted_s"].isna().sum()) if declined is None else int(declined)
    out = {
        "jobs": int(n),
        "deadlines_met": int(met.sum()),
        "r_trace": float(met.mean()) if n else math.nan,
        "r_trace_urgency": float((w * met).sum() / w.sum()) if n else math.nan,
        "avg_wait_s": float(wait.mean()) if len(wait) else math.nan,
        "avg_completion_s": float(comp.mean()) if len(comp) else math.nan,
        "utilisation": float(s["mean_utilisation"]) if s.get("mean_utilisation") is not None else math.nan,
        "migrations": int(s.get("migrations_total", 0)),
        "preemptions": int(s.get("preemptions_total", 0)),
        "declined": n_declined,
        "unfinished": int((~finished).sum()) - n_declined,
        "makespan_s": float(df["completion_s"].max() - df["arrival_s"].min()) if finished.any() else math.nan,
    }
    if be_ids:
        b = full[be]
        done = b["completion_s"].notna()
        out.update({"best_effort_jobs": int(len(b)), "best_effort_finished": int(done.sum()),
                    "best_effort_avg_completion_s": float((b["completion_s"] - b["arrival_s"])[done].mean())
                    if done.any() else math.nan})
    return out


class DeadlineMetrics(MetricCollector):
    """The deadline family's metrics of a run ([`deadline_metrics`][optsched.sim.deadline.metrics.deadline_metrics]):
    ``result.custom["deadline"]`` and the
    [`SUMMARY_KEYS`][optsched.sim.deadline.metrics.SUMMARY_KEYS] in the summary. ``alphas``: job id -> alpha (the
    urgency weights)."""

    name = "deadline"

    def __init__(self, alphas: Mapping[str, float] | None = None, best_effort: Iterable[str] | None = None):
        self.alphas = dict(alphas) if alphas is not None else None
        self.best_effort = list(best_effort) if best_effort is not None else None

    def finish(self, result: SimResult) -> None:
        m = deadline_metrics(result, self.alphas, best_effort=self.best_effort)
        result.custom["deadline"] = m
        result.summary.update({k: m[k] for k in SUMMARY_KEYS})
        if self.best_effort:
            result.summary.update({k: m[k] for k in BEST_EFFORT_KEYS})
            result.jobs["best_effort"] = result.jobs["id"].isin(set(self.best_effort))


def utilisation_series(result: SimResult, bin_s: float = 3600.0, end_s: float | None = None) -> pd.DataFrame:
    """Time-weighted utilisation in bins of ``bin_s`` seconds from t = 0 to the end of the run (Fig. 12):
    columns ``t_start_s``, ``utilisation``."""
    ts = result.timeseries
    end = float(result.summary.get("end_s", ts["t_s"].max() if len(ts) else 0.0)) if end_s is None else end_s
    edges = np.arange(0.0, max(end, bin_s) + bin_s, bin_s)
    t = ts["t_s"].to_numpy(dtype=float)
    v = ts["utilisation"].to_numpy(dtype=float)
    keep = np.r_[t[1:] != t[:-1], True] if len(t) else np.array([], dtype=bool)
    t, v = t[keep], v[keep]
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        # the step function holds each sample's value until the next one; before the first, 0
        pts = np.clip(np.r_[t, end], a, b)
        widths = np.diff(pts)
        out.append(float((widths * v).sum()) / (b - a) if b > a else math.nan)
    return pd.DataFrame({"t_start_s": edges[:-1], "utilisation": out})


def plot_utilisation(ax, result: SimResult, label: str, bin_s: float = 3600.0):
    """Utilisation per ``bin_s`` bin against hours, one line (Fig. 12); returns ``ax``."""
    u = utilisation_series(result, bin_s)
    ax.step(u["t_start_s"] / 3600.0, u["utilisation"], where="post", label=label)
    ax.set_xlabel("time (h)")
    ax.set_ylabel("GPU utilisation")
    ax.set_ylim(0, 1.05)
    return ax
