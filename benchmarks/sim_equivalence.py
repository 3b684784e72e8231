"""Issue 22's oracle: per-job results and simulator speed of this checkout against a base commit (today's main).

The refactor of the simulator into one engine, one policy contract and one door must leave every policy's
per-job results identical on fixed seeds and must not make the simulator slower. This script checks both
against a base commit kept as an oracle; it changes nothing in the repository (the base is a temporary git
worktree, removed at the end) and writes a file only where ``--out`` says.

How it works. Each side runs in its own process of this very script, with the current venv's python and
``PYTHONPATH`` set to that side's ``src`` (the base: the temporary worktree's; the candidate: this checkout's).
The child checks that ``optsched`` was imported from the ``src`` it was given. A matrix entry is a small
*adapter* (section "adapters" below): it tries today's entry point (``experiments.run_one``, ``sim.simulate``,
``run_deadline``, ``run_contention``, ``run_whatif``, ``run_policy`` / ``run_asrpt``) and, when the tree no
longer has that name, the one door ``optsched.simulate(workload_or_instance, scheduler=..., **options)`` whose
result's ``.jobs`` is the per-job table. Each adapter reduces its run to a *canonical per-job table*:
:data:`COMMON` columns plus the family's own (:data:`FAMILY`). Tables are compared exactly: float columns bit
for bit (so -0.0 differs from 0.0; NaN equals NaN, whatever its payload), integer and bool columns by value
after a cast to float64 (exact below 2**53), other columns by value; jobs are matched by id, the row order is
not compared.

Commands (from the repository root, with the venv's python):

* ``python -m benchmarks.sim_equivalence check [--base REF] [--quick] [--api auto|legacy|door]``: the
  matrix on both sides, then a table ``entry | jobs | api | identical | first differing job | column``;
  exit 1 if any entry differs or fails on either side. ``--quick`` (about 2 minutes) takes one load and a
  covering subset of the Blox option grid; the full matrix (about 10 minutes) the whole cross product.
  ``--api door`` makes the candidate use the door even where today's names still exist (the base always
  uses today's API); ``--only SUBSTRING`` restricts the entries, ``--keep DIR`` keeps the tables.
* ``python -m benchmarks.sim_equivalence speed [--base REF] [--jobs 100000] [--repeats 3] [--out FILE]``:
  ``replicate_philly(JOBS, 130 jobs/h, seed 0)`` on 2,000 GPUs (500 x 4, round mode, consolidated placement)
  under FIFO, LAS and Tiresias, base and candidate alternating (who goes first alternates too), each run a
  fresh process: its whole-process CPU seconds (``os.wait4``'s rusage of the child, user + sys) and the
  ``simulate()`` call's own CPU seconds (``time.process_time`` in the child); medians, the candidate / base
  ratios and whether every run's per-job table is identical to the base's first. The markdown table is
  printed; it is written to ``--out`` only (a quick run rewrites no tracked file).

``--base`` defaults to :data:`DEFAULT_BASE` (main when issue 22 started); ``--base-src DIR`` uses an existing
``src`` folder instead of a worktree. With no sub-command the script runs ``check`` (so ``python -m benchmarks
--quick`` runs ``check --quick``). All numbers are our simulator's on a shared machine (the load average is
printed with the table), none is a paper's.

Where the refactor renames things, edit the top of this file: :data:`DOOR_COLUMNS` (per-job columns of the
door's table), :data:`WORKLOAD_MODULES` (where the workload builders live) and the adapters' door branches.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BASE = "c8ed06b2517bc90c1bccca31d0c27bfd33a8107d"  # main when issue 22 started

# ---- what is compared (edit here when the refactor renames a column or moves a module) ------------------------
#: the per-job columns every run is compared on (the names of today's ``SimResult.jobs``)
COMMON = ("id", "arrival_s", "first_start_s", "completion_s", "preemptions", "launches", "migrations",
          "attained_gpu_s")
#: each family's own per-job columns, compared besides :data:`COMMON`
FAMILY = {
    "deadline": ("deadline_s", "deadline_met"),
    # the round-accounted completion and JCT of ``run_contention`` (its ``jobs`` table's ``completion_s`` and
    # ``runtime_jct_s``) and each job's mean contention sensitivity (``cs``)
    "contention": ("round_completion_s", "runtime_jct_s", "cs"),
}
#: per family ("" for the Blox / A-SRPT / Gavel / what-if runs): canonical column -> the column of the door's
#: per-job table that holds it, where the door names it differently (any canonical column may be mapped)
DOOR_COLUMNS: dict[str, dict[str, str]] = {
    "": {},
    "deadline": {},
    "contention": {"round_completion_s": "round_completion_s", "runtime_jct_s": "runtime_jct_s", "cs": "cs"},
}
#: modules searched, in this order, for the workload builders (``resolve_workload``, ``synthetic_workload``,
#: ``load_philly``, ``replicate_philly``): today's home first, then where the refactor may move them
WORKLOAD_MODULES = ("optsched.sim.traces", "optsched.generators.workload", "optsched.generators.traces",
                    "optsched.generators.philly", "optsched.workloads")

# ---- the child's choice of API -----------------------------------------------------------------------------
API = "auto"  # "auto": today's name when the tree has it, else the door; "legacy": today's only; "door": door only


def _legacy(module: str, name: str) -> Any:
    """Today's entry point ``module.name``, or None when this tree no longer has it (or ``--api door``)."""
    if API == "door":
        return None
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        if API == "legacy":
            raise
        return None


