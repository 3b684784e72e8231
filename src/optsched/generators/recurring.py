"""Recurring-job workloads for A-SRPT (paper 001): the Philly trace mapped onto Table I, and a synthetic generator.

Paper 001 runs on the Alibaba PAI trace (user id, group id of recurring jobs, GPUs, duration; paper l. 243) and
assigns each *group* a Table I model and one of its parallel configurations "following the GPU requirement in
the trace" (l. 245); iterations are "the job duration divided by alpha~_i^min" (l. 245). We have the Philly trace
instead (``philly/philly.csv``: submission time, duration, GPUs, virtual cluster; no user nor group id), read in
place. Both sources become one *job frame* (columns ``job_id, submit_s, duration_s, trace_gpus, user_id,
group_id``), then [`map_models`][optsched.generators.recurring.map_models] gives every group a catalogue configuration
and every job its iterations.

**Philly -> recurring jobs (our rule, seeded, documented in ``docs/algorithms/a-srpt.md``):**

* ``user_id`` = the virtual cluster (15 teams' queues: the closest thing to a submitter Philly has);
* ``group_id`` (``group_rule="vc-gpus-dur"``, default) = (virtual cluster, GPUs, floor(log2 duration_s)): jobs of
  one team with the same GPU count and a duration within a factor 2 are taken as recurrences of one job. This
  uses the duration to *define* groups, so predictions on it are optimistic; ``group_rule="vc-gpus"`` (team and
  GPU count only) is the pessimistic bracket. Philly has no meta-information to hash, so no rule is neutral.

**Model mapping** ([`map_models`][optsched.generators.recurring.map_models], one ``numpy`` stream from ``seed``), per
group with trace demand d (the
GPU count of its first job):

* ``single_gpu_share=None`` (follow the trace): d = 1 -> a uniformly drawn single-GPU configuration (the models of
  Table I that fit one 32 GB V100); d > 1 -> uniformly among the multi-GPU configurations with d/2 <= g <= 2d, or,
  if none, those nearest to d in |log(g/d)|;
* ``single_gpu_share=s`` (Fig. 7): groups in a seeded random order become single-GPU until the share of *jobs* in
  single-GPU groups reaches s; every other group is distributed: its demand rule if d > 1, else a uniformly drawn
  multi-GPU configuration;
* iterations n_i = duration_i / alpha~_i^min at the *reference* network (10 Gbps NIC, 300 GB/s, 8 GPUs per
  server), then fixed: a NIC sweep changes how long a job runs, not how much work it is.

Prediction protocol (l. 263): fit on the first 80% of jobs by submission time, predict the rest in one batch
([`predict_frame`][optsched.predict.predict_frame]). Workloads are windows of consecutive jobs (l. 271: "consecutive
jobs"), with arrival
times optionally compressed to a target offered load ([`to_workload`][optsched.generators.recurring.to_workload]).

```pycon
>>> fr = synthetic_recurring_frame(200, seed=1)
>>> mapped = map_models(fr, seed=1)
>>> wl = to_workload(mapped.iloc[:20], predicted=None, name="demo")
>>> len(wl), all(j.spec.gpus == j.gpus for j in wl)
(20, True)

```
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..algorithms.heavy_edge import alpha_tilde_min
from ..errors import InstanceError
from ..models import CATALOGUE, catalogue_job
from ..perf.pipeline import Network
from ..problems.pipeline import PipelineJob
from ..problems.workload import Workload, WorkloadJob
from .workload import load_philly

__all__ = ["GROUP_RULES", "REFERENCE_NETWORK", "config_names", "map_models", "philly_frame",
           "rescale_to_load", "split_train_test", "synthetic_recurring_frame", "to_workload"]

GROUP_RULES = ("vc-gpus-dur", "vc-gpus")
REFERENCE_NETWORK = Network.paper_simulation()   # 8 GPUs/server, 10 Gbps, 300 GB/s (section V-B)
FRAME_COLUMNS = ("job_id", "submit_s", "duration_s", "trace_gpus", "user_id", "group_id")


# -- sources ---------------------------------------------------------------------------------------------------
def philly_frame(group_rule: str = "vc-gpus-dur", path: Any = None) -> pd.DataFrame:
    """The whole Philly trace (read in place) as a job frame in submission order, with the group rule above.

    ``path`` defaults to the trace in the data folder ([`optsched.generators.workload.load_philly`][]). A
    two-job file:

    ```pycon
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "philly.csv"
    >>> _ = p.write_text("timestamp,duration,num_gpus,cluster\\n2017-10-03 10:00:00,600,4,vc1\\n"
    ...                  "2017-10-03 09:00:00,5400,1,vc2\\n")
    >>> fr = philly_frame(path=p)
    >>> list(fr.columns)[:4], fr["group_id"].tolist()
    (['job_id', 'submit_s', 'duration_s', 'trace_gpus'], ['vc2/1/12', 'vc1/4/9'])

    ```
    """
    if group_rule not in GROUP_RULES:
        raise InstanceError(f"must be one of {', '.join(GROUP_RULES)}, got {group_rule!r}", field="group_rule")
    df = load_philly(path, order="submit")
    vc = df["cluster"].astype(str)
    gp = df["gpus"].astype(np.int64)
    group = vc + "/" + gp.astype(str)
    if group_rule == "vc-gpus-dur":
        group = group + "/" + np.floor(np.log2(df["duration_s"].to_numpy())).astype(np.int64).astype(str)
    return pd.DataFrame({"job_id": "p" + df["job"].astype(str), "submit_s": df["submit_s"].to_numpy(float),
                         "duration_s": df["duration_s"].to_numpy(float), "trace_gpus": gp.to_numpy(),
                         "user_id": vc.to_numpy(), "group_id": group.to_numpy()})


def synthetic_recurring_frame(n_jobs: int, seed: int = 0, *, span_s: float = 60 * 86400.0,
                              multi_gpu_mix: Sequence[tuple[int, float]] = ((2, 0.3), (4, 0.35), (8, 0.3), (16, 0.05)),
                              single_gpu_prob: float = 0.7) -> pd.DataFrame:
    """A seeded recurring-job history (the rule; all draws from ``numpy.random.default_rng(seed)``):

    * ``U = max(10, n_jobs // 100)`` users with popularity 1/(rank+1)^1.1;
    * groups are created until ``n_jobs`` jobs exist: a group is one job with probability 0.6, else it recurs
      1 + Geometric(1/6) times (mean 7), so most jobs belong to recurring groups (paper l. 233: "nearly 65%
      submitted at least five times"); its owner is drawn by popularity; its GPU demand is 1 with probability
      ``single_gpu_prob`` (Philly: 93% of jobs, PAI: "over 70%", l. 284) else drawn from ``multi_gpu_mix``;
      its log-duration level is N(ln 3600, 1.5); it repeats exactly with probability 0.4 (sigma 0), else
      sigma ~ U(0.05, 0.8); a job's duration is max(60, exp(N(level, sigma))) seconds;
    * a group starts at U(0, span_s), its jobs follow at exponential gaps of mean span_s / (4 k_g); the frame is
      sorted by submission time.

    ```pycon
    >>> fr = synthetic_recurring_frame(300, seed=0)
    >>> len(fr), bool(fr["group_id"].duplicated().any()), fr["submit_s"].is_monotonic_increasing
    (300, True, True)

    ```
    """
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise InstanceError(f"must be a positive integer, got {n_jobs!r}", field="n_jobs")
    rng = np.random.default_rng(seed)
    n_users = max(10, n_jobs // 100)
    w = 1.0 / np.arange(1, n_users + 1) ** 1.1
    w /= w.sum()
    mg = np.array([g for g, _ in multi_gpu_mix])
    mp = np.array([p for _, p in multi_gpu_mix], dtype=float)
    mp /= mp.sum()
    rows: list[tuple] = []
    g = 0
    while len(rows) < n_jobs:
        k = 1 if rng.random() < 0.6 else 1 + int(rng.geometric(1 / 6))
        user = int(rng.choice(n_users, p=w))
        gpus = 1 if rng.random() < single_gpu_prob else int(rng.choice(mg, p=mp))
        level = rng.normal(math.log(3600.0), 1.5)
        sigma = 0.0 if rng.random() < 0.4 else rng.uniform(0.05, 0.8)
        t = rng.uniform(0, span_s)
        for _ in range(k):
            rows.append((t, max(60.0, float(np.exp(rng.normal(level, sigma)))), gpus, f"u{user}", f"g{g}"))
            t += rng.exponential(span_s / (4 * k))
        g += 1
    rows = sorted(rows[:n_jobs], key=lambda r: r[0])
    fr = pd.DataFrame(rows, columns=["submit_s", "duration_s", "trace_gpus", "user_id", "group_id"])
    fr.insert(0, "job_id", [f"j{i}" for i in range(len(fr))])
    return fr


# -- model mapping ---------------------------------------------------------------------------------------------
_SPECS: dict[str, PipelineJob] = {}


def config_names(single: bool | None = None) -> list[str]:
    """Catalogue configurations ``"MODEL:CONFIG"`` (single-GPU only, multi-GPU only, or all), in catalogue order.

    ```pycon
    >>> "VGG19:1gpu" in config_names(True), all(not n.endswith(":1gpu") for n in config_names(False))
    (True, True)

    ```
    """
    out = []
    for m, spec in CATALOGUE.items():
        for c in spec.configs:
            if single is None or (c.gpus == 1) == single:
                out.append(f"{m}:{c.name}")
    return out


def spec_of(config: str) -> PipelineJob:
    """One shared [`PipelineJob`][optsched.problems.pipeline.PipelineJob] per configuration name (a trace reuses a
    handful of them)."""
    s = _SPECS.get(config)
    if s is None:
        s = _SPECS[config] = catalogue_job(config, job_id=config)
    return s


def _demand_choices(d: int, multi: list[str]) -> list[str]:
    gp = {c: spec_of(c).gpus for c in multi}
    near = [c for c in multi if d / 2 <= gp[c] <= 2 * d]
    if near:
        return near
    best = min(abs(math.log(gp[c] / d)) for c in multi)
    return [c for c in multi if abs(math.log(gp[c] / d)) <= best + 1e-12]


def map_models(frame: pd.DataFrame, seed: int = 0, *, single_gpu_share: float | None = None,
               network: Network = REFERENCE_NETWORK) -> pd.DataFrame:
    """Add ``config`` (``"MODEL:CONFIG"``), ``gpus`` (the configuration's g_i), ``atmin_s`` (alpha~_i^min in s
    at ``network``) and ``iterations`` (duration / atmin) to a job frame, by the rule in the module docstring.

    ```pycon
    >>> fr = synthetic_recurring_frame(400, seed=2)
    >>> m = map_models(fr, seed=2, single_gpu_share=0.0)
    >>> bool((m["gpus"] > 1).all()), int(m.groupby("group_id")["config"].nunique().max())
    (True, 1)

    ```
    """
    if single_gpu_share is not None and (isinstance(single_gpu_share, bool)
                                         or not isinstance(single_gpu_share, (int, float))
                                         or not 0 <= single_gpu_share <= 1):
        raise InstanceError(f"must be in [0, 1] or None, got {single_gpu_share!r}", field="single_gpu_share")
    missing = [c for c in FRAME_COLUMNS if c not in frame.columns]
    if missing:
        raise InstanceError(f"missing column(s) {missing}", field="frame")
    rng = np.random.default_rng(seed)
    single, multi = config_names(True), config_names(False)
    first = frame.drop_duplicates("group_id")[["group_id", "trace_gpus"]]
    groups = first["group_id"].tolist()
    demand = dict(zip(groups, first["trace_gpus"].astype(int)))
    sizes = frame["group_id"].value_counts().to_dict()
    if single_gpu_share is None:
        is_single = {g: demand[g] == 1 for g in groups}
    else:
        is_single = dict.fromkeys(groups, False)
        target, have = single_gpu_share * len(frame), 0
        for i in rng.permutation(len(groups)):
            if have >= target:
                break
            is_single[groups[i]] = True
            have += sizes[groups[i]]
    chosen = {}
    for g in groups:  # one draw per group, in first-appearance order (deterministic for a seed)
        if is_single[g]:
            chosen[g] = single[int(rng.integers(len(single)))]
        else:
            pool = _demand_choices(demand[g], multi) if demand[g] > 1 else multi
            chosen[g] = pool[int(rng.integers(len(pool)))]
    out = frame.copy()
    out["config"] = out["group_id"].map(chosen)
    cfgs = out["config"].unique()
    gp = {c: spec_of(c).gpus for c in cfgs}
    at = {c: alpha_tilde_min(spec_of(c), network, seed=0) / 1000.0 for c in cfgs}
    out["gpus"] = out["config"].map(gp).astype(np.int64)
    out["atmin_s"] = out["config"].map(at).astype(float)
    out["iterations"] = out["duration_s"] / out["atmin_s"]
    return out


# -- prediction ------------------------------------------------------------------------------------------------
def split_train_test(frame: pd.DataFrame, train_fraction: float = 0.8) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The first floor(train_fraction * n) jobs by submission time, and the rest (the frame is already sorted)."""
    if isinstance(train_fraction, bool) or not isinstance(train_fraction, (int, float)) \
            or not 0 <= train_fraction <= 1:
        raise InstanceError(f"must be in [0, 1], got {train_fraction!r}", field="train_fraction")
    n = math.floor(train_fraction * len(frame))
    return frame.iloc[:n].reset_index(drop=True), frame.iloc[n:].reset_index(drop=True)


# -- workloads -------------------------------------------------------------------------------------------------
def to_workload(frame: pd.DataFrame, predicted: np.ndarray | None = None, *, name: str = "recurring",
                seed: int | None = None, meta: dict | None = None):
    """A [`Workload`][optsched.problems.workload.Workload] from a mapped frame: arrival = submit_s - first submit_s,
    ``iteration_time_s`` = alpha~_i^min, ``predicted_iterations`` from ``predicted`` (0 -> absent = unseen), the
    configuration's [`PipelineJob`][optsched.problems.pipeline.PipelineJob] as ``spec``."""
    if len(frame) == 0:
        raise InstanceError("no jobs", field="frame")
    t0 = float(frame["submit_s"].iloc[0])
    preds = [None] * len(frame) if predicted is None else [float(v) if v > 0 else None for v in predicted]
    if len(preds) != len(frame):
        raise InstanceError(f"{len(preds)} predictions for {len(frame)} jobs", field="predicted")
    jobs = tuple(
        WorkloadJob(str(r.job_id), float(r.submit_s) - t0, int(r.gpus), float(r.iterations), float(r.atmin_s),
                    model=str(r.config), predicted_iterations=p, user=str(r.user_id), group=str(r.group_id),
                    spec=spec_of(r.config))
        for r, p in zip(frame.itertuples(index=False), preds))
    return Workload(jobs, name=name, seed=seed, meta=dict(meta or {}))


def offered_load(workload, total_gpus: int) -> float:
    """Sum of g_i * duration alone / (arrival span * G): the cluster's offered utilisation."""
    arr = [j.arrival_s for j in workload.jobs]
    span = max(arr) - min(arr)
    return float(workload.total_work_gpu_s / (span * total_gpus)) if span > 0 else math.inf


def rescale_to_load(workload, total_gpus: int, load: float):
    """Compress (or stretch) all arrival times by one factor so that
    [`offered_load`][optsched.generators.recurring.offered_load] equals ``load``."""
    if isinstance(load, bool) or not isinstance(load, (int, float)) or not load > 0:
        raise InstanceError(f"must be a positive number, got {load!r}", field="load")
    cur = offered_load(workload, total_gpus)
    if not math.isfinite(cur):
        return workload
    f = cur / load
    jobs = [replace(j, arrival_s=j.arrival_s * f) for j in workload.jobs]
    return workload.with_jobs(jobs, meta={**workload.meta, "offered_load": load, "arrival_factor": f})
