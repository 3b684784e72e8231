"""Workloads for the simulator: the Philly trace, the eight Pollux workloads, and synthetic generators.

Every rule below is documented (with the Blox lines it follows, and what we decided where Blox is silent) in
``docs/algorithms/blox.md``, section "Workloads". The shared data files are read in place through
[`optsched.data.data_path`][]; the repository carries no copy.

* [`load_philly`][optsched.generators.workload.load_philly]: the Philly trace (``philly/philly.csv``, 82,247 job rows)
  as a pandas DataFrame; job id =
  row position in the file (Blox numbers jobs in the order its parser reads them; the file is not sorted by
  submission time), or, with ``order="submit"``, position after a stable sort by submission time.
* [`philly_workload`][optsched.generators.workload.philly_workload]: Blox's Philly-Trace. Blox's Gavel-like filter
  (``filter="blox"``, the default: run
  time strictly between 10^1.5 and 10^4 minutes and at most 16 GPUs, as in Blox's ``parse_philly_jobs``), arrivals
  re-timed as a Poisson process at ``load_jph`` jobs/hour (the first job arrives after one gap, like Blox's
  ``last_arrival + poisson_next_arrival_time``), only the jobs at positions ``window[0] <= i < window[1]`` tracked
  (Blox: jobs 3000-4000, half-open as in its ``series_id_filter``), and a model of Blox's Table 2 assigned
  uniformly at random to each job; the trace's run time is the time alone, and the model's nominal iteration time
  only sets the granularity (``iterations = duration / iteration_time_s``, as Blox's
  ``job_total_iteration / job_iteration_time``).
* [`pollux_workload`][optsched.generators.workload.pollux_workload]: ``pollux-workloads/workload-N.csv`` (160 jobs
  each); no run times in the files, so the
  work per job follows Pollux's size category of its application (seeded log-uniform GPU-hours within the
  category), GPUs = ``num_replicas``; arrivals optionally rescaled to a chosen jobs/hour.
* [`synthetic_workload`][optsched.generators.workload.synthetic_workload]: Poisson arrivals, a GPU-count mix, log-normal
  durations, random Table 2 models.
* [`replicate_philly`][optsched.generators.workload.replicate_philly]: Blox's cyclic reuse of the trace (job ``i`` is
  trace row ``i mod N``) up to any job
  count, for the 100,000-job speed benchmark.
* [`resolve_workload`][optsched.generators.workload.resolve_workload]: the CLI's ``WORKLOAD`` argument (``philly``,
  ``pollux:N``, ``synthetic``, a path).

Seeds: one integer seed feeds ``numpy.random.SeedSequence(seed).spawn(...)``; arrivals and job attributes use
separate child streams, so the same seed gives the same models and durations at every load and the arrival times
at load ``L`` are exactly the ones at load 1 divided by ``L`` (common random numbers across a load sweep).

```pycon
>>> wl = synthetic_workload(5, load_jph=2.0, seed=3)
>>> len(wl), wl.seed, wl == synthetic_workload(5, load_jph=2.0, seed=3)
(5, 3, True)
>>> a, b = poisson_arrivals(3, 3600.0, seed=0), poisson_arrivals(3, 3600.0, seed=0)
>>> [round(x, 3) for x in a] == [round(x, 3) for x in b]
True

```
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..data import data_path
from ..errors import InstanceError
from ..io import read_text
from ..limits import require_memory
from ..problems.deadline import FORMAT as DEADLINE_FORMAT
from ..problems.workload import Workload, WorkloadJob, read_workload

HOUR_S = 3600.0
JOB_BYTES = 2_000  # a job across the workload, the engine's state and the per-job records (estimate)

# Blox Table 2 (paper section 4): the models assigned to Philly jobs. Iteration times are OUR nominal seconds per
# iteration on a V100 (Blox's profiles are not published in the paper); with the trace giving the run time they
# only set how many iterations a job has, never its duration alone.
PHILLY_MODELS: dict[str, float] = {
    "ResNet-18/CIFAR-10": 0.05,
    "CycleGAN/monet2photo": 0.25,
    "ResNet-50/ImageNet": 0.30,
    "LSTM/WikiText-2": 0.08,
    "Recoder/ML-20M": 0.10,
    "Transformer/Multi30K": 0.15,
    "A3C/Pong": 0.50,
}

# Blox's Gavel-like filter of the Philly trace (parse_philly_jobs.py): 10^1.5 min < duration < 10^4 min, <= 16 GPUs
BLOX_MIN_DURATION_S = 10 ** 1.5 * 60.0
BLOX_MAX_DURATION_S = 10 ** 4 * 60.0
BLOX_MAX_GPUS = 16
PHILLY_FILTERS = ("blox", "none")
PHILLY_ORDERS = ("file", "submit")

# Blox's own simulator defaults (msr-fiddle/blox at c8851b2: simulator_simple.py ``exponential=True,
# multigpu=False``; workload/parse_philly_jobs.py; workload/utils.py; blox/job_state.py): "ours" keeps the trace's
# run times and GPU counts, "blox" is Blox's mode (docs/algorithms/blox.md, section 2)
PHILLY_MODES = ("ours", "blox")
BLOX_LONG_SHARE = 0.2                    # utils.get_gavel_like_iter: random() >= 0.8 -> a long job
BLOX_SHORT_LOG10_MIN = (1.5, 3.0)        # 60 * 10^U(1.5, 3) s  (80 % of the jobs)
BLOX_LONG_LOG10_MIN = (3.0, 4.0)         # 60 * 10^U(3, 4) s    (20 %)
BLOX_WINDOW = (3000, 4001)               # job_state.py: range(start_id_track, stop_id_track + 1): 3000..4000
OUR_WINDOW = (3000, 4000)                # ours: half-open, 1,000 jobs
DEFAULT_WINDOW = "default"               # the mode's window

# the bursty dual-load workload (Blox paper section 6.2 and simulator_runner/simulator_dual_load.py)
BURSTY_VARIANTS = ("paper", "code")
# replay traces: Blox's short model names -> our Table 2 names (iteration times from PHILLY_MODELS)
MODEL_ALIASES: dict[str, str] = {
    "resnet18": "ResNet-18/CIFAR-10", "cyclegan": "CycleGAN/monet2photo", "resnet50": "ResNet-50/ImageNet",
    "lstm": "LSTM/WikiText-2", "recoder": "Recoder/ML-20M", "transformer": "Transformer/Multi30K",
    "a3c": "A3C/Pong",
}

# Pollux (OSDI'21) Table 1: size category of each application's jobs, in GPU-hours, as Pollux's generator
# (adaptdl simulator/workload.py) assigned them from Philly GPU time; the Small floor 0.1 h is ours (its is 60 s).
# Our nominal iteration times.
POLLUX_SIZE_GPU_H: dict[str, tuple[float, float]] = {
    "cifar10": (0.1, 1.0),       # Small (ResNet-18/CIFAR-10)
    "ncf": (0.1, 1.0),           # Small (NeuMF/MovieLens)
    "deepspeech2": (1.0, 10.0),  # Medium
    "bert": (1.0, 10.0),         # Medium (fine-tuning on SQuAD)
    "yolov3": (10.0, 100.0),     # Large
    "imagenet": (100.0, 1000.0),  # XLarge (ResNet-50/ImageNet)
}
POLLUX_ITERATION_S: dict[str, float] = {
    "cifar10": 0.05, "ncf": 0.02, "deepspeech2": 0.5, "bert": 0.4, "yolov3": 0.6, "imagenet": 0.3,
}
POLLUX_WINDOW_S = 8 * HOUR_S  # each workload samples the busiest 8-hour window of the trace

# synthetic defaults: GPU-count mix close to the filtered Philly trace's, log-normal run time
DEFAULT_GPU_MIX: dict[int, float] = {1: 0.70, 2: 0.10, 4: 0.10, 8: 0.08, 16: 0.02}


# -- helpers ---------------------------------------------------------------------------------------------------
def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InstanceError(f"must be an integer >= 0, got {seed!r}", field="seed")
    return int(seed)


def _check_load(load_jph: Any, field: str = "load_jph") -> float:
    if isinstance(load_jph, bool) or not isinstance(load_jph, (int, float, np.integer, np.floating)) \
            or not math.isfinite(load_jph) or load_jph <= 0:
        raise InstanceError(f"must be a positive number of jobs per hour, got {load_jph!r}", field=field)
    return float(load_jph)


def _streams(seed: int, n: int = 2) -> list[np.random.Generator]:
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(n)]


def _check_window(window: Any) -> tuple[int, int] | None:
    if window is None:
        return None
    try:
        a, b = window
    except (TypeError, ValueError):
        raise InstanceError(f"must be a pair (start, end), got {window!r}", field="window") from None
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, np.integer)) \
            or not isinstance(b, (int, np.integer)) or a < 0 or b <= a:
        raise InstanceError(f"must be integers 0 <= start < end, got {window!r}", field="window")
    return int(a), int(b)


def parse_window(text: str) -> tuple[int, int]:
    """``"3000:4000"`` -> ``(3000, 4000)`` (half-open: jobs 3000..3999).

    ```pycon
    >>> parse_window("3000:4000")
    (3000, 4000)

    ```
    """
    parts = str(text).split(":")
    try:
        if len(parts) != 2:
            raise ValueError
        win = (int(parts[0]), int(parts[1]))
    except ValueError:
        raise InstanceError(f"must be START:END (integers), got {text!r}", field="window") from None
    return _check_window(win)  # type: ignore[return-value]


def poisson_arrivals(n: int, load_jph: float, seed: int | None = None, *,
                     rng: np.random.Generator | None = None, integer_gaps: bool = False) -> np.ndarray:
    """Arrival times (s) of ``n`` jobs of a Poisson process at ``load_jph`` jobs/hour; the first job arrives
    after one exponential gap (Blox adds a gap to the previous arrival, starting from 0). ``integer_gaps``
    rounds every gap up to whole seconds, as Blox's ``poisson_next_arrival_time`` does (``math.ceil``).

    ```pycon
    >>> a = poisson_arrivals(10000, 4.0, seed=1)
    >>> bool(np.all(np.diff(a) >= 0)), round(float(np.mean(np.diff(a))) / 900, 1)
    (True, 1.0)
    >>> b = poisson_arrivals(5, 4.0, seed=1, integer_gaps=True)
    >>> bool(np.all(b == np.round(b))), bool(np.all(b >= a[:5]))
    (True, True)

    ```
    """
    lam = _check_load(load_jph)
    if rng is None:
        rng = np.random.default_rng(_check_seed(0 if seed is None else seed))
    gaps = rng.standard_exponential(int(n)) * (HOUR_S / lam)
    if integer_gaps:
        gaps = np.ceil(gaps)
    return np.cumsum(gaps)


def _resolve_path(path: Any, *default: str) -> Path:
    if path is None:
        return data_path(*default)
    p = Path(path)
    if not p.exists():
        raise InstanceError(f"no such file: {p}", field="path")
    return p


# -- Philly ----------------------------------------------------------------------------------------------------
def load_philly(path: str | os.PathLike | None = None, order: str = "file") -> pd.DataFrame:
    """The Philly trace as a DataFrame in file order (``order="file"``, Blox's parse order) or submission order
    (``"submit"``: stable sort on ``timestamp``), with columns ``job`` (0..N-1, the job id of Blox's window),
    ``submit_s`` (seconds since the first submission), ``duration_s``, ``gpus``, ``gpu_time_s``, ``cluster``.

    ``path`` defaults to ``philly/philly.csv`` in the data folder ([`optsched.data`][]; 82,247 jobs). A
    two-job file in the same layout:

    ```pycon
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "philly.csv"
    >>> _ = p.write_text("timestamp,duration,num_gpus,cluster\\n2017-10-03 10:00:00,600,4,vc1\\n"
    ...                  "2017-10-03 09:00:00,5400,1,vc2\\n")
    >>> df = load_philly(p, order="submit")
    >>> list(df.columns), df["submit_s"].tolist(), df["gpus"].tolist()
    (['job', 'submit_s', 'duration_s', 'gpus', 'gpu_time_s', 'cluster'], [0.0, 3600.0], [1, 4])

    ```
    """
    if order not in PHILLY_ORDERS:
        raise InstanceError(f"must be one of {', '.join(PHILLY_ORDERS)}, got {order!r}", field="order")
    p = _resolve_path(path, "philly", "philly.csv")
    try:
        raw = pd.read_csv(p)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise InstanceError(f"cannot read the Philly trace {p}: {exc}", field="path") from None
    need = ("timestamp", "duration", "num_gpus")
    missing = [c for c in need if c not in raw.columns]
    if missing:
        raise InstanceError(f"{p}: missing column(s) {missing} (expected timestamp, duration, num_gpus)",
                            field="path")
    ts = pd.to_datetime(raw["timestamp"], errors="coerce")
    dur = pd.to_numeric(raw["duration"], errors="coerce")
    gpus = pd.to_numeric(raw["num_gpus"], errors="coerce")
    bad = ts.isna() | ~np.isfinite(dur) | (dur <= 0) | ~np.isfinite(gpus) | (gpus < 1) | (gpus % 1 != 0)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InstanceError(f"{p}: row {i + 2} has an invalid timestamp, duration or num_gpus", field="path")
    ts_np = ts.to_numpy()
    idx = np.argsort(ts_np, kind="stable") if order == "submit" else np.arange(len(raw))
    t = ts_np[idx]
    df = pd.DataFrame({
        "job": np.arange(len(raw), dtype=np.int64),
        "submit_s": (t - ts_np.min()) / np.timedelta64(1, "s") if len(t) else np.zeros(0),
        "duration_s": dur.to_numpy(dtype=float)[idx],
        "gpus": gpus.to_numpy().astype(np.int64)[idx],
    })
    df["gpu_time_s"] = df["duration_s"] * df["gpus"]
    df["cluster"] = (raw["cluster"].astype(str).to_numpy()[idx] if "cluster" in raw.columns
                     else np.array([""] * len(raw)))
    return df


def philly_jobs(filter: str = "blox", path: str | os.PathLike | None = None,
                frame: pd.DataFrame | None = None, order: str = "file") -> pd.DataFrame:
    """The Philly rows a workload draws from: all of them (``filter="none"``) or Blox's Gavel-like selection
    (``"blox"``), renumbered 0..M-1 in the frame's order (``trace_job`` keeps the original position)."""
    if filter not in PHILLY_FILTERS:
        raise InstanceError(f"must be one of {', '.join(PHILLY_FILTERS)}, got {filter!r}", field="filter")
    df = load_philly(path, order) if frame is None else frame
    if filter == "blox":
        keep = ((df["duration_s"] > BLOX_MIN_DURATION_S) & (df["duration_s"] < BLOX_MAX_DURATION_S)
                & (df["gpus"] <= BLOX_MAX_GPUS))
        df = df[keep]
    out = df.rename(columns={"job": "trace_job"}).reset_index(drop=True)
    out.insert(0, "job", np.arange(len(out), dtype=np.int64))
    return out


def _assign_models(n: int, rng: np.random.Generator, models: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    names = list(models)
    idx = rng.integers(0, len(names), size=n)
    return np.array(names, dtype=object)[idx], np.array([models[m] for m in names], dtype=float)[idx]


def _jobs_from_arrays(ids, arrivals, gpus, durations, models, it_times, tracked) -> tuple[WorkloadJob, ...]:
    iters = np.asarray(durations, dtype=float) / np.asarray(it_times, dtype=float)
    return WorkloadJob.from_columns([str(i) for i in ids], np.asarray(arrivals, dtype=float),
                                    np.asarray(gpus).astype(np.int64), iters, np.asarray(it_times, dtype=float),
                                    [str(m) for m in models], np.asarray(tracked, dtype=bool))


def blox_synthetic_durations(n: int, rng: np.random.Generator) -> np.ndarray:
    """Blox's synthetic run times (``get_gavel_like_iter``, used when ``exponential=True``): 80 % of the jobs
    ``60 * 10^U(1.5, 3)`` s (31.6 min to 16.7 h), 20 % ``60 * 10^U(3, 4)`` s (16.7 h to 6.9 days).

    ```pycon
    >>> d = blox_synthetic_durations(20000, np.random.default_rng(0))
    >>> bool(d.min() >= 60 * 10 ** 1.5 and d.max() <= 60 * 10 ** 4), round(float(np.mean(d > 60 * 10 ** 3)), 2)
    (True, 0.2)

    ```
    """
    long = rng.random(n) >= 1.0 - BLOX_LONG_SHARE
    lo = np.where(long, BLOX_LONG_LOG10_MIN[0], BLOX_SHORT_LOG10_MIN[0])
    hi = np.where(long, BLOX_LONG_LOG10_MIN[1], BLOX_SHORT_LOG10_MIN[1])
    return 60.0 * 10.0 ** rng.uniform(lo, hi)


def _mode_window(mode: str, window: Any) -> tuple[int, int] | None:
    if mode not in PHILLY_MODES:
        raise InstanceError(f"must be one of {', '.join(PHILLY_MODES)}, got {mode!r}", field="mode")
    if isinstance(window, str) and window == DEFAULT_WINDOW:
        return BLOX_WINDOW if mode == "blox" else OUR_WINDOW
    return _check_window(window)


def philly_workload(load_jph: float = 8.0, seed: int = 0, *, window: Any = DEFAULT_WINDOW,
                    filter: str = "blox", n_jobs: int | None = None, max_gpus: int | None = None,
                    models: Mapping[str, float] | None = None, path: str | os.PathLike | None = None,
                    frame: pd.DataFrame | None = None, order: str = "file", mode: str = "ours") -> Workload:
    """Blox's Philly-Trace at ``load_jph`` jobs/hour (rules in the module docstring).

    ``mode="ours"`` (default): the trace's run times and GPU counts, continuous Poisson gaps, jobs 3000-3999
    tracked (half-open, 1,000 jobs). ``mode="blox"``: what Blox's simulator runs by default (its
    ``simulator_simple.py``: ``exponential=True, multigpu=False``): every run time replaced by a synthetic draw
    ([`blox_synthetic_durations`][optsched.generators.workload.blox_synthetic_durations], one per trace row), every job
    on one GPU (so the trace's GPU counts, and
    the <= 16 GPU cut of the filter, play no part), integer-second Poisson gaps, and jobs 3000..4000 *inclusive*
    tracked (1,001 jobs: ``job_state.py`` builds ``range(start, stop + 1)``). ``window`` overrides the mode's.

    ``n_jobs`` keeps the first jobs only (the default keeps them all, so that load keeps arriving until the tracked
    window is done; pair with ``simulate(..., stop_when_tracked_done=True)``); beyond the trace it cycles
    ([`replicate_philly`][optsched.generators.workload.replicate_philly]). ``max_gpus`` drops jobs larger than the
    cluster (before numbering). ``window=None``
    tracks every job. ``frame`` reuses a [`load_philly`][optsched.generators.workload.load_philly] frame (no re-read;
    its order wins over ``order``).

    A three-job frame in [`load_philly`][optsched.generators.workload.load_philly]'s layout (the 600 s job fails Blox's
    filter; the others cycle):

    ```pycon
    >>> fr = pd.DataFrame({"job": [0, 1, 2], "submit_s": [0.0, 60.0, 120.0], "duration_s": [3600.0, 600.0, 7200.0],
    ...                    "gpus": [1, 2, 4], "gpu_time_s": [3600.0, 1200.0, 28800.0], "cluster": ["a"] * 3})
    >>> wl = philly_workload(4.0, seed=1, n_jobs=5, window=(1, 3), frame=fr)
    >>> [j.gpus for j in wl], sum(j.tracked for j in wl), wl.jobs[0].arrival_s > 0, wl.meta["filter"]
    ([1, 4, 1, 4, 1], 2, True, 'blox')

    ```
    """
    lam = _check_load(load_jph)
    seed = _check_seed(seed)
    win = _mode_window(mode, window)
    blox = mode == "blox"
    src = philly_jobs("none" if (blox and filter == "blox") else filter, path, frame, order)
    if blox and filter == "blox":  # multigpu=False: only the run-time filter applies (no GPU-count cut)
        src = src[(src["duration_s"] > BLOX_MIN_DURATION_S) & (src["duration_s"] < BLOX_MAX_DURATION_S)]
        src = src.reset_index(drop=True)
        src["job"] = np.arange(len(src), dtype=np.int64)
    if blox:
        src = src.assign(gpus=1)
    if max_gpus is not None:
        src = src[src["gpus"] <= int(max_gpus)].reset_index(drop=True)
        src["job"] = np.arange(len(src), dtype=np.int64)
    if len(src) == 0:
        raise InstanceError("no Philly job passes the filter", field="filter")
    n = len(src) if n_jobs is None else int(n_jobs)
    if n < 1:
        raise InstanceError(f"must be >= 1, got {n_jobs!r}", field="n_jobs")
    rows = np.arange(n) % len(src)
    r_arr, r_model, r_dur = _streams(seed, 3)  # the first two are the same streams in both modes
    arrivals = poisson_arrivals(n, lam, rng=r_arr, integer_gaps=blox)
    durations = src["duration_s"].to_numpy()
    if blox:  # one synthetic draw per trace row (Blox draws at parse time; cycled jobs reuse the row's draw)
        durations = blox_synthetic_durations(len(src), r_dur)
    models_tab = dict(PHILLY_MODELS if models is None else models)
    if not models_tab or any(not (isinstance(v, (int, float)) and v > 0) for v in models_tab.values()):
        raise InstanceError("must map model names to positive iteration times", field="models")
    mnames, it_times = _assign_models(n, r_model, models_tab)
    ids = np.arange(n)
    tracked = np.ones(n, dtype=bool) if win is None else (ids >= win[0]) & (ids < win[1])
    if win is not None and win[0] >= n:
        raise InstanceError(f"the window {win[0]}:{win[1]} starts after the last job ({n - 1})", field="window")
    jobs = _jobs_from_arrays(ids, arrivals, src["gpus"].to_numpy()[rows], durations[rows],
                             mnames, it_times, tracked)
    meta = {"trace": "philly", "mode": mode, "filter": filter, "order": order if frame is None else "frame",
            "load_jph": lam, "window": list(win) if win else None,
            "trace_jobs": int(len(src)), "models": "uniform over Blox Table 2 (PHILLY_MODELS)",
            "arrivals": "poisson, integer-second gaps" if blox else "poisson",
            "run_times": "Blox synthetic: 80% 60*10^U(1.5,3) s, 20% 60*10^U(3,4) s" if blox else "trace",
            "gpus": "1 (Blox multigpu=False)" if blox else "trace"}
    name = f"philly-{filter}-{lam:g}jph" if not blox else f"philly-bloxmode-{lam:g}jph"
    return Workload(jobs, name=name, seed=seed, meta=meta)


def replicate_philly(n_jobs: int = 100_000, load_jph: float = 130.0, seed: int = 0, *, filter: str = "none",
                     window: tuple[int, int] | None = None, path=None, frame=None, order: str = "file") -> Workload:
    """``n_jobs`` Philly-derived jobs: job ``i`` takes trace row ``i mod N`` (Blox's
    ``self.jobs[job_id % total_jobs]``), Poisson arrivals at ``load_jph``, random Table 2 models.
    The default (whole trace, 130 jobs/hour) keeps a 2,000-GPU cluster about 70% busy.

    ```pycon
    >>> fr = pd.DataFrame({"job": range(7), "submit_s": [60.0 * i for i in range(7)],
    ...                    "duration_s": [600.0 * (i + 1) for i in range(7)], "gpus": [1] * 7,
    ...                    "gpu_time_s": [600.0 * (i + 1) for i in range(7)], "cluster": ["a"] * 7})
    >>> wl = replicate_philly(20, load_jph=100.0, frame=fr)
    >>> len(wl), wl.jobs[7].duration_alone_s == wl.jobs[0].duration_alone_s
    (20, True)

    ```
    """
    return philly_workload(load_jph, seed, window=window, filter=filter, n_jobs=n_jobs, path=path, frame=frame,
                           order=order)


# -- Pollux ----------------------------------------------------------------------------------------------------
def load_pollux(index: int | None, path: str | os.PathLike | None = None) -> pd.DataFrame:
    """``workload-<index>.csv`` (index 1..8) as a DataFrame (name, time, application, num_replicas, batch_size).

    ``path`` defaults to ``pollux-workloads/workload-<index>.csv`` in the data folder ([`optsched.data`][];
    160 jobs each). A two-job file in the same layout:

    ```pycon
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "w.csv"
    >>> _ = p.write_text("name,time,application,num_replicas,batch_size\\nj0,0,cifar10,1,128\\nj1,30,bert,4,12\\n")
    >>> df = load_pollux(1, p)
    >>> len(df), int(df["num_replicas"].max())
    (2, 4)

    ```
    """
    if path is None:
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 1 <= index <= 8:
            raise InstanceError(f"must be 1..8 (pollux-workloads/workload-N.csv), got {index!r}", field="pollux")
        p = data_path("pollux-workloads", f"workload-{int(index)}.csv")
    else:
        p = _resolve_path(path)
    try:
        df = pd.read_csv(p)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise InstanceError(f"cannot read the Pollux workload {p}: {exc}", field="path") from None
    need = ("name", "time", "application", "num_replicas")
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise InstanceError(f"{p}: missing column(s) {missing}", field="path")
    unknown = sorted(set(df["application"]) - set(POLLUX_SIZE_GPU_H))
    if unknown:
        raise InstanceError(f"{p}: unknown application(s) {unknown}", field="application")
    # every cell checked here, with the job it belongs to: an empty or non-numeric time, a replica count that is
    # not a whole number >= 1 (1.5 would be truncated), or one too large for any cluster
    for col, whole in (("time", False), ("num_replicas", True)):
        values = pd.to_numeric(df[col], errors="coerce")
        for pos, (raw, v) in enumerate(zip(df[col], values)):
            bad = not np.isfinite(v) or v < (1 if whole else 0) or (whole and (v != int(v) or v > 1_000_000))
            if bad:
                what = "a whole number of replicas in 1..1,000,000" if whole else "a finite time >= 0 (s)"
                raise InstanceError(f"{p}: must be {what}, got {raw!r}", field=col, job=str(df["name"].iloc[pos]))
    df["time"] = pd.to_numeric(df["time"])
    df["num_replicas"] = pd.to_numeric(df["num_replicas"]).astype(np.int64)
    return df


def pollux_workload(index: int | None = 6, load_jph: float | None = None, seed: int = 0, *,
                    window: tuple[int, int] | None = None, max_gpus: int | None = None,
                    path: str | os.PathLike | None = None) -> Workload:
    """A Pollux workload (160 jobs, arrivals in the busiest 8 hours of the trace, about 20 jobs/hour).

    Work: GPU-hours drawn log-uniformly (seeded) within the size category of Pollux's Table 1 for the job's
    application (``POLLUX_SIZE_GPU_H``), divided by the requested GPUs (``num_replicas``) for the time alone
    (linear scaling: Pollux adapts the batch size, our fixed-size jobs do not). ``load_jph`` rescales the arrival
    times linearly so that the 160 jobs arrive at that mean rate over the window (the bursts keep their shape;
    ``None`` keeps the file's times). ``max_gpus`` caps the demand at the cluster's size (Blox uses 64 GPUs).

    ```pycon
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "w.csv"
    >>> _ = p.write_text("name,time,application,num_replicas,batch_size\\nj0,0,cifar10,1,128\\nj1,30,bert,4,12\\n")
    >>> wl = pollux_workload(1, seed=0, path=p)
    >>> [j.gpus for j in wl], [j.arrival_s for j in wl], 0.1 <= wl.jobs[0].duration_alone_s / 3600 <= 1.0
    ([1, 4], [0.0, 30.0], True)

    ```
    """
    seed = _check_seed(seed)
    df = load_pollux(index, path)
    n = len(df)
    (rng,) = _streams(seed, 1)
    lo = np.array([POLLUX_SIZE_GPU_H[a][0] for a in df["application"]])
    hi = np.array([POLLUX_SIZE_GPU_H[a][1] for a in df["application"]])
    gpu_h = np.exp(rng.uniform(np.log(lo), np.log(hi)))
    gpus = df["num_replicas"].to_numpy().astype(np.int64)
    if max_gpus is not None:
        gpus = np.minimum(gpus, int(max_gpus))
    dur = gpu_h * HOUR_S / gpus
    t = df["time"].to_numpy(dtype=float)
    if load_jph is not None:
        lam = _check_load(load_jph)
        native = n / POLLUX_WINDOW_S * HOUR_S
        t = t * (native / lam)
    it = np.array([POLLUX_ITERATION_S[a] for a in df["application"]])
    win = _check_window(window)
    ids = np.arange(n)
    tracked = np.ones(n, dtype=bool) if win is None else (ids >= win[0]) & (ids < win[1])
    jobs = tuple(WorkloadJob(str(name), float(a), int(g), float(d / s), float(s), model=str(app), tracked=bool(tr))
                 for name, a, g, d, s, app, tr in zip(df["name"], t, gpus, dur, it, df["application"], tracked))
    stem = f"workload-{index}" if path is None else Path(path).stem
    meta = {"trace": "pollux", "workload": stem, "load_jph": load_jph,
            "work": "log-uniform GPU-hours within Pollux Table 1 size category"}
    base = f"pollux-{index}" if path is None else f"pollux-{stem}"
    return Workload(jobs, name=base + (f"-{load_jph:g}jph" if load_jph else ""), seed=seed, meta=meta)


# -- synthetic -------------------------------------------------------------------------------------------------
def synthetic_workload(n_jobs: int = 200, load_jph: float = 8.0, seed: int = 0, *,
                       gpu_mix: Mapping[int, float] | None = None, median_duration_s: float = 2 * HOUR_S,
                       sigma: float = 1.5, max_duration_s: float | None = 30 * 24 * HOUR_S,
                       window: tuple[int, int] | None = None,
                       models: Mapping[str, float] | None = None) -> Workload:
    """Poisson arrivals at ``load_jph``, GPU counts drawn from ``gpu_mix`` ({gpus: weight}), run time alone
    log-normal with median ``median_duration_s`` and log-sd ``sigma`` (capped at ``max_duration_s``), a random
    Table 2 model per job.

    ```pycon
    >>> wl = synthetic_workload(1000, 4.0, seed=2, gpu_mix={1: 1, 4: 1})
    >>> sorted({j.gpus for j in wl}), 0.4 < sum(j.gpus == 4 for j in wl) / 1000 < 0.6
    ([1, 4], True)

    ```
    """
    seed = _check_seed(seed)
    lam = _check_load(load_jph)
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise InstanceError(f"must be an integer >= 1, got {n_jobs!r}", field="n_jobs")
    mix = dict(DEFAULT_GPU_MIX if gpu_mix is None else gpu_mix)
    if not mix or any(isinstance(g, bool) or not isinstance(g, (int, np.integer)) or g < 1 for g in mix) \
            or any(not (isinstance(w, (int, float)) and w >= 0) for w in mix.values()) or sum(mix.values()) <= 0:
        raise InstanceError(f"must map GPU counts >= 1 to non-negative weights (not all 0), got {mix!r}",
                            field="gpu_mix")
    if not (median_duration_s > 0 and math.isfinite(median_duration_s)):
        raise InstanceError(f"must be a positive number, got {median_duration_s!r}", field="median_duration_s")
    if not (sigma >= 0 and math.isfinite(sigma)):
        raise InstanceError(f"must be a number >= 0, got {sigma!r}", field="sigma")
    n = int(n_jobs)
    r_arr, r_attr = _streams(seed)
    arrivals = poisson_arrivals(n, lam, rng=r_arr)
    counts = np.array(sorted(mix), dtype=np.int64)
    w = np.array([mix[g] for g in counts], dtype=float)
    gpus = r_attr.choice(counts, size=n, p=w / w.sum())
    dur = median_duration_s * np.exp(sigma * r_attr.standard_normal(n))
    dur = np.maximum(dur, 1.0)
    if max_duration_s is not None:
        dur = np.minimum(dur, float(max_duration_s))
    mnames, it_times = _assign_models(n, r_attr, dict(PHILLY_MODELS if models is None else models))
    win = _check_window(window)
    ids = np.arange(n)
    tracked = np.ones(n, dtype=bool) if win is None else (ids >= win[0]) & (ids < win[1])
    jobs = _jobs_from_arrays(ids, arrivals, gpus, dur, mnames, it_times, tracked)
    meta = {"trace": "synthetic", "load_jph": lam, "gpu_mix": {str(k): float(v) for k, v in mix.items()},
            "median_duration_s": float(median_duration_s), "sigma": float(sigma)}
    return Workload(jobs, name=f"synthetic-{n}-{lam:g}jph", seed=seed, meta=meta)


# -- Blox's bursty dual-load workload ----------------------------------------------------------------------------
def _burst_windows(variant: str, period_h: float, burst_h: float, horizon_s: float) -> list[tuple[float, float]]:
    """The [start, end) seconds of the bursts up to ``horizon_s``."""
    out = []
    if variant == "paper":
        P, B = period_h * HOUR_S, burst_h * HOUR_S
        k = 0
        while k * P < horizon_s:
            out.append((k * P, k * P + B))
            k += 1
        return out
    # the code's flags: on at every multiple of 4 h (14400 s), off at every multiple of 6 h (21600 s), the on test
    # first: on [4, 6) and [8, 12) h in every 12 h (an off and an on at t = 0 cancel)
    k = 0
    while k * 43200.0 < horizon_s:
        base = k * 43200.0
        out += [(base + 14400.0, base + 21600.0), (base + 28800.0, base + 43200.0)]
        k += 1
    return out


def bursty_workload(load_jph: float = 8.0, seed: int = 0, *, variant: str = "paper", mode: str = "blox",
                    factor: float | None = None, period_h: float = 4.0, burst_h: float = 2.0,
                    short_s: tuple[float, float] = (600.0, 3600.0), window: Any = DEFAULT_WINDOW,
                    n_jobs: int | None = None, path: str | os.PathLike | None = None,
                    frame: pd.DataFrame | None = None, max_gpus: int | None = None) -> Workload:
    """Blox's bursty dual-load Philly workload: the Philly stream
    ([`philly_workload`][optsched.generators.workload.philly_workload] in ``mode``) plus a
    second stream of short jobs (run time uniform in ``short_s``, 10 min to 1 h) arriving as a Poisson process
    at ``factor`` x ``load_jph`` during bursts.

    ``variant="paper"`` (default; Blox section 6.2: "every 4 hours, 2 consecutive hours at 2x load of short
    jobs"): factor 2, bursts ``[k period_h, k period_h + burst_h)``. ``variant="code"`` (Blox's
    ``simulator_dual_load.py``): factor 4, the main stream's run times replaced by whole seconds uniform in
    [36000, 86400] (10 to 24 h), bursts where its flags are on (from each multiple of 4 h to the next multiple
    of 6 h: [4, 6) and [8, 12) h of every 12 h), and short jobs arriving at the start of the 300 s round in
    which they are drawn (the code stamps them with the simulator time). As written, that code draws each short
    job's arrival after the round boundary it compares against, so it admits almost none; we generate the stream
    it evidently intends. Short jobs have one GPU in Blox's mode (the trace's GPU count of a cycled row in ours).

    Jobs are numbered in arrival order over both streams (Blox's job state counts every admitted job), so the
    tracked window (the mode's default) covers short jobs too; ``meta["stream"]`` lists each job's stream.

    ```pycon
    >>> fr = pd.DataFrame({"job": range(4), "submit_s": [0.0] * 4, "duration_s": [7200.0] * 4, "gpus": [2] * 4,
    ...                    "gpu_time_s": [14400.0] * 4, "cluster": ["a"] * 4})
    >>> wl = bursty_workload(4.0, seed=0, n_jobs=40, frame=fr, window=None)
    >>> st = wl.meta["stream"]; n_short = st.count("short")
    >>> n_short > 0, all(600 <= j.duration_alone_s <= 3600 for j, s in zip(wl, st) if s == "short")
    (True, True)

    ```
    """
    lam = _check_load(load_jph)
    seed = _check_seed(seed)
    if variant not in BURSTY_VARIANTS:
        raise InstanceError(f"must be one of {', '.join(BURSTY_VARIANTS)}, got {variant!r}", field="variant")
    f = (2.0 if variant == "paper" else 4.0) if factor is None else factor
    if isinstance(f, bool) or not isinstance(f, (int, float)) or not (f > 0 and math.isfinite(f)):
        raise InstanceError(f"must be a positive number, got {factor!r}", field="factor")
    for name, v in (("period_h", period_h), ("burst_h", burst_h)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (v > 0 and math.isfinite(v)):
            raise InstanceError(f"must be a positive number of hours, got {v!r}", field=name)
    if burst_h > period_h:
        raise InstanceError(f"must not exceed period_h ({period_h}), got {burst_h!r}", field="burst_h")
    lo, hi = short_s
    if not (0 < lo <= hi and math.isfinite(hi)):
        raise InstanceError(f"must be 0 < low <= high seconds, got {short_s!r}", field="short_s")
    win = _mode_window(mode, window)
    base = philly_workload(load_jph, seed, window=None, n_jobs=n_jobs, path=path, frame=frame, mode=mode,
                           max_gpus=max_gpus)
    r_short, r_dur = _streams(seed, 5)[3:]  # children 0-2 feed the main stream
    base_jobs = list(base.jobs)
    if variant == "code":
        dur = r_dur.integers(36000, 86401, size=len(base_jobs)).astype(float)
        base_jobs = [replace(j, iterations=d / j.iteration_time_s) for j, d in zip(base_jobs, dur)]
    horizon = max(j.arrival_s for j in base_jobs)
    bursts = _burst_windows(variant, period_h, burst_h, horizon)
    # a Poisson stream at f * lam over the bursts' total time, mapped back onto the bursts
    starts = np.array([a for a, _ in bursts])
    lens = np.array([min(b, horizon) - a for a, b in bursts])
    lens = np.maximum(lens, 0.0)
    cum = np.concatenate([[0.0], np.cumsum(lens)])
    total = cum[-1]
    gaps_mean = HOUR_S / (f * lam)
    n_max = int(total / gaps_mean * 1.5 + 50)
    t_burst = np.cumsum(r_short.standard_exponential(n_max) * gaps_mean)
    t_burst = t_burst[t_burst < total]
    k = np.searchsorted(cum, t_burst, side="right") - 1
    t_short = starts[k] + (t_burst - cum[k])
    if variant == "code":
        t_short = np.floor(t_short / 300.0) * 300.0
    gpus_short = [1 if mode == "blox" else base_jobs[i % len(base_jobs)].gpus for i in range(len(t_short))]
    mnames, it_times = _assign_models(len(t_short), r_short, PHILLY_MODELS)
    d_short = r_short.uniform(lo, hi, size=len(t_short))
    merged = [(j.arrival_s, 0, i, j) for i, j in enumerate(base_jobs)]
    merged += [(float(t), 1, i, WorkloadJob("s", float(t), int(g), float(d / it), float(it), model=str(m)))
               for i, (t, g, d, m, it) in enumerate(zip(t_short, gpus_short, d_short, mnames, it_times))]
    merged.sort(key=lambda e: (e[0], e[1], e[2]))
    jobs, stream = [], []
    for pos, (_, kind, _, j) in enumerate(merged):
        tracked = win is None or win[0] <= pos < win[1]
        jobs.append(replace(j, id=str(pos), tracked=tracked))
        stream.append("short" if kind else "main")
    meta = {**base.meta, "trace": "philly-bursty", "variant": variant, "burst_factor": f,
            "bursts": ("paper: [k*period, k*period + burst)" if variant == "paper"
                       else "code: [4,6) and [8,12) h of every 12 h"),
            "period_h": period_h, "burst_h": burst_h, "short_s": [lo, hi], "window": list(win) if win else None,
            "short_jobs": int(len(t_short)), "stream": stream}
    return Workload(tuple(jobs), name=f"philly-bursty-{variant}-{mode}-{lam:g}jph", seed=seed, meta=meta)


# -- replay of a plain trace -----------------------------------------------------------------------------------
REPLAY_FIELDS = ("job_id", "model", "arrival", "iterations", "gpus")


def replay_workload(path: str | os.PathLike, *, models: Mapping[str, float] | None = None,
                    window: tuple[int, int] | None = None) -> Workload:
    """Replay a plain trace, one job per line: ``job_id, model, arrival, iterations, gpus[, gpu_type]`` (Blox's
    ``populate_from_trace``; no header, or a header line starting with ``job_id``). Arrival in seconds,
    iterations as given (not a duration), the iteration time from ``models`` (default Blox Table 2's, our
    [`PHILLY_MODELS`][optsched.generators.workload.PHILLY_MODELS]; Blox's short names such as ``resnet50`` are accepted,
    [`MODEL_ALIASES`][optsched.generators.workload.MODEL_ALIASES]). An
    unknown model is an error (Blox silently treats it as its first image model). Every job is tracked unless
    ``window`` (positions in arrival order, half-open) is given.

    ```pycon
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.txt"
    >>> _ = p.write_text("0,resnet50,0,1000,4\\n1,A3C/Pong,60.5,200,1,K80\\n")
    >>> wl = replay_workload(p)
    >>> [(j.id, j.model, j.arrival_s, j.gpus, j.duration_alone_s, j.gpu_type) for j in wl]
    [('0', 'ResNet-50/ImageNet', 0.0, 4, 300.0, ''), ('1', 'A3C/Pong', 60.5, 1, 100.0, 'K80')]
    >>> _ = p.write_text("0,resnet50,0,1000\\n")
    >>> replay_workload(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: line 1 (job '0'): has 4 fields; expected job_id, model, arrival, ...

    ```
    """
    p = _resolve_path(path)
    table = dict(PHILLY_MODELS if models is None else models)
    try:
        text = read_text(p, encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"cannot read the trace {p}: {exc}", field="path") from None
    jobs = []
    for ln, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = [c.strip() for c in line.split(",")]
        if ln == 1 and cells[0].lower() == "job_id":
            continue
        jid = cells[0] or None
        where = f"line {ln}"
        if len(cells) not in (5, 6):
            raise InstanceError(f"has {len(cells)} fields; expected job_id, model, arrival, iterations, gpus"
                                "[, gpu_type]", field=where, job=jid)
        model = MODEL_ALIASES.get(cells[1], cells[1])
        if model not in table:
            raise InstanceError(f"unknown model {cells[1]!r} (known: {', '.join(sorted(table))}, or "
                                f"{', '.join(sorted(MODEL_ALIASES))})", field=f"{where}.model", job=jid)
        try:
            arrival, iters, gpus = float(cells[2]), float(cells[3]), float(cells[4])
        except ValueError:
            raise InstanceError("arrival, iterations and gpus must be numbers", field=where, job=jid) from None
        if not gpus.is_integer():
            raise InstanceError(f"must be an integer >= 1, got {cells[4]!r}", field=f"{where}.gpus", job=jid)
        try:
            jobs.append(WorkloadJob(str(jid), arrival, int(gpus), iters, float(table[model]), model=model,
                                    gpu_type=cells[5] if len(cells) == 6 else ""))
        except InstanceError as exc:
            raise InstanceError(exc.reason, field=f"{where}.{exc.field}", job=exc.job) from None
    if not jobs:
        raise InstanceError(f"{p}: no job lines", field="path")
    wl = Workload(tuple(jobs), name=p.stem, meta={"trace": "replay", "path": str(p),
                                                  "format": ", ".join(REPLAY_FIELDS) + "[, gpu_type]"})
    return wl.track_window(*window) if window is not None else wl

# -- files by their header -----------------------------------------------------------------------------------
POLLUX_COLUMNS = ("name", "time", "application", "num_replicas")
PHILLY_COLUMNS = ("timestamp", "duration", "num_gpus")


def csv_kind(path: str | os.PathLike) -> str | None:
    """``"pollux"`` for Pollux's workload CSVs (header ``name,time,application,num_replicas,batch_size``),
    ``"philly"`` for a Philly trace CSV (``timestamp,duration,num_gpus[,gpu_time,cluster]``), ``"deadline"`` for
    our deadline workload's CSV (its first line ``# format: optsched/deadline-workload@1``), ``"optsched"`` for
    our workload CSV, ``None`` for anything else (JSON, other headers: the reader of our format reports them).

    ```pycon
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "w.csv"
    >>> _ = p.write_text("name,time,application,num_replicas,batch_size\\nj0,0,cifar10,1,128\\n")
    >>> csv_kind(p)
    'pollux'

    ```
    """
    p = Path(path)
    if p.suffix.lower() != ".csv" or not p.is_file():
        return None
    try:
        with open(p, encoding="utf-8-sig", errors="replace") as fh:
            first = fh.readline()
    except OSError:
        return None
    if first.startswith("# format: ") and first[len("# format: "):].strip() == DEADLINE_FORMAT:
        return "deadline"
    header = {h.strip() for h in first.split(",")}
    if set(POLLUX_COLUMNS) <= header:
        return "pollux"
    if set(PHILLY_COLUMNS) <= header:
        return "philly"
    return "optsched" if {"id", "arrival_s"} <= header else None


# -- the CLI's WORKLOAD argument ---------------------------------------------------------------------------------
def resolve_workload(spec: str, *, load_jph: float | None = None, seed: int = 0,
                     window: tuple[int, int] | None = None, n_jobs: int | None = None,
                     max_gpus: int | None = None, philly_filter: str = "blox", philly_order: str = "file",
                     philly_frame: pd.DataFrame | None = None) -> Workload:
    """``philly[:MODE]`` | ``bursty[:MODE[:VARIANT]]`` | ``pollux:N`` | ``synthetic`` | ``replay:PATH`` | a path to a
    workload file: ours (JSON or CSV, ``docs/formats.md``), Pollux's own ``workload-N.csv`` or a Philly trace CSV,
    told apart by their headers ([`csv_kind`][optsched.generators.workload.csv_kind]). A Pollux file follows
    [`pollux_workload`][optsched.generators.workload.pollux_workload] (``load_jph``
    rescales its times); a Philly file follows [`philly_workload`][optsched.generators.workload.philly_workload] in our
    mode (Blox's filter, Poisson arrivals
    at ``load_jph``, default 8; jobs 3000-3999 tracked when the filtered file has that many, else every job).

    ``philly`` is our mode (trace run times and GPUs, jobs 3000-3999); ``philly:blox`` Blox's own simulator mode
    (synthetic run times, one GPU per job, integer-second gaps, jobs 3000..4000 inclusive); ``bursty`` Blox's
    bursty dual-load workload on Blox's mode (``bursty:ours`` on ours; variant ``paper`` (default) or ``code``,
    e.g. ``bursty:blox:code``); ``replay:PATH`` a plain ``job_id, model, arrival, iterations, gpus`` trace.
    ``load_jph`` applies to the generated kinds (Philly and bursty default 8, synthetic default 8; Pollux keeps
    its own times unless given); ``window`` marks the tracked jobs (Philly and bursty: the mode's default; for
    files and the other kinds every job is tracked unless given); ``n_jobs`` truncates (synthetic default 200).

    ```pycon
    >>> len(resolve_workload("synthetic", n_jobs=12, load_jph=3.0, seed=1))
    12
    >>> resolve_workload("pollux:9")
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: pollux: must be 1..8 (pollux-workloads/workload-N.csv), got 9
    >>> resolve_workload("philly:fast")
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: workload: philly:MODE takes a mode in ours, blox, got 'philly:fast'

    ```
    """
    if not isinstance(spec, str) or not spec:
        raise InstanceError(f"must be philly, pollux:N, synthetic or a workload file, got {spec!r}", field="workload")
    head, _, rest = spec.partition(":")
    if head == "philly" and (rest == "" or not Path(spec).exists()):
        mode = rest or "ours"
        if mode not in PHILLY_MODES:
            raise InstanceError(f"philly:MODE takes a mode in {', '.join(PHILLY_MODES)}, got {spec!r}",
                                field="workload")
        return philly_workload(8.0 if load_jph is None else load_jph, seed,
                               window=DEFAULT_WINDOW if window is None else window, filter=philly_filter,
                               n_jobs=n_jobs, max_gpus=max_gpus, frame=philly_frame, order=philly_order, mode=mode)
    if head == "bursty" and not Path(spec).exists():
        parts = rest.split(":") if rest else []
        mode = parts[0] if parts else "blox"
        variant = parts[1] if len(parts) > 1 else "paper"
        if len(parts) > 2 or mode not in PHILLY_MODES or variant not in BURSTY_VARIANTS:
            raise InstanceError(f"must be bursty[:MODE[:VARIANT]] with MODE in {', '.join(PHILLY_MODES)} and "
                                f"VARIANT in {', '.join(BURSTY_VARIANTS)}, got {spec!r}", field="workload")
        if philly_order != "file" or philly_filter != "blox":
            raise InstanceError("the bursty workload uses Blox's filter and file order", field="workload")
        return bursty_workload(8.0 if load_jph is None else load_jph, seed, variant=variant, mode=mode,
                               window=DEFAULT_WINDOW if window is None else window, n_jobs=n_jobs,
                               frame=philly_frame, max_gpus=max_gpus)
    if head == "replay" and rest:
        if load_jph is not None:
            raise InstanceError("applies to philly, bursty, pollux:N and synthetic; a replayed trace keeps its "
                                "arrival times", field="load")
        return _truncate(replay_workload(rest, window=window), n_jobs)
    if spec.startswith("pollux"):
        rest = spec[len("pollux"):]
        try:
            idx = int(rest[1:]) if rest.startswith(":") else (6 if rest == "" else None)
        except ValueError:
            idx = None
        if idx is None:
            raise InstanceError(f"must be pollux:N with N in 1..8, got {spec!r}", field="workload")
        wl = pollux_workload(idx, load_jph, seed, window=window, max_gpus=max_gpus)
        return _truncate(wl, n_jobs)
    if spec == "synthetic":
        require_memory(200 if n_jobs is None else n_jobs, JOB_BYTES, "jobs", field="jobs")
        # jobs larger than the cluster are left out of the GPU mix (the other kinds drop them from the trace)
        mix = None if max_gpus is None else {g: w for g, w in DEFAULT_GPU_MIX.items() if g <= max_gpus} or None
        return synthetic_workload(200 if n_jobs is None else n_jobs, 8.0 if load_jph is None else load_jph, seed,
                                  window=window, gpu_mix=mix)
    p = Path(spec)
    if not p.exists():
        raise InstanceError(f"no such workload file {spec!r} (or use philly, pollux:N, synthetic)", field="workload")
    kind = csv_kind(p)
    if kind == "pollux":  # Pollux's own workload-N.csv, by its header
        wl = pollux_workload(None, load_jph, seed, window=window, max_gpus=max_gpus, path=p)
        return _truncate(wl, n_jobs)
    if kind == "philly":  # a Philly trace CSV, by its header: Blox's rules, as for "philly"
        frame = load_philly(p, order=philly_order)
        n_filtered = len(philly_jobs(philly_filter, frame=frame))
        default_window = (3000, 4000) if n_filtered >= 4000 else None
        return philly_workload(8.0 if load_jph is None else load_jph, seed,
                               window=default_window if window is None else window, filter=philly_filter,
                               n_jobs=n_jobs, max_gpus=max_gpus, frame=frame, order=philly_order)
    if load_jph is not None:
        raise InstanceError("applies to philly, pollux:N and synthetic; a workload file keeps its arrival times",
                            field="load")
    wl = read_workload(p)
    if window is not None:
        wl = wl.track_window(*window)
    return _truncate(wl, n_jobs)


def generate_workload(source: str = "synthetic", *, jobs: int | None = None, load_jph: float | None = None,
                      seed: int = 0, window: tuple[int, int] | None = None, max_gpus: int | None = None) -> Workload:
    """The workload problem's generator (``optsched.generate("workload", ...)``, ``optsched generate
    workload``): ``source`` is any workload name [`resolve_workload`][optsched.generators.workload.resolve_workload]
    takes (``synthetic``, ``philly``,
    ``philly:blox``, ``pollux:N``, ``bursty``, ``replay:PATH``); ``jobs`` the number of jobs (synthetic: 200;
    the others: truncated), ``load_jph`` the arrival rate, ``window`` the tracked job ids, ``max_gpus`` drops
    larger jobs from the traces (the synthetic mix leaves them out).

    ```pycon
    >>> import optsched
    >>> wl = optsched.generate("workload", jobs=5, load_jph=2.0, seed=3)
    >>> len(wl), wl == synthetic_workload(5, load_jph=2.0, seed=3)
    (5, True)

    ```
    """
    return resolve_workload(source, load_jph=load_jph, seed=seed, window=window, n_jobs=jobs, max_gpus=max_gpus)


def _truncate(wl: Workload, n_jobs: int | None) -> Workload:
    if n_jobs is None or n_jobs == len(wl):
        return wl
    if n_jobs < 1:
        raise InstanceError(f"must be >= 1, got {n_jobs!r}", field="n_jobs")
    if n_jobs > len(wl):
        raise InstanceError(f"asks for {n_jobs:,} jobs but the workload has {len(wl):,}", field="jobs")
    order = sorted(range(len(wl.jobs)), key=lambda i: (wl.jobs[i].arrival_s, i))[:n_jobs]
    return wl.with_jobs([wl.jobs[i] for i in sorted(order)])


__all__ = ["BLOX_WINDOW", "BURSTY_VARIANTS", "MODEL_ALIASES", "OUR_WINDOW", "PHILLY_MODELS", "PHILLY_MODES",
           "POLLUX_SIZE_GPU_H", "blox_synthetic_durations", "bursty_workload", "generate_workload", "load_philly",
           "load_pollux", "parse_window", "philly_jobs", "philly_workload", "poisson_arrivals", "pollux_workload",
           "replay_workload", "replicate_philly", "resolve_workload", "synthetic_workload"]