def _door() -> Callable[..., Any]:
    import optsched

    return optsched.simulate


def _find(name: str) -> Any:
    """A workload builder, from the first module of :data:`WORKLOAD_MODULES` that has it."""
    for mod in WORKLOAD_MODULES:
        try:
            return getattr(importlib.import_module(mod), name)
        except (ImportError, AttributeError):
            continue
    raise ImportError(f"no module of WORKLOAD_MODULES has {name!r}: add its new home there")


_FRAME: dict[str, Any] = {}


def _philly_frame() -> Any:
    if "philly" not in _FRAME:
        _FRAME["philly"] = _find("load_philly")()
    return _FRAME["philly"]


def canonical(jobs: pd.DataFrame, family: str = "", extra: pd.DataFrame | None = None,
              rename: dict[str, str] | None = None) -> pd.DataFrame:
    """The canonical per-job table: :data:`COMMON` plus ``family``'s columns, taken from ``jobs`` (or, for the
    columns it lacks, from ``extra``, matched on id), reading canonical column ``c`` from ``rename.get(c, c)``.

    >>> t = pd.DataFrame({"id": ["a"], "x": [2], **{c: [1.0] for c in COMMON[1:]}})
    >>> canonical(t).columns.tolist() == list(COMMON)
    True
    """
    cols = COMMON + FAMILY.get(family, ())
    rename = rename or {}
    out = pd.DataFrame({"id": jobs["id"].astype(str).to_numpy()})
    by_id = None if extra is None else extra.assign(id=extra["id"].astype(str)).set_index("id")
    for c in cols[1:]:
        src = rename.get(c, c)
        if src in jobs.columns:
            out[c] = jobs[src].to_numpy()
        elif by_id is not None and src in by_id.columns:
            out[c] = by_id[src].reindex(out["id"]).to_numpy()
        else:
            known = sorted(set(jobs.columns) | (set() if by_id is None else set(by_id.columns)))
            raise KeyError(f"per-job table has no column {src!r} (for {c!r}; it has {known}): adjust DOOR_COLUMNS")
    return out


# ---- adapters: one per kind of run; today's API first, the door second --------------------------------------
def run_workload_spec(spec: str, *, scheduler: str, placement: str = "consolidated", admission: str = "accept-all",
                      load: float | None = None, event: bool = False, restore_s: float = 0.0,
                      window: tuple[int, int] | None = None, n_jobs: int | None = None, servers: int = 32,
                      gpus_per_server: int = 4, perf: Any = None, seed: int = 0) -> tuple[pd.DataFrame, str]:
    """A CLI workload spec (``philly``, ``philly:blox``, ``synthetic``) as ``experiments.run_one`` runs it:
    jobs larger than the cluster dropped, stop once every tracked job has finished."""
    frame = _philly_frame() if spec.startswith("philly") else None
    run_one = _legacy("optsched.experiments", "run_one")
    if run_one is not None:
        r = run_one(spec, scheduler=scheduler, placement=placement, admission=admission, load=load, seed=seed,
                    event=event, window=window, n_jobs=n_jobs, servers=servers, gpus_per_server=gpus_per_server,
                    perf=perf, restore_s=restore_s, philly_frame=frame)
        return canonical(r.jobs), "legacy"
    wl = _find("resolve_workload")(spec, load_jph=load, seed=seed, window=window, n_jobs=n_jobs,
                                   max_gpus=servers * gpus_per_server, philly_frame=frame)
    r = _door()(wl, servers=servers, gpus_per_server=gpus_per_server, scheduler=scheduler, placement=placement,
                admission=admission, perf=perf, mode="event" if event else "round", round_s=300.0, seed=seed,
                restore_s=restore_s, stop_when_tracked_done=True)
    return canonical(r.jobs, rename=DOOR_COLUMNS[""]), "door"


def run_hetero(scheduler: str, *, cluster: str, mode: str, n_jobs: int = 60, load: float = 6.0,
               seed: int = 0) -> tuple[pd.DataFrame, str]:
    """A synthetic workload under ``scheduler`` with the ``hetero`` performance model (bound to the cluster's
    GPU types when the cluster names them: Gavel needs that)."""
    from optsched.cluster import parse_cluster
    from optsched.perf.hetero import HeteroPerf

    wl = _find("synthetic_workload")(n_jobs, load, seed)
    cl = parse_cluster(cluster)
    perf: Any = HeteroPerf.for_cluster(cl) if ":" in cluster else "hetero"
    sim = _legacy("optsched.sim", "simulate")
    api = "legacy" if sim is not None else "door"
    r = (sim or _door())(wl, cl, scheduler=scheduler, perf=perf, mode=mode, seed=seed)
    return canonical(r.jobs, rename=DOOR_COLUMNS[""] if sim is None else None), api


def run_asrpt_tiny(policy: str, *, n: int, seed: int, cluster: tuple[int, int] = (2, 4)) -> tuple[pd.DataFrame, str]:
    """``run_asrpt`` (A-SRPT) / ``run_policy`` (its baselines) on ``random_pipeline_jobs(n, seed)``: paper
    001's performance model, event mode."""
    from optsched.generators.total_jct import random_pipeline_jobs

    jobs = random_pipeline_jobs(n, seed)
    run = _legacy("optsched.sim.asrpt", "run_asrpt" if policy == "a-srpt" else "run_policy")
    if run is not None:
        r = run(jobs, cluster) if policy == "a-srpt" else run(policy, jobs, cluster)
        return canonical((r.result if hasattr(r, "result") else r).jobs), "legacy"  # PolicyRun, or the door's
    # the door: the workload run_policy builds today (alpha~min per job from the cluster's network)
    from optsched.perf.mixed import MixedPerf
    from optsched.problems.workload import Workload, WorkloadJob

    cache_cls = _find_in(("optsched.sim.asrpt", "optsched.sim.asrpt.predicting", "optsched.perf.mixed"),
                         "AlphaMinCache")
    perf = MixedPerf(cluster[1], 10.0, 300.0)
    cache = cache_cls(perf.network)
    wjobs = tuple(WorkloadJob(str(i), rel, spec.gpus, it, cache.alpha_tilde_min_ms(spec) / 1000.0,
                              model=spec.model, predicted_iterations=pred if pred else None, spec=spec)
                  for i, rel, spec, it, pred in jobs)
    r = _door()(Workload(wjobs, name="offline"), cluster, scheduler=policy, perf=perf, mode="event", seed=0)
    return canonical(r.jobs, rename=DOOR_COLUMNS[""]), "door"


def _find_in(modules: tuple[str, ...], name: str) -> Any:
    for mod in modules:
        try:
            return getattr(importlib.import_module(mod), name)
        except (ImportError, AttributeError):
            continue
    raise ImportError(f"none of {modules} has {name!r}")


def _deadline_workload(kind: str, seed: int) -> Any:
    from optsched.generators.deadline import deadline_workload, tiny_deadline_workload

    return tiny_deadline_workload(6, seed=seed) if kind == "tiny" else deadline_workload(6.0, 24.0, seed=seed)


def run_deadline_entry(policy: str, *, kind: str, seed: int, mode: str) -> tuple[pd.DataFrame, str]:
    """``run_deadline`` (ring model of the workload's cluster, min-feasible GPU requests) in event mode or in
    300 s rounds; the door gets the DeadlineWorkload itself and applies the same defaults."""
    wl = _deadline_workload(kind, seed)
    # issue 25 renamed the fixed-reservation policy: the base's "elasticflow" is the candidate's "elasticflow-fixed"
    if policy == "elasticflow":
        try:
            from optsched.sim.registry import SCHEDULERS
        except ImportError:  # a tree from before the registry (the base): the name is still its own
            SCHEDULERS = {}
        if "elasticflow-fixed" in SCHEDULERS:
            policy = "elasticflow-fixed"
    run = _legacy("optsched.sim.deadline", "run_deadline")
    if run is not None:
        r = run(wl, policy, mode="event", round_s=300.0 if mode == "round" else None, seed=0)
        return canonical(r.result.jobs, "deadline"), "legacy"
    r = _door()(wl, scheduler=policy, mode=mode, round_s=300.0, seed=0)
    return canonical(r.jobs, "deadline", rename=DOOR_COLUMNS["deadline"]), "door"


def run_contention_entry(policy: str, *, jobs: int, seed: int, mix: str = "normal",
                         arrival: str = "zero") -> tuple[pd.DataFrame, str]:
    """``run_contention`` (round semantics of the instance, DeepShare's measured model) on
    ``random_contention_instance``; needs the DeepShare tables of the shared data folder."""
    from optsched.generators.contention import random_contention_instance

    inst = random_contention_instance(jobs, mix, seed, arrival=arrival)
    run = _legacy("optsched.sim.contention", "run_contention")
    if run is not None:
        r = run(inst, policy, seed=0)
        rounds = r.jobs.rename(columns={"completion_s": "round_completion_s"})
        return canonical(r.result.jobs, "contention", extra=rounds), "legacy"
    r = _door()(inst, scheduler=policy, seed=0)
    return canonical(r.jobs, "contention", rename=DOOR_COLUMNS["contention"]), "door"


WHATIF_CASES: dict[str, dict[str, Any]] = {
    "three": {"candidates": [("fifo", "accept-all"), ("srtf", "accept-all"), ("las", "accept-1.2")],
              "period_s": 3600.0, "horizon_s": 3600.0},
    "present-both": {"candidates": [("fifo", "accept-all"), ("tiresias", "accept-all")], "period_s": 1800.0,
                     "horizon_s": 3600.0, "lookahead": "present", "metric": "both"},
}


def run_whatif_entry(case: str, *, seed: int) -> tuple[pd.DataFrame, str]:
    """``run_whatif`` on ``synthetic_workload(60, 6 jobs/h, seed)`` on 4 x 4 GPUs. The door's form is a guess
    (a ``what-if`` scheduler taking the candidates and the switching options): adjust it to the refactor's."""
    wl = _find("synthetic_workload")(60, 6.0, seed)
    opts = WHATIF_CASES[case]
    run = _legacy("optsched.sim.whatif", "run_whatif")
    if run is not None:
        out = run(wl, "4x4", seed=0, **opts)  # today's WhatIfRun holds a .result; the door's run is the result
        return canonical(out.result.jobs if hasattr(out, "result") else out.jobs), "legacy"
    r = _door()(wl, "4x4", scheduler={"name": "what-if", **opts}, mode="round", seed=0)
    return canonical(r.jobs, rename=DOOR_COLUMNS[""]), "door"


# ---- the matrix ---------------------------------------------------------------------------------------------
BLOX_SCHEDULERS = ("fifo", "las", "srtf", "tiresias")
PLACEMENTS = ("consolidated", "first-free", "scattered")
ADMISSIONS = ("accept-all", "accept-1.2")
MODES = ("round", "event")
RESTORES = (0.0, 30.0)
ASRPT_POLICIES = ("a-srpt", "a-srpt-perfect", "spjf", "spwf", "wcs-duration", "wcs-workload", "wcs-subtime")
DEADLINE_POLICIES = ("drs", "norm", "edf", "deadline-fifo", "themis", "elasticflow", "las", "tiresias")
CONTENTION_POLICIES = ("contention-las", "contention-srtf", "widest-first-fit", "contention-random",
                       "contention-greedy", "rl-base", "rl-hybrid")


@dataclass(frozen=True)
class Entry:
    name: str
    run: Callable[..., tuple[pd.DataFrame, str]]
    kwargs: dict[str, Any] = field(default_factory=dict)


def matrix(quick: bool) -> list[Entry]:
    """Every entry of the check; ``quick``: Philly at load 8 only, each (scheduler, placement, mode) once with
    admission and restore stall alternating so that every value meets every scheduler and mode; one seed of
    the smaller families."""
    out: list[Entry] = []
    window = (3000, 3200)
    for spec in ("philly", "philly:blox"):
        for load in (8.0,) if quick else (4.0, 8.0):
            grid = [(s, p, a, m, r) for s in BLOX_SCHEDULERS for p in PLACEMENTS for a in ADMISSIONS for m in MODES
                    for r in RESTORES]
            if quick:
                grid = [g for g in grid if (PLACEMENTS.index(g[1]) + ADMISSIONS.index(g[2]) + MODES.index(g[3])
                                            + RESTORES.index(g[4]) + BLOX_SCHEDULERS.index(g[0])) % 4 == 0]
            for s, p, a, m, r in grid:
                out.append(Entry(f"{spec}/load{load:g}/{s}/{p}/{a}/{m}/restore{r:g}", run_workload_spec,
                                 dict(spec=spec, scheduler=s, placement=p, admission=a, load=load, event=m == "event",
                                      restore_s=r, window=window, n_jobs=window[1] + 100)))
    for sched, cluster in (("gavel", "V100:2x4,P100:2x4,K80:2x4"), ("gavel-makespan", "V100:2x4,P100:2x4,K80:2x4"),
                           ("gavel", "4x4"), ("optimus", "4x4")):
        for mode in MODES:
            out.append(Entry(f"hetero/{sched}/{cluster}/{mode}", run_hetero, dict(scheduler=sched, cluster=cluster,
                                                                                  mode=mode)))
    for seed in (0,) if quick else (0, 1):
        for p in ASRPT_POLICIES:
            out.append(Entry(f"asrpt-synthetic/{p}/seed{seed}", run_workload_spec,
                             dict(spec="synthetic", scheduler=p, n_jobs=200, servers=4, gpus_per_server=8,
                                  perf="mixed", event=True, seed=seed)))
    for seed in (0,) if quick else (0, 1, 2):
        for p in ASRPT_POLICIES:
            out.append(Entry(f"asrpt-tiny/{p}/n6/seed{seed}", run_asrpt_tiny, dict(policy=p, n=6, seed=seed)))
    for kind, seed in [("poisson", 0), ("tiny", 1)] + ([] if quick else [("poisson", 1)]):
        for p in DEADLINE_POLICIES:
            for mode in MODES:
                out.append(Entry(f"deadline/{kind}-seed{seed}/{p}/{mode}", run_deadline_entry,
                                 dict(policy=p, kind=kind, seed=seed, mode=mode)))
    for label, kw in (("n64-normal-zero-seed0", dict(jobs=64, seed=0)),
                      ("n48-heavy-poisson-seed1", dict(jobs=48, seed=1, mix="heavy", arrival="poisson"))):
        for p in CONTENTION_POLICIES:
            out.append(Entry(f"contention/{label}/{p}", run_contention_entry, dict(policy=p, **kw)))
    for case in WHATIF_CASES:
        for seed in (1,) if quick else (1, 2):
            out.append(Entry(f"whatif/{case}/seed{seed}", run_whatif_entry, dict(case=case, seed=seed)))
    return out


# ---- comparison ---------------------------------------------------------------------------------------------
def _as_float(s: pd.Series) -> np.ndarray | None:
    """The column as float64 when it is numeric or bool (None -> NaN), else None."""
    if s.dtype == object:
        try:
            return pd.to_numeric(s.where(s.notna(), np.nan), errors="raise").to_numpy(dtype=np.float64)
        except (TypeError, ValueError):
            return None
    if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
        return s.to_numpy(dtype=np.float64, na_value=np.nan)
    return None


def _differs(a: pd.Series, b: pd.Series) -> np.ndarray:
    """Per row: do the two values differ? Floats bit for bit, NaN == NaN; other values by ``==``."""
    fa, fb = _as_float(a), _as_float(b)
    if fa is not None and fb is not None:
        nan = np.isnan(fa) & np.isnan(fb)
        return (fa.view(np.uint64) != fb.view(np.uint64)) & ~nan
    return np.array([not _same(x, y) for x, y in zip(a.to_numpy(dtype=object), b.to_numpy(dtype=object))],
                    dtype=bool)


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, (float, np.floating)) and bool(np.isnan(x)))


def _same(x: Any, y: Any) -> bool:
    """Two values of an object column: equal, or both missing (None / NaN)."""
    if _missing(x) or _missing(y):
        return _missing(x) and _missing(y)
    try:
        return bool(x == y)
    except (TypeError, ValueError):  # e.g. arrays: compare what they print
        return repr(x) == repr(y)


def first_difference(base: pd.DataFrame, cand: pd.DataFrame) -> tuple[str, str, int] | None:
    """None when the two per-job tables are identical; else (first differing job id in the base's order, or
    '-', the column or what differs, number of differing jobs). Jobs are matched by id.

    >>> t = pd.DataFrame({"id": ["a", "b"], "completion_s": [1.0, float("nan")]})
    >>> first_difference(t, t.copy()) is None
    True
    >>> first_difference(t, t.assign(completion_s=[1.0, 2.0]))
    ('b', 'completion_s', 1)
    """
    if list(base.columns) != list(cand.columns):
        missing = [c for c in base.columns if c not in cand.columns]
        extra = [c for c in cand.columns if c not in base.columns]
        return "-", f"columns differ (missing {missing}, extra {extra})", 0
    ids_b, ids_c = base["id"].astype(str), cand["id"].astype(str)
    if ids_b.duplicated().any() or ids_c.duplicated().any():
        if len(base) != len(cand) or not (ids_b.to_numpy() == ids_c.to_numpy()).all():
            return "-", "duplicate job ids and a different job list", 0
        aligned = cand.reset_index(drop=True)
    else:
        only_b = ids_b[~ids_b.isin(set(ids_c))]
        only_c = ids_c[~ids_c.isin(set(ids_b))]
        if len(only_b):
            return str(only_b.iloc[0]), f"job missing in the candidate ({len(only_b)} jobs)", len(only_b) + len(only_c)
        if len(only_c):
            return str(only_c.iloc[0]), f"extra job in the candidate ({len(only_c)} jobs)", len(only_c)
        aligned = cand.set_index(ids_c.to_numpy()).loc[ids_b.to_numpy()].reset_index(drop=True)
    base = base.reset_index(drop=True)
    masks = {c: _differs(base[c], aligned[c]) for c in base.columns}
    any_row = np.logical_or.reduce(list(masks.values())) if masks else np.zeros(len(base), dtype=bool)
    if not any_row.any():
        return None
    row = int(np.argmax(any_row))
    col = next(c for c in base.columns if masks[c][row])
    return str(ids_b.iloc[row]), col, int(any_row.sum())


# ---- the children ---------------------------------------------------------------------------------------------
def _check_import(src: str) -> None:
    import optsched

    where = Path(optsched.__file__).resolve()
    if Path(src).resolve() not in where.parents:
        raise SystemExit(f"optsched was imported from {where}, not from {src}: PYTHONPATH did not take")


def child_check(args: argparse.Namespace) -> int:
    global API
    API = args.api
    _check_import(args.src)
    out: dict[str, Any] = {}
    for e in matrix(args.quick):
        if args.only and args.only not in e.name:
            continue
        t0 = time.process_time()
        try:
            table, api = e.run(**e.kwargs)
            out[e.name] = {"jobs": table, "api": api, "cpu_s": time.process_time() - t0}
        except Exception as exc:  # noqa: BLE001 - one failing entry is a row of the report, not the end of it
            out[e.name] = {"error": f"{type(exc).__name__}: {exc}"[:300], "api": "-",
                           "cpu_s": time.process_time() - t0}
    with open(args.out, "wb") as fh:
        pickle.dump(out, fh)
    return 0


def child_speed(args: argparse.Namespace) -> int:
    global API
    API = args.api
    _check_import(args.src)
    wl = _find("replicate_philly")(args.jobs, 130.0, 0, frame=_find("load_philly")())
    sim = _legacy("optsched.sim", "simulate")
    api = "legacy" if sim is not None else "door"
    t0 = time.process_time()
    r = (sim or _door())(wl, servers=500, gpus_per_server=4, scheduler=args.policy, placement="consolidated",
                         mode="round")
    sim_cpu = time.process_time() - t0
    with open(args.out, "wb") as fh:
        pickle.dump(canonical(r.jobs, rename=DOOR_COLUMNS[""] if sim is None else None), fh)
    print(json.dumps({"sim_cpu_s": sim_cpu, "api": api, "events": int(r.summary.get("events", -1))}))
    return 0


# ---- the parent ---------------------------------------------------------------------------------------------
def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


class BaseTree:
    """The base's ``src``: a temporary detached worktree of ``ref`` (removed on exit), or ``src`` as given."""

    def __init__(self, ref: str, src: str | None):
        self.ref, self.given, self.tmp, self.tree = ref, src, None, None
        if src is None:
            self.commit = _git("rev-parse", "--verify", f"{ref}^{{commit}}")
        else:
            self.commit = f"(source folder {src})"

    def __enter__(self) -> Path:
        if self.given is not None:
            return Path(self.given).resolve()
        self.tmp = Path(tempfile.mkdtemp(prefix="sim-equivalence-"))
        self.tree = self.tmp / "base"
        _git("worktree", "add", "--detach", "--quiet", str(self.tree), self.commit)
        return self.tree / "src"

    def __exit__(self, *exc: Any) -> None:
        if self.tree is not None:
            try:
                _git("worktree", "remove", "--force", str(self.tree))
            except subprocess.CalledProcessError:
                shutil.rmtree(self.tree, ignore_errors=True)
                _git("worktree", "prune")
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


def _env(src: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
    try:
        from optsched.data import data_root

        env["OPTSCHED_DATA"] = str(data_root())  # the base worktree lives elsewhere: point it at the same data
    except Exception:  # noqa: BLE001 - no data folder: the entries that need it report it themselves
        pass
    return env


# the child runs this file without putting its folder (benchmarks/, whose modules could shadow others) on sys.path
_RUNNER = "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"


def _child_cmd(sub: str, src: Path, *rest: str) -> list[str]:
    return [sys.executable, "-c", _RUNNER, str(Path(__file__).resolve()), sub, "--src", str(src), *rest]


def _head() -> str:
    dirty = " (with uncommitted changes)" if _git("status", "--porcelain", "--untracked-files=no") else ""
    return _git("rev-parse", "--short", "HEAD") + dirty


def cmd_check(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    head = _head()  # before the run: a commit made meanwhile is not what was checked
    base = BaseTree(args.base, args.base_src)
    with base as base_src, tempfile.TemporaryDirectory(prefix="sim-eq-") as d:
        work = Path(args.keep) if args.keep else Path(d)
        work.mkdir(parents=True, exist_ok=True)
        extra = (["--quick"] if args.quick else []) + (["--only", args.only] if args.only else [])
        sides = {"base": (base_src, "legacy"), "candidate": (ROOT / "src", args.api)}
        procs = {}
        for who, (src, api) in sides.items():  # the two sides at once: this is a check, not a timing
            procs[who] = subprocess.Popen(_child_cmd("_check-child", src, "--out", str(work / f"{who}.pkl"),
                                                     "--api", api, *extra), env=_env(src), cwd=d)
        failed = [who for who, p in procs.items() if p.wait() != 0]
        if failed:
            print(f"the {' and '.join(failed)} side failed (its error is above)", file=sys.stderr)
            return 2
        res = {who: pickle.loads((work / f"{who}.pkl").read_bytes()) for who in sides}
    rows, bad = [], 0
    for name in res["base"]:
        b, c = res["base"][name], res["candidate"].get(name, {"error": "not run", "api": "-"})
        api = f"{b['api']}/{c['api']}"
        if "error" in b or "error" in c:
            bad += 1
            which = "base" if "error" in b else "candidate"
            rows.append([name, "-", api, "ERROR", "-", f"{which}: {(b if 'error' in b else c)['error']}"])
            continue
        diff = first_difference(b["jobs"], c["jobs"])
        if diff is None:
            rows.append([name, str(len(b["jobs"])), api, "yes", "", ""])
        else:
            bad += 1
            rows.append([name, str(len(b["jobs"])), api, f"NO ({diff[2]} jobs)" if diff[2] else "NO", diff[0],
                         diff[1]])
    header = ["entry", "jobs", "api base/candidate", "identical", "first differing job", "column"]
    print(f"base {base.commit} vs "
          f"candidate {head}; {len(rows)} entries{' (quick)' if args.quick else ''}, "
          f"{time.perf_counter() - t0:.0f} s wall")
    print(md_table(header, rows))
    print(f"\n{len(rows) - bad} of {len(rows)} identical" + (f"; {bad} differ or fail" if bad else ""))
    return 1 if bad else 0


def md_table(header: list[str], rows: list[list[str]]) -> str:
    """A markdown table.

    >>> print(md_table(["a"], [["x"]]))
    | a |
    |---|
    | x |
    """
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
                      *("| " + " | ".join(r) + " |" for r in rows)])


def _run_measured(cmd: list[str], env: dict[str, str], cwd: str) -> tuple[float, str]:
    """Run ``cmd``; (its CPU seconds, user + sys, from ``os.wait4``'s rusage of that very child; its stdout)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, text=True, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[4:7]}: exit {proc.returncode}: {err.read()[-800:]}")
        return usage.ru_utime + usage.ru_stime, out.read()


def cmd_speed(args: argparse.Namespace) -> int:
    if args.jobs < 1 or args.repeats < 1:
        print("--jobs and --repeats must be positive", file=sys.stderr)
        return 2
    if args.out and not Path(args.out).resolve().parent.is_dir():
        print(f"--out: folder {Path(args.out).parent} does not exist", file=sys.stderr)
        return 2
    policies = ("fifo", "las", "tiresias")
    proc_cpu: dict[tuple[str, str], list[float]] = {}
    sim_cpu: dict[tuple[str, str], list[float]] = {}
    same: dict[str, str] = {}
    apis: dict[str, str] = {}
    head = _head()
    base = BaseTree(args.base, args.base_src)
    with base as base_src, tempfile.TemporaryDirectory(prefix="sim-eq-") as d:
        sides = {"base": (base_src, "legacy"), "candidate": (ROOT / "src", args.api)}
        first: dict[str, pd.DataFrame] = {}
        notes: dict[str, list[str]] = {p: [] for p in policies}
        for k in range(args.repeats):
            for pol in policies:
                order = ["base", "candidate"] if k % 2 == 0 else ["candidate", "base"]
                for who in order:
                    src, api = sides[who]
                    out = Path(d) / f"{who}-{pol}-{k}.pkl"
                    cpu, text = _run_measured(_child_cmd("_speed-child", src, "--policy", pol, "--jobs",
                                                         str(args.jobs), "--out", str(out), "--api", api), _env(src), d)
                    info = json.loads(text.strip().splitlines()[-1])
                    proc_cpu.setdefault((pol, who), []).append(cpu)
                    sim_cpu.setdefault((pol, who), []).append(info["sim_cpu_s"])
                    apis[who] = info["api"]
                    table = pickle.loads(out.read_bytes())
                    out.unlink()
                    if pol not in first:
                        first[pol] = table  # the reference of this policy: the first run (the base's)
                    else:
                        diff = first_difference(first[pol], table)
                        if diff is not None:
                            notes[pol].append(f"{who} run {k + 1}: job {diff[0]} {diff[1]} ({diff[2]} jobs)")
                    print(f"speed {pol} [{who}] run {k + 1}: process {cpu:.2f} s CPU, simulate() "
                          f"{info['sim_cpu_s']:.2f} s CPU", file=sys.stderr, flush=True)
        for pol in policies:
            same[pol] = "yes" if not notes[pol] else "NO: " + "; ".join(notes[pol])
    rows = []
    for pol in policies:
        pb, pc = statistics.median(proc_cpu[pol, "base"]), statistics.median(proc_cpu[pol, "candidate"])
        sb, sc = statistics.median(sim_cpu[pol, "base"]), statistics.median(sim_cpu[pol, "candidate"])
        rows.append([pol, ", ".join(f"{x:.2f}" for x in proc_cpu[pol, "base"]), f"{pb:.2f}",
                     ", ".join(f"{x:.2f}" for x in proc_cpu[pol, "candidate"]), f"{pc:.2f}", f"{pc / pb:.3f}",
                     f"{sb:.2f}", f"{sc:.2f}", f"{sc / sb:.3f}", same[pol]])
    header = ["policy", "base process CPU s (runs)", "base median", "candidate process CPU s (runs)",
              "candidate median", "candidate / base", "base simulate() CPU s", "candidate simulate() CPU s",
              "candidate / base (simulate)", "per-job identical"]
    load = os.getloadavg()
    text = "\n".join([
        "# Simulator speed, base vs candidate (issue 22, our simulator)", "",
        f"Command: `python -m benchmarks.sim_equivalence speed --jobs {args.jobs} --repeats {args.repeats}"
        f"{'' if args.base == DEFAULT_BASE else ' --base ' + args.base}`; base {base.commit}, candidate {head} "
        f"(api base/candidate: {apis.get('base')}/{apis.get('candidate')}).", "",
        f"`replicate_philly({args.jobs:,}, 130 jobs/h, seed 0)` on 2,000 GPUs (500 x 4), round mode, consolidated "
        "placement. Each run is a fresh process; base and candidate alternate (who goes first alternates too). "
        "'process': CPU seconds (user + sys) of the whole child process (start-up, building the workload, "
        "simulating, writing its per-job table); 'simulate()': CPU seconds of the simulate call alone (medians of "
        f"the runs). Load average at the end: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f} on "
        f"{os.cpu_count()} cores. 'per-job identical': every run's per-job table equals the base's first run's.",
        "", md_table(header, rows), ""])
    print(text)
    if args.out:
        from optsched.io import atomic_open

        with atomic_open(args.out) as fh:
            fh.write(text)
    return 0 if all(v == "yes" for v in same.values()) else 1


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv = ["check", *argv]  # python -m benchmarks [--quick] runs each suite with no sub-command
    ap = argparse.ArgumentParser(prog="python -m benchmarks.sim_equivalence",
                                 description=__doc__.splitlines()[0] if __doc__ else None,
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring for what is compared and how.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--base", default=DEFAULT_BASE, help="git ref of the oracle (default: main at issue 22's "
                        "start, %(default)s)")
    common.add_argument("--base-src", default=None, help="use this existing src folder as the base instead of a "
                        "temporary worktree of --base")
    common.add_argument("--api", choices=("auto", "legacy", "door"), default="auto",
                        help="the candidate's entry points: today's names when present (auto), today's only, or "
                        "the door only (the base always uses today's)")
    c = sub.add_parser("check", parents=[common], help="per-job results of the matrix, base vs candidate")
    c.add_argument("--quick", action="store_true", help="the reduced matrix (about 2 minutes)")
    c.add_argument("--only", default=None, help="only the entries whose name contains this text")
    c.add_argument("--keep", default=None, help="keep the two sides' tables (pickles) in this folder")
    s = sub.add_parser("speed", parents=[common], help="CPU seconds of FIFO / LAS / Tiresias on Philly jobs")
    s.add_argument("--jobs", type=int, default=100_000, help="Philly-derived jobs (default %(default)s)")
    s.add_argument("--repeats", type=int, default=3, help="runs per side and policy (default %(default)s)")
    s.add_argument("--out", default=None, help="write the markdown table here (default: print only)")
    for name in ("_check-child", "_speed-child"):
        ch = sub.add_parser(name)
        ch.add_argument("--src", required=True)
        ch.add_argument("--out", required=True)
        ch.add_argument("--api", choices=("auto", "legacy", "door"), default="auto")
        if name == "_check-child":
            ch.add_argument("--quick", action="store_true")
            ch.add_argument("--only", default=None)
        else:
            ch.add_argument("--policy", required=True)
            ch.add_argument("--jobs", type=int, required=True)
    args = ap.parse_args(argv)
    return {"check": cmd_check, "speed": cmd_speed, "_check-child": child_check,
            "_speed-child": child_speed}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
