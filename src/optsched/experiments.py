"""Experiments at scale: simulation grids ([`sweep`][optsched.experiments.sweep]) and batch solving
([`solve_many`][optsched.experiments.solve_many]) on any
`concurrent.futures.Executor`, summarised as tidy pandas tables with the mean and a 95 % interval over seeds.

* [`sweep`][optsched.experiments.sweep] runs every point of a grid (workload x scheduler x placement x admission x load
  x ..., each point
  a call of [`run_one`][optsched.experiments.run_one]) once per seed; [`solve_many`][optsched.experiments.solve_many]
  runs every algorithm on every instance (files or
  objects) once per seed. Both return one row per run, in grid order, whatever executor ran them.
* Executors: ``executor=None`` is a local process pool started with ``forkserver`` (``spawn`` where there is no
  forkserver), never ``fork``: a fork after threads have started (OR-Tools, BLAS) can deadlock. Tasks carry
  what they need: an instance file travels parsed (read and checked once, by the caller), a ``bundled:`` name
  as the name (resolved by the worker's own installation); a trace too large to send (Philly) is read once per
  worker from the worker's data folder ([`optsched.data`][]: ``OPTSCHED_DATA`` on the worker, or its cache
  filled by ``optsched data fetch``), or, with ``sweep(send_trace=True)``, read by the caller and scattered once
  to each Dask worker. Any other executor works: [`SerialExecutor`][optsched.experiments.SerialExecutor] (this process),
  a
  ``ProcessPoolExecutor`` of your own, or Dask's ``Client.get_executor()``, which
  [`executor`][optsched.experiments.executor] builds from
  ``"local"`` (a ``LocalCluster``) or a scheduler address (``"tcp://host:8786"``).
* A task that fails becomes a row (``status`` ``"error"``, or ``"inapplicable"`` for an algorithm that refuses an
  instance of that size, and its one-line ``error``, naming the worker): the grid always finishes and returns
  every row; the caller decides whether a failure matters (the command line's ``--strict``).
* Small tasks travel in chunks ([`sweep`][optsched.experiments.sweep]: guided chunks, large first, shrinking to one
  task, so that the
  per-task overhead of a pool or of Dask stays small); [`TaskStats`][optsched.experiments.TaskStats] says how many tasks
  each worker ran
  and how much of the workers' time went outside the tasks.
* The same seeds give the same rows on every executor: a task's result depends on its parameters and seed only.
  CP-SAT's threads per task (``num_workers``) are the cores of the worker's machine divided by the tasks that run
  there at once (``threads=`` fixes them; give a fixed number for runs that must match across machines).
* [`summarise`][optsched.experiments.summarise]: mean, standard deviation and the 95 % percentile-bootstrap interval
  of each metric over seeds (inside the values' range, as in the figures).

```pycon
>>> res = sweep({"workload": "synthetic", "scheduler": ["fifo", "srtf"], "load": 4.0, "n_jobs": 6, "servers": 2},
...             seeds=[0, 1], executor=SerialExecutor(), progress=False)
>>> res.runs[["scheduler", "seed", "finished_tracked"]].values.tolist()
[['fifo', 0, 6], ['fifo', 1, 6], ['srtf', 0, 6], ['srtf', 1, 6]]
>>> t = res.summary(["avg_jct_s"])
>>> t[["scheduler", "metric", "n"]].values.tolist()
[['fifo', 'avg_jct_s', 2], ['srtf', 'avg_jct_s', 2]]
>>> bool((t["ci_low"] <= t["mean"]).all() and (t["mean"] <= t["ci_high"]).all())
True

```
"""

from __future__ import annotations

import contextlib
import glob
import inspect
import itertools
import logging
import math
import multiprocessing as mp
import os
import socket
import time
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator, Mapping, Sequence
from urllib.parse import urlparse

import numpy as np
import pandas as pd

from .cluster import as_cluster
from .data import data_path
from .errors import InstanceError
from .generators.workload import load_philly, resolve_workload
from .io import atomic_open
from .io import progress as progress_bar
from .limits import require_memory
from .plot import bootstrap_interval, save_axes
from .plot import plot_cdfs as _plot_cdfs
from .plot import plot_vs_load as _plot_vs_load
from .sim import simulate
from .sim.metrics import SimResult
from .sim.registry import build_admission, build_placement, build_policy

__all__ = ["METRICS", "SerialExecutor", "SweepResult", "TaskStats", "available_cores", "executor", "expand_grid",
           "find_instances", "frame_markdown", "local_pool", "map_tasks", "markdown_table", "run_one", "seed_text",
           "solve_many", "summarise", "sweep", "task_threads", "worker_name", "write_sweep"]


# -- one run ---------------------------------------------------------------------------------------------------
# the cluster and round length of a run on a trace when none is given (the sweep's notes print them too)
DEFAULT_SERVERS, DEFAULT_GPUS_PER_SERVER, DEFAULT_ROUND_S = 32, 4, 300.0


def run_one(spec: str, *, scheduler: Any = None, placement: Any = "consolidated", admission: Any = None,
            load: float | None = None, seed: int = 0, round_s: float | None = None, event: bool = False,
            window: tuple[int, int] | None = None, n_jobs: int | None = None, servers: int | str | None = None,
            gpus_per_server: int | None = None, perf: Any = None, restore_s: float = 0.0, philly_filter: str = "blox",
            philly_order: str = "file", progress: bool = False, label: str | None = None, philly_frame=None,
            drain_h: float | None = None, throughputs: str | None = None) -> SimResult:
    """Build the workload ``spec`` and simulate it; returns the [`SimResult`][optsched.sim.metrics.SimResult].
    Jobs too large for the cluster are dropped from generated traces (``max_gpus``); the run stops once every
    tracked job has finished (the later jobs only provide load, as in Blox), or, with ``drain_h``, at the
    horizon ``drain_h`` hours after the last tracked arrival (tracked jobs still running are then unfinished:
    ``summary['finished_tracked']`` says how many finished).

    A deadline-workload or contention file runs with its kind's defaults (its cluster, model and mode, e.g.
    ``drs`` / ``contention-greedy`` unless ``scheduler`` is given: [`optsched.sim.simulate`][]); the options
    that only shape generated traces (``load``, ``window``, ``n_jobs``, the Philly ones, ``drain_h``) and a
    cluster size do not apply to them. An ElasticFlow trace CSV (pkusys/ElasticFlow's format) runs as a deadline
    workload with its throughput folder ``throughputs`` on ``servers`` x ``gpus_per_server`` GPUs (default its
    Fig. 8a cluster, 16 x 4): [`optsched.problems.elasticflow`][].

    ```pycon
    >>> run_one("synthetic", scheduler="srtf", load=4.0, n_jobs=5, servers=2).summary["finished_tracked"]
    5

    ```
    """
    from .problems.elasticflow import EF_GPUS_PER_NODE, EF_NODES, is_elasticflow_trace, read_elasticflow_trace

    if is_elasticflow_trace(spec):
        if throughputs is None:
            raise InstanceError("an ElasticFlow trace needs its throughput folder (one <model>.csv per model)",
                                field="throughputs")
        if isinstance(servers, str):
            raise InstanceError("give a server count for an ElasticFlow trace", field="servers")
        for opt, given in (("load", load), ("window", window), ("n_jobs", n_jobs), ("drain_h", drain_h)):
            if given is not None:
                raise InstanceError("does not apply to an ElasticFlow trace (it brings its own jobs)", field=opt)
        ef = read_elasticflow_trace(spec, throughputs, EF_NODES if servers is None else servers,
                                    EF_GPUS_PER_NODE if gpus_per_server is None else gpus_per_server)
        return simulate(ef, scheduler=scheduler, placement=placement, admission=admission, perf=perf,
                        mode="event" if event else ("round" if round_s is not None else None), round_s=round_s,
                        seed=seed, progress=progress, restore_s=restore_s, label=label)
    if throughputs is not None:
        raise InstanceError("applies to an ElasticFlow trace CSV only (header job_id,submit_time,iteration,"
                            "model_name,ddl,...)", field="throughputs")
    own = _own_kind_file(spec)
    if own is not None:
        for name, value in (("load", load), ("window", window), ("n_jobs", n_jobs), ("drain_h", drain_h),
                            ("servers", servers), ("gpus_per_server", gpus_per_server)):
            if value is not None:
                raise InstanceError(f"does not apply to a {own[0]} file (it brings its own jobs and cluster)",
                                    field=name)
        return simulate(own[1], scheduler=scheduler, placement=placement, admission=admission, perf=perf,
                        mode="event" if event else ("round" if round_s is not None else None), round_s=round_s,
                        seed=seed, progress=progress, restore_s=restore_s, label=label)
    # servers: a count (with gpus_per_server) or a cluster description such as "V100:8x4,K80:8x4" (GPU types)
    if isinstance(servers, str):
        if gpus_per_server is not None:
            raise InstanceError("a cluster description gives the GPUs of every server itself", field="gpus_per_server")
        cluster = as_cluster(servers)
        max_gpus = max(cluster.gpus_by_type.values())  # a job runs on one GPU type at a time
    else:
        cluster = as_cluster((DEFAULT_SERVERS if servers is None else servers,
                              DEFAULT_GPUS_PER_SERVER if gpus_per_server is None else gpus_per_server))
        max_gpus = cluster.total_gpus
    # the generated kinds (philly[:MODE], bursty[...], pollux:N, synthetic) drop jobs larger than the cluster
    generated = spec.split(":", 1)[0] in ("philly", "synthetic", "pollux", "bursty") and not Path(spec).exists()
    wl = resolve_workload(spec, load_jph=load, seed=seed, window=window, n_jobs=n_jobs,
                          max_gpus=max_gpus if generated else None, philly_filter=philly_filter,
                          philly_order=philly_order, philly_frame=philly_frame)
    horizon = None
    if drain_h is not None:
        if not (drain_h > 0 and math.isfinite(drain_h)):
            raise InstanceError(f"must be a positive number of hours, got {drain_h!r}", field="drain_h")
        last = max((j.arrival_s for j in wl.jobs if j.tracked), default=0.0)
        horizon = last + drain_h * 3600.0
    return simulate(wl, cluster, scheduler=scheduler, placement=placement,
                    admission=admission, perf=perf, mode="event" if event else "round",
                    round_s=DEFAULT_ROUND_S if round_s is None else round_s, seed=seed,
                    progress=progress, restore_s=restore_s, stop_when_tracked_done=True, label=label,
                    max_time_s=horizon)


def _own_kind_file(spec: str) -> tuple[str, Any] | None:
    """(kind, data) of a file of an online kind that brings its own cluster (a deadline workload, a contention
    instance), else None (generated workloads, workload files)."""
    p = Path(spec)
    if not p.is_file():
        return None
    if p.suffix.lower() == ".csv":  # a deadline workload in CSV (`optsched generate deadline -o X.csv` writes it)
        from .generators.workload import csv_kind
        from .problems.deadline import read_deadline_workload

        return ("deadline", read_deadline_workload(p)) if csv_kind(p) == "deadline" else None
    if p.suffix.lower() != ".json":
        return None
    from .api import load
    from .registry import problem_of

    obj = load(p)
    name = problem_of(obj).name
    return (name, obj) if name in ("deadline", "contention") else None


# a grid point: its summary row, its tracked JCTs for the CDF and the worker that ran it (estimate)
SIMULATION_BYTES = 200_000
# a solve: its row and, when kept, its schedule (estimate)
SOLVE_BYTES = 50_000

#: the figures of a simulation kept in a sweep's rows (``summarise`` takes any of them)
METRICS = ("tracked", "finished_tracked", "avg_jct_s", "avg_jct_lb_s", "p50_jct_s", "p90_jct_s", "p99_jct_s",
           "avg_responsiveness_s", "makespan_s", "mean_utilisation", "mean_queue", "preemptions", "migrations",
           "events", "wall_s", "events_per_s")


# -- executors -------------------------------------------------------------------------------------------------
class SerialExecutor(Executor):
    """Runs each task when it is submitted, in this process: the reference every other executor must match,
    and the cheapest choice for a handful of tiny tasks.

    ```pycon
    >>> SerialExecutor().submit(pow, 2, 5).result()
    32

    ```
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        fut: Future = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - handed to the caller through the future, like any executor
            fut.set_exception(exc)
        return fut


ENV_SLOTS = "OPTSCHED_TASK_SLOTS"  # tasks running at once on this machine, set in the local pool's workers


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def task_threads(slots_by_host: Mapping[str, int] | None = None) -> int:
    """CP-SAT threads for one task: the cores this process may use divided by the tasks running at once on this
    machine (from the local pool's workers, or from Dask's view of the workers on this host); at least 1.

    ```pycon
    >>> task_threads() >= 1
    True

    ```
    """
    slots = None
    try:
        from distributed import get_worker  # only when running inside a Dask worker

        w = get_worker()
        host = urlparse(w.address).hostname or ""
        slots = (slots_by_host or {}).get(host) or w.state.nthreads
    except (ImportError, ValueError, AttributeError):
        env = os.environ.get(ENV_SLOTS, "")
        slots = int(env) if env.isdigit() else None
    return max(1, available_cores() // max(1, slots or 1))


def _init_local_worker(slots: int) -> None:
    os.environ[ENV_SLOTS] = str(slots)


def local_pool(workers: int | None = None) -> ProcessPoolExecutor:
    """A process pool of ``workers`` processes (default: the cores), started with ``forkserver`` or ``spawn``."""
    n = workers or available_cores()
    methods = mp.get_all_start_methods()
    ctx = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
    return ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_init_local_worker, initargs=(n,))


DASK_HINT = "Dask is not installed: pip install 'dask[distributed]' (or the project's [dask] extra)"


def _has_bokeh() -> bool:
    import importlib.util

    return importlib.util.find_spec("bokeh") is not None


@contextlib.contextmanager
def executor(dask: str | None = None, workers: int | None = None, *,
             dashboard: IO[str] | None = None) -> Iterator[Executor]:
    """The executor the command line's ``--dask`` and ``--workers`` ask for, closed on exit:

    * ``dask=None``: [`SerialExecutor`][optsched.experiments.SerialExecutor] for ``workers=1``, else a local process
      pool ([`local_pool`][optsched.experiments.local_pool]);
    * ``dask="local"``: a Dask ``LocalCluster`` of ``workers`` processes (default: the cores), one thread each;
    * ``dask="tcp://HOST:PORT"`` (or any scheduler address): a client of a running Dask scheduler.

    ``dashboard``: a stream to print the local cluster's dashboard address on (when bokeh is installed).

    ```pycon
    >>> with executor(workers=1) as ex:
    ...     ex.submit(len, "abc").result()
    3

    ```
    """
    if dask is None:
        if workers == 1:
            yield SerialExecutor()
            return
        with local_pool(workers) as pool:
            yield pool
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InstanceError(DASK_HINT, field="--dask") from None
    with contextlib.ExitStack() as stack:
        if dask == "local":
            # logs of the cluster's own start and stop stay quiet; a task's error still reaches the caller. The
            # dashboard (a free port) needs bokeh; without it the cluster runs the same, with no dashboard
            cluster = stack.enter_context(LocalCluster(n_workers=workers or available_cores(),
                                                       threads_per_worker=1, processes=True,
                                                       dashboard_address=":0" if _has_bokeh() else None,
                                                       silence_logs=logging.CRITICAL))
            client = stack.enter_context(Client(cluster))  # (its workers are waited for by each batch's plan)
            if dashboard is not None:
                link = client.dashboard_link if _has_bokeh() else None
                print(f"Dask dashboard: {link}" if link else
                      "Dask: no dashboard (pip install bokeh for one)", file=dashboard, flush=True)
        else:
            try:
                client = stack.enter_context(Client(dask, timeout="10s"))
            except (OSError, TimeoutError, ValueError) as exc:
                raise InstanceError(f"cannot reach the Dask scheduler at {dask}: {exc}", field="--dask") from None
        yield client.get_executor()


# how long a batch on a local Dask cluster waits for its workers before planning on those it sees
LOCAL_WORKERS_WAIT_S = 300.0


def _slots_by_host(ex: Executor) -> dict[str, int]:
    """Tasks that run at once per host, as a Dask executor's scheduler sees its workers (empty otherwise). On a
    client of a cluster object (a local cluster), first waits (up to ``LOCAL_WORKERS_WAIT_S``) until every worker
    the cluster started is seen: on a loaded machine a worker can register late, and a batch planned on one worker
    gives each task every core. A scheduler given by address is planned on the workers it sees."""
    client = getattr(ex, "_client", None)
    if client is None:
        return {}
    started = len(getattr(getattr(client, "cluster", None), "workers", None) or ())
    if started:
        with contextlib.suppress(TimeoutError):
            client.wait_for_workers(started, timeout=LOCAL_WORKERS_WAIT_S)
    out: dict[str, int] = {}
    for addr, info in client.scheduler_info().get("workers", {}).items():
        host = urlparse(addr).hostname or ""
        out[host] = out.get(host, 0) + int(info.get("nthreads", 1))
    return out


def map_tasks(fn: Callable[[dict], Any], tasks: Sequence[Mapping[str, Any]], executor: Executor | None = None, *,
              workers: int | None = None, progress: bool = True, desc: str = "tasks") -> list[Any]:
    """``[fn(task) for task in tasks]`` on ``executor`` (default: a local process pool of ``workers``), results in
    the tasks' order, with a progress bar: what [`sweep`][optsched.experiments.sweep] and
    [`solve_many`][optsched.experiments.solve_many] do, for any other
    experiment (``fn`` must be importable by the workers: a module-level function, not a lambda). A task's
    exception is raised here (the other tasks are cancelled).

    ```pycon
    >>> map_tasks(len, [{"a": 1}, {"a": 1, "b": 2}], SerialExecutor(), progress=False)
    [1, 2]

    ```
    """
    out, _ = _run_tasks(fn, [dict(t) for t in tasks], executor, workers, progress, desc, "task", catch=False)
    return [v for _, v in out]


def worker_name() -> str:
    """The Dask worker's address inside a Dask worker, else ``host:pid`` (which process ran a task)."""
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError, AttributeError):
        return f"{socket.gethostname()}:{os.getpid()}"


def _one_line(exc: BaseException) -> str:
    text = str(exc) if isinstance(exc, InstanceError) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())


def _task_text(t: Mapping[str, Any]) -> str:
    """A task in a few words, for its error line."""
    if "point" in t:
        pt = t["point"]
        return " ".join(f"{k}={_label(v)}" for k, v in pt.items() if k not in ("slots_by_host",)) + f" seed={t['seed']}"
    if "algorithm" in t:
        return f"{t.get('name')} {t['algorithm']} seed={t.get('seed')}"
    return ""


def _run_chunk(fn: Callable[[dict], Any], tasks: list[dict], catch: bool) -> dict[str, Any]:
    """Run a chunk of tasks in a worker: ``("ok", value)`` or, with ``catch``, ``("error", one line naming the
    worker and the task)`` per task, the worker's name and the seconds spent in the tasks."""
    t0 = time.perf_counter()
    who = worker_name()
    out: list[tuple[str, Any]] = []
    for t in tasks:
        if not catch:
            out.append(("ok", fn(t)))
            continue
        try:
            out.append(("ok", fn(t)))
        except Exception as exc:  # noqa: BLE001 - any failure of one task becomes its row
            out.append(("error", f"worker {who}, task {_task_text(t)}: {_one_line(exc)}"))
    return {"worker": who, "out": out, "busy_s": time.perf_counter() - t0}


@dataclass
class TaskStats:
    """How a batch of tasks went through an executor: tasks per worker, chunks, task slots (tasks that could run
    at once), the wall time and the seconds the workers spent inside the tasks; ``outside_s`` (slots x wall -
    busy) is the time spent outside them: sending, scheduling, starting, and slots left idle."""

    tasks_by_worker: dict[str, int]
    chunks: int
    slots: int
    wall_s: float
    busy_s: float

    @property
    def outside_s(self) -> float:
        return max(0.0, self.slots * self.wall_s - self.busy_s)

    def text(self) -> str:
        """One line, e.g. ``200 tasks in 14 chunks on 2 workers (a: 100, b: 100); outside tasks: ...``."""
        n = sum(self.tasks_by_worker.values())
        per = ", ".join(f"{w}: {k}" for w, k in sorted(self.tasks_by_worker.items()))
        cap = self.slots * self.wall_s
        share = f" ({self.outside_s / cap:.0%})" if cap > 0 else ""
        return (f"{n} tasks in {self.chunks} chunks on {len(self.tasks_by_worker)} workers ({per}); time outside "
                f"tasks {self.outside_s:.2f} s of {self.slots} slots x {self.wall_s:.2f} s{share}")


def _slots(ex: Executor, slots_by_host: Mapping[str, int]) -> int:
    if slots_by_host:
        return max(1, sum(slots_by_host.values()))
    return max(1, int(getattr(ex, "_max_workers", 1) or 1))


def _chunks(seq: Sequence[int], slots: int, chunk: int | None) -> list[list[int]]:
    """Tasks in chunks: ``chunk`` each, or guided (``chunk=None``): each chunk half of what remains per slot, so the
    first are large (little overhead) and the last single tasks (an even finish).

    ```pycon
    >>> [len(c) for c in _chunks(range(20), 2, None)]
    [5, 4, 3, 2, 2, 1, 1, 1, 1]

    ```
    """
    seq = list(seq)
    out, i = [], 0
    while i < len(seq):
        k = chunk if chunk else max(1, math.ceil((len(seq) - i) / (2 * slots)))
        out.append(seq[i:i + k])
        i += k
    return out


def _run_tasks(fn: Callable[[dict], Any], tasks: list[dict], ex: Executor | None, workers: int | None,
               progress: bool, desc: str, unit: str, order: Sequence[int] | None = None, *, chunk: int | None = 1,
               catch: bool = True) -> tuple[list[tuple[str, Any]], TaskStats]:
    """Run ``fn(task)`` for every task on ``ex`` (or a local pool) in chunks
    ([`_chunks`][optsched.experiments._chunks]); one
    ``(state, value)`` per task in the tasks' order (state ``ok`` or, with ``catch``, ``error`` and its line)."""
    if not tasks:
        return [], TaskStats({}, 0, 1, 0.0, 0.0)
    if ex is None:
        n = min(workers or available_cores(), len(tasks))
        with executor(None, n) as own:
            return _run_tasks(fn, tasks, own, n, progress, desc, unit, order, chunk=chunk, catch=catch)
    slots_by_host = _slots_by_host(ex)
    if slots_by_host:
        for t in tasks:
            t["slots_by_host"] = slots_by_host
    slots = _slots(ex, slots_by_host)
    groups = _chunks(order if order is not None else range(len(tasks)),
                     slots, 1 if isinstance(ex, SerialExecutor) else chunk)
    bar = progress_bar(len(tasks), desc, unit) if progress else None
    results: dict[int, tuple[str, Any]] = {}
    by_worker: dict[str, int] = {}
    busy = 0.0
    futures: dict[Future, list[int]] = {}
    t0 = time.perf_counter()
    try:
        for g in groups:
            futures[ex.submit(_run_chunk, fn, [tasks[i] for i in g], catch)] = g
        for f in as_completed(futures):
            g = futures[f]
            try:
                done = f.result()
            except Exception as exc:  # the executor lost the chunk (a worker died, a task would not pickle)
                if not catch:
                    raise
                done = {"worker": "?", "busy_s": 0.0,
                        "out": [("error", f"task {_task_text(tasks[i])}: {_one_line(exc)}") for i in g]}
            for i, r in zip(g, done["out"]):
                results[i] = r
            by_worker[done["worker"]] = by_worker.get(done["worker"], 0) + len(g)
            busy += done["busy_s"]
            if bar is not None:
                bar.update(len(g))
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    finally:
        if bar is not None:
            bar.close()
    stats = TaskStats(by_worker, len(groups), slots, time.perf_counter() - t0, busy)
    return [results[i] for i in range(len(tasks))], stats


# -- statistics ------------------------------------------------------------------------------------------------
def summarise(runs: pd.DataFrame, by: Sequence[str], metrics: Sequence[str]) -> pd.DataFrame:
    """A tidy table: one row per group of ``by`` and metric, with ``n`` (runs with a value), ``mean``, ``std``
    and the 95 % percentile-bootstrap interval ``ci_low``, ``ci_high`` of the mean
    ([`optsched.plot.bootstrap_interval`][], the interval the figures draw: it stays inside the range of the
    values, so a JCT, a wait or a utilisation never gets an interval below 0; NaN with fewer than two values).

    ```pycon
    >>> runs = pd.DataFrame({"alg": ["a", "a", "a", "b"], "x": [1.0, 2.0, 3.0, 5.0]})
    >>> t = summarise(runs, ["alg"], ["x"])
    >>> t[["alg", "n", "mean"]].values.tolist()
    [['a', 3, 2.0], ['b', 1, 5.0]]
    >>> 1.0 <= float(t["ci_low"].iloc[0]) <= 2.0 <= float(t["ci_high"].iloc[0]) <= 3.0, bool(t["ci_low"].isna().iloc[1])
    (True, True)

    ```
    """
    by = list(by)
    missing = [c for c in [*by, *metrics] if c not in runs.columns]
    if missing:
        raise InstanceError(f"unknown column(s) {missing} (have: {', '.join(map(str, runs.columns))})",
                            field="summarise")
    long = runs[by + list(metrics)].melt(id_vars=by, value_vars=list(metrics), var_name="metric")
    long["value"] = pd.to_numeric(long["value"], errors="coerce")
    g = long.groupby(by + ["metric"], sort=False, dropna=False)["value"]
    stats = g.agg(n="count", mean="mean", std="std")
    # the same groups in the same order (a key may hold NaN, which no dict lookup finds again)
    bounds = g.apply(lambda v: bootstrap_interval(v.to_numpy(dtype=float)) if v.notna().sum() >= 2
                     else (math.nan, math.nan))
    stats["ci_low"] = [b[0] for b in bounds.to_numpy()]
    stats["ci_high"] = [b[1] for b in bounds.to_numpy()]
    out = stats.reset_index()
    out["n"] = out["n"].astype(int)
    # the order of the first appearance of each group, metrics in the order asked
    rank = {m: i for i, m in enumerate(metrics)}
    first = runs[by].drop_duplicates().reset_index(drop=True).reset_index().rename(columns={"index": "_g"})
    out = out.merge(first, on=by, how="left")
    out["_m"] = out["metric"].map(rank)
    return out.sort_values(["_g", "_m"], kind="stable").drop(columns=["_g", "_m"]).reset_index(drop=True)


# -- sweep -----------------------------------------------------------------------------------------------------
# a grid point's parameters: run_one's own (read from its signature, so the two never drift apart), but for what the
# sweep sets itself (the seed, the progress bar, the label, the trace it hands each worker)
_RUN_ONE_KEYS = tuple(n for n in inspect.signature(run_one).parameters
                      if n not in ("spec", "seed", "progress", "label", "philly_frame"))
_FRAME: tuple[tuple[str, Path], pd.DataFrame] | None = None   # the Philly trace, read once per worker process


def _philly_frame(order: str) -> pd.DataFrame:
    """The Philly trace in ``order``, read once per process while the data folder stays the same (a test or a user
    that points ``OPTSCHED_DATA`` elsewhere gets that folder's trace, not the one read before)."""
    global _FRAME
    key = (order, data_path("philly", "philly.csv"))
    if _FRAME is None or _FRAME[0] != key:
        _FRAME = (key, load_philly(key[1], order=order))
    return _FRAME[1]


def expand_grid(grid: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The points of a grid and its axes. A mapping's list values are axes (their Cartesian product, in the
    mapping's order); other values (numbers, strings, tuples such as ``window``) are fixed. A sequence of
    mappings is taken as the points themselves (its axes: the keys whose values differ).

    ```pycon
    >>> pts, axes = expand_grid({"workload": "synthetic", "scheduler": ["fifo", "las"], "load": [1.0, 2.0]})
    >>> axes, len(pts), pts[1]
    (['scheduler', 'load'], 4, {'workload': 'synthetic', 'scheduler': 'fifo', 'load': 2.0})

    ```
    """
    if isinstance(grid, Mapping):
        axes = [k for k, v in grid.items() if isinstance(v, list)]
        for k in axes:
            if not grid[k]:
                raise InstanceError("the grid is empty: every axis needs at least one value", field=f"grid.{k}")
        require_memory(math.prod(len(grid[k]) for k in axes), SIMULATION_BYTES, "simulations in the grid",
                       field="grid")
        points = []
        for combo in itertools.product(*(grid[k] for k in axes)):
            pt = dict(grid.items())
            pt.update(zip(axes, combo))
            points.append(pt)
        return points, axes
    points = [dict(p) for p in grid]
    if not points:
        raise InstanceError("the grid is empty: give at least one point", field="grid")
    keys = list(dict.fromkeys(k for p in points for k in p))
    axes = [k for k in keys if len({repr(p.get(k)) for p in points}) > 1]
    return points, axes


def _check_point(pt: Mapping[str, Any]) -> None:
    unknown = sorted(set(pt) - {"workload", *_RUN_ONE_KEYS})
    if unknown:
        raise InstanceError(f"unknown parameter(s) {unknown} (known: workload, {', '.join(_RUN_ONE_KEYS)})",
                            field="grid")
    if not isinstance(pt.get("workload"), str):
        raise InstanceError("every point needs a workload (philly, pollux:N, synthetic or a file)",
                            field="grid.workload")


def _sweep_task(task: dict) -> dict:
    """One grid point and seed (runs in a worker): the summary row plus the tracked JCTs for the CDF."""
    kw = dict(task["point"])
    spec = kw.pop("workload")
    if spec == "philly":
        # sent with the task (sweep(send_trace=True)), else read once per worker from its own data folder
        sent = task.get("philly_frame")
        try:
            kw["philly_frame"] = sent if sent is not None else _philly_frame(kw.get("philly_order", "file"))
        except InstanceError as exc:
            if exc.field != "data":
                raise
            raise InstanceError(f"{exc.reason}; or send the trace from the client (sweep(send_trace=True), "
                                "optsched simulate --sweep --send-trace)", field="data") from None
    res = run_one(spec, seed=task["seed"], **kw)
    s = res.summary
    row: dict[str, Any] = {}
    # lower bound on the average JCT when a horizon cut some tracked jobs: they count as completing at the end
    tr = res.jobs[res.jobs["tracked"]]
    end = float(s.get("end_s") or 0.0)
    lb = np.where(tr["completion_s"].isna(), end - tr["arrival_s"], tr["jct_s"])
    summary = dict(s, avg_jct_lb_s=float(np.mean(lb)) if len(lb) else None)
    for key in METRICS:
        row[key] = summary.get(key)
    jct, _ = res.jct_cdf()
    return {"row": row, "jct": np.asarray(jct, dtype=float)}


def _attach_trace(tasks: list[dict[str, Any]], ex: Executor | None) -> None:
    """Give every Philly task the trace read here: one copy scattered to each Dask worker, or the frame itself."""
    client = getattr(ex, "_client", None)
    frames: dict[str, Any] = {}
    for t in tasks:
        if t["point"].get("workload") != "philly":
            continue
        order = t["point"].get("philly_order", "file")
        if order not in frames:
            frame = load_philly(order=order)
            frames[order] = client.scatter(frame, broadcast=True) if client is not None else frame
        t["philly_frame"] = frames[order]


def _seeds(seeds: int | Iterable[int]) -> list[int]:
    if isinstance(seeds, bool) or not isinstance(seeds, (int, Iterable)):
        raise InstanceError(f"must be a count or a list of integers >= 0, got {seeds!r}", field="seeds")
    out = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    if not out or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0 for s in out):
        raise InstanceError(f"must be a count or a list of integers >= 0, got {seeds!r}", field="seeds")
    if len(set(out)) != len(out):
        raise InstanceError(f"has duplicates: {out}", field="seeds")
    return [int(s) for s in out]


def _label(v: Any) -> Any:
    """A grid value as a table cell (policy dicts and objects by their name)."""
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, Mapping):
        return str(v.get("name", v))
    if isinstance(v, tuple):
        return ":".join(map(str, v))
    return getattr(v, "name", type(v).__name__)


@dataclass
class SweepResult:
    """What [`sweep`][optsched.experiments.sweep] returns. ``runs``: one row per (point, seed), the grid's axes then
    ``seed`` then the
    [`METRICS`][optsched.experiments.METRICS], then ``status`` (``ok`` or ``error``) and ``error`` (the failure's one
    line, naming the worker
    and the task); ``axes``: the columns that vary; ``cdfs``: ``{(axis values..., seed): sorted tracked JCTs}``
    (empty for a failed run); ``wall_s``: the sweep's wall time; ``executor``: what ran it; ``stats``: tasks per
    worker and the time spent outside tasks ([`TaskStats`][optsched.experiments.TaskStats])."""

    runs: pd.DataFrame
    axes: list[str]
    cdfs: dict[tuple, np.ndarray] = field(repr=False)
    wall_s: float = 0.0
    executor: str = ""
    stats: TaskStats | None = field(default=None, repr=False)

    @property
    def failed(self) -> pd.DataFrame:
        """The rows of the runs that failed (``status`` not ``ok``)."""
        if "status" not in self.runs:
            return self.runs.iloc[:0].assign(status=[], error=[])
        return self.runs[self.runs["status"] != "ok"]

    def summary(self, metrics: Sequence[str] = ("avg_jct_s", "avg_responsiveness_s", "mean_utilisation",
                                                "finished_tracked")) -> pd.DataFrame:
        """Mean and 95 % interval over seeds of each metric, per grid point
        ([`summarise`][optsched.experiments.summarise])."""
        return summarise(self.runs, self.axes, metrics)

    def wide(self, metrics: Sequence[str] = ("avg_jct_s", "avg_responsiveness_s", "mean_utilisation",
                                             "finished_tracked", "tracked", "preemptions", "wall_s",
                                             "avg_jct_lb_s")) -> pd.DataFrame:
        """One row per grid point: ``<metric>`` (the mean over seeds), ``<metric>_ci_low``/``_ci_high`` and
        ``seeds`` (how many)."""
        t = self.summary(metrics)
        if not self.axes:
            t = t.assign(_point=0)
        keys = self.axes or ["_point"]
        mean = t.pivot_table(index=keys, columns="metric", values="mean", sort=False, dropna=False)
        lo = t.pivot_table(index=keys, columns="metric", values="ci_low", sort=False, dropna=False)
        hi = t.pivot_table(index=keys, columns="metric", values="ci_high", sort=False, dropna=False)
        out = mean[list(metrics)].copy()
        for m in metrics:
            out[f"{m}_ci_low"], out[f"{m}_ci_high"] = lo[m], hi[m]
        out["seeds"] = self.runs.groupby(keys, sort=False).size()
        out = out.reset_index()
        return out.drop(columns=["_point"]) if not self.axes else out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: axes, seeds, wall time, executor and the per-point means and intervals."""
        w = self.wide().replace({np.nan: None})
        failed = self.failed
        return {"axes": self.axes, "seeds": sorted({int(s) for s in self.runs["seed"]}), "runs": len(self.runs),
                "wall_s": self.wall_s, "executor": self.executor, "points": w.to_dict(orient="records"),
                "failed": len(failed), "errors": [str(e) for e in failed["error"]],
                "tasks": None if self.stats is None else self.stats.text()}


def _describe(ex: Executor | None, workers: int | None) -> str:
    if ex is None:
        return f"local process pool ({workers or available_cores()} workers)"
    client = getattr(ex, "_client", None)
    if client is not None:
        n = len(client.scheduler_info().get("workers", {}))
        return f"Dask ({n} workers at {client.scheduler.address})"
    if isinstance(ex, SerialExecutor):
        return "serial"
    return type(ex).__name__


def sweep(grid: Mapping[str, Any] | Sequence[Mapping[str, Any]], seeds: int | Iterable[int] = (0,),
          executor: Executor | None = None, *, workers: int | None = None, progress: bool = True,
          chunk: int | None = None, send_trace: bool = False) -> SweepResult:
    """Simulate every point of ``grid`` ([`expand_grid`][optsched.experiments.expand_grid]; keys: ``workload`` and
    [`run_one`][optsched.experiments.run_one]'s
    parameters) once per seed on ``executor`` (default: a local process pool of ``workers`` processes).
    Policy names are checked before any run starts; rows come back in grid order, then seed order. A run that
    fails is a row with ``status="error"`` and its ``error``; the others still run
    ([`SweepResult.failed`][optsched.experiments.SweepResult.failed]).
    ``chunk``: simulations per task (default: guided chunks, [`_chunks`][optsched.experiments._chunks]). ``send_trace``:
    read the Philly
    trace here and send it to the workers (scattered once to every Dask worker; with a pool, once per chunk), for
    workers without a data folder of their own; by default each worker reads it from its own.

    The seed drives the workload generator (arrivals, models, durations) and the policies, so seeds are
    independent replications of each point; the same seed gives common random numbers across the points.
    """
    points, axes = expand_grid(grid)
    seed_list = _seeds(seeds)
    if "seed" in {k for p in points for k in p}:
        raise InstanceError("give seeds with seeds=, not in the grid", field="grid.seed")
    for pt in points:
        _check_point(pt)
    for s in {p.get("scheduler", "fifo") for p in points if isinstance(p.get("scheduler", "fifo"), str)}:
        build_policy(s, "consolidated")
    for p in {p.get("placement", "consolidated") for p in points
              if isinstance(p.get("placement", "consolidated"), str)}:
        build_placement(p)
    for a in {p.get("admission", "accept-all") for p in points if isinstance(p.get("admission", "accept-all"), str)}:
        build_admission(a)
    require_memory(len(points) * len(seed_list), SIMULATION_BYTES, "simulations in the grid", field="grid")
    tasks: list[dict[str, Any]] = [{"point": pt, "seed": s} for pt in points for s in seed_list]
    if send_trace:
        _attach_trace(tasks, executor)
    # longest first (high load, preemptive policies) for a better spread over the workers
    order = sorted(range(len(tasks)), key=lambda i: (-float(tasks[i]["point"].get("load") or 0.0),
                                                     tasks[i]["point"].get("scheduler") == "fifo", i))
    if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1):
        raise InstanceError(f"must be a whole number of simulations >= 1, got {chunk!r}", field="chunk")
    t0 = time.perf_counter()
    out, stats = _run_tasks(_sweep_task, tasks, executor, workers, progress, "sweep", "run", order, chunk=chunk)
    wall = time.perf_counter() - t0
    rows, cdfs = [], {}
    for t, (state, r) in zip(tasks, out):
        key = tuple(_label(t["point"].get(a)) for a in axes)
        if state == "ok":
            rows.append({**dict(zip(axes, key)), "seed": t["seed"], **r["row"], "status": "ok", "error": None})
            cdfs[(*key, t["seed"])] = r["jct"]
        else:
            rows.append({**dict(zip(axes, key)), "seed": t["seed"], "status": "error", "error": r})
            cdfs[(*key, t["seed"])] = np.empty(0)
    runs = pd.DataFrame(rows, columns=[*axes, "seed", *METRICS, "status", "error"])
    return SweepResult(runs, axes, cdfs, wall, _describe(executor, workers), stats)


# -- batch solving ---------------------------------------------------------------------------------------------
_INSTANCES: dict[str, Any] = {}  # bundled instances read by this worker, by name (a worker solves many per file)


def _instance_of(task: dict) -> Any:
    """The task's instance: sent parsed (a file the caller read), as a JSON mapping, or as a ``bundled:`` name
    (resolved by this worker's own installation)."""
    from .api import from_dict, load_instance

    src = task["instance"]
    if isinstance(src, Mapping):
        return from_dict(src, task["name"])
    if not isinstance(src, str):
        return src
    if src not in _INSTANCES:
        if len(_INSTANCES) > 64:
            _INSTANCES.clear()
        _INSTANCES[src] = load_instance(src)
    return _INSTANCES[src]


def _solve_task(task: dict) -> dict:
    """One (instance, algorithm, seed) in a worker: the row of figures (and the result when asked). An
    [`InstanceError`][optsched.errors.InstanceError] of the algorithm itself (brute force on more than 3 jobs, a model
    for another size)
    makes the row ``inapplicable`` with its reason; any other failure is left to
    [`_run_chunk`][optsched.experiments._run_chunk] (``error``)."""
    import inspect

    from .api import solve
    from .registry import get_algorithm

    inst = _instance_of(task)
    alg = get_algorithm(task["algorithm"])
    options = dict(task["options"])
    threads = None
    row = {"instance": task["name"], "problem": alg.problem.name, "algorithm": alg.name, "kind": alg.kind,
           "seed": task["seed"], "jobs": len(getattr(inst, "jobs", ()) or ())}
    try:
        if alg.exact:
            params = inspect.signature(alg.func).parameters
            if "num_workers" in params and "num_workers" not in options:
                threads = task["threads"] or task_threads(task.get("slots_by_host"))
                options["num_workers"] = threads
            if task["deterministic_limit"] is not None and "deterministic_limit" in params:
                options.setdefault("deterministic_limit", task["deterministic_limit"])
            res = solve(inst, alg.name, seed=task["seed"], time_limit=task["time_limit"], **options)
        else:
            res = solve(inst, alg.name, seed=task["seed"], **options)
    except InstanceError as exc:
        return {"row": {**row, "status": "inapplicable", "threads": threads, "error": _one_line(exc)},
                "result": None}
    row.update({"status": res.status.value, "objective": res.objective, "lower_bound": res.lower_bound,
                "gap": res.gap, "runtime_s": res.runtime_s, "threads": threads, "error": None})
    return {"row": row, "result": res if task["keep"] else None}


SOLVE_COLUMNS = ("instance", "problem", "algorithm", "kind", "seed", "jobs", "status", "objective", "lower_bound",
                 "gap", "runtime_s", "threads", "error")


def find_instances(spec: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """The instance files a folder (its ``*.json``), a glob pattern or a list of paths names, sorted, each once;
    the instances shipped with the package keep their ``bundled:`` names (each worker resolves them).

    ```pycon
    >>> names = find_instances("bundled:rar")
    >>> len(names) >= 30, names[0].startswith("bundled:rar/")
    (True, True)

    ```
    """
    from .io import BUNDLED_PREFIX, bundled_path

    if not isinstance(spec, (str, os.PathLike)):
        return list(dict.fromkeys(p for s in spec for p in find_instances(s)))
    text = os.fspath(spec)
    if text.startswith(BUNDLED_PREFIX):
        rel = text[len(BUNDLED_PREFIX):].strip("/")
        if rel.endswith(".json") and not glob.has_magic(rel):
            bundled_path(text)  # an unknown name stops here
            return [text]
        base = bundled_path("index.json").parent
        files = base.glob(rel) if glob.has_magic(rel) else (base / rel).rglob("*.json") if (base / rel).is_dir() \
            else iter(())
        found = sorted(f"{BUNDLED_PREFIX}{q.relative_to(base).as_posix()}" for q in files
                       if q.is_file() and q.name != "index.json")
        if not found:
            raise InstanceError(f"no bundled instance in {text!r} (optsched list instances shows them)",
                                field="instances")
        return found
    p = Path(text)
    if p.is_dir():
        found = sorted(str(q) for q in p.rglob("*.json") if q.name != "index.json")
    elif p.is_file():
        found = [text]
    else:
        found = sorted(q for q in glob.glob(text, recursive=True) if Path(q).is_file())
    if not found:
        raise InstanceError(f"no instance file in {text!r} (a folder of .json files, a glob such as 'dir/*.json' "
                            "or a file)", field="instances")
    return found


def _payload(src: Any) -> Any:
    """What a task carries for an instance source: a file's parsed instance (read and checked here, once, so a bad
    file stops the batch before any work and no worker needs the file), a ``bundled:`` name as is (the worker
    resolves it in its own installation), an instance object as is."""
    from .api import load_instance
    from .io import BUNDLED_PREFIX

    if isinstance(src, (str, os.PathLike)):
        text = os.fspath(src)
        if text.startswith(BUNDLED_PREFIX):
            return text
        try:
            return load_instance(text)
        except InstanceError as exc:
            raise InstanceError(f"{text}: {exc}", field="instances") from None
    return src


def _problem_of_source(src: Any) -> str:
    from .io import bundled_path, check_format, read_json
    from .registry import problem_for_format, problem_of

    if isinstance(src, str):
        prob = problem_for_format(check_format(read_json(bundled_path(src))))
    elif isinstance(src, Mapping):
        prob = problem_for_format(check_format(src))
    else:
        prob = problem_of(src)
    if prob.evaluator is None:
        raise InstanceError(f"a {prob.name} file is not an offline instance to solve", field="instances")
    return prob.name


def solve_many(instances: Any, algorithms: Sequence[str] | None = None, time_limit: float | None = None,
               executor: Executor | None = None, *, seeds: int | Iterable[int] = (0,), workers: int | None = None,
               threads: int | None = None, deterministic_limit: float | None = None,
               options: Mapping[str, Mapping[str, Any]] | None = None,
               keep_results: bool = False, progress: bool = True) -> pd.DataFrame:
    """Solve every instance with every algorithm of its problem once per seed; one row per run (instance, problem,
    algorithm, kind, seed, jobs, status, objective, lower_bound, gap, runtime_s, threads), in input order.

    * ``instances``: a folder, a glob, ``bundled:rar``, a list of paths (read and checked here once; each task
      carries its parsed instance, so workers need no access to the files), or instance objects (a list, or a
      ``{name: instance}`` mapping);
    * ``algorithms``: names (default: every registered algorithm of each instance's problem); each runs on the
      instances of its own problem only;
    * ``time_limit``: seconds for the exact models (heuristics take none); ``deterministic_limit``: CP-SAT's
      deterministic time instead, for the CP-SAT models (a run stopped by it is reproducible on any machine and
      load; the others keep ``time_limit``); ``threads``: CP-SAT threads per task (default
      [`task_threads`][optsched.experiments.task_threads]);
      ``options``: ``{algorithm: {option: value}}``;
    * ``keep_results``: a ``result`` column with each [`Result`][optsched.result.Result] (schedules included).

    A run the algorithm refuses (brute force on more than 3 jobs) is a row with ``status="inapplicable"`` and the
    reason in ``error``; a run that fails otherwise, ``status="error"`` and its one line (naming the worker).
    ``table.attrs["tasks"]``: the [`TaskStats`][optsched.experiments.TaskStats] of the run.

    [`optsched.plot.gap_table`][] turns the rows into gaps to the optimum or the best bound.

    ```pycon
    >>> import optsched
    >>> insts = {f"r{k}": optsched.generate("rar", jobs=3, servers=2, seed=k) for k in range(2)}
    >>> t = solve_many(insts, ["ff", "sjf-bco"], executor=SerialExecutor(), progress=False)
    >>> t[["instance", "algorithm", "status"]].values.tolist()
    [['r0', 'ff', 'feasible'], ['r0', 'sjf-bco', 'feasible'], ['r1', 'ff', 'feasible'], ['r1', 'sjf-bco', 'feasible']]

    ```
    """
    from .registry import get_algorithm, list_algorithms

    if isinstance(instances, Mapping):
        named = [(str(k), v) for k, v in instances.items()]
    elif isinstance(instances, (str, os.PathLike)) or (
            isinstance(instances, (list, tuple)) and instances and all(isinstance(x, (str, os.PathLike))
                                                                       for x in instances)):
        named = [(Path(p).stem, p) for p in find_instances(instances)]
    else:
        named = [(str(getattr(x, "name", "") or f"instance-{i}"), x) for i, x in enumerate(instances)]
    if not named:
        raise InstanceError("no instances given", field="instances")
    if len({n for n, _ in named}) != len(named):  # names from files in different folders: keep them apart
        named = [(str(v) if isinstance(v, (str, os.PathLike)) else f"{n}#{i}", v) for i, (n, v) in enumerate(named)]
    for name, v in (("time_limit", time_limit), ("deterministic_limit", deterministic_limit)):
        if v is not None and not (v > 0 and math.isfinite(v)):
            raise InstanceError(f"must be a positive number of seconds, got {v!r}", field=name)
    seed_list = _seeds(seeds)
    named = [(n, _payload(v)) for n, v in named]
    problems = [_problem_of_source(v) for _, v in named]
    if algorithms is None:
        by_problem = {p: list(list_algorithms(p)) for p in set(problems)}
    else:
        algs = [get_algorithm(a) for a in algorithms]  # unknown names stop here, before any work
        by_problem = {p: [a.name for a in algs if a.problem.name == p] for p in set(problems)}
        unused = [a.name for a in algs if a.problem.name not in set(problems)]
        if unused:
            raise InstanceError(f"{', '.join(unused)} solve(s) none of the instances given (their problems: "
                                f"{', '.join(sorted(set(problems)))})", field="algorithms")
    opts = {k: dict(v) for k, v in (options or {}).items()}
    tasks = [{"instance": v, "name": n, "algorithm": a, "seed": s,
              "time_limit": time_limit, "deterministic_limit": deterministic_limit, "threads": threads,
              "options": opts.get(a, {}), "keep": keep_results}
             for (n, v), prob in zip(named, problems) for a in by_problem[prob] for s in seed_list]
    if not tasks:
        raise InstanceError("no algorithm applies to these instances", field="algorithms")
    require_memory(len(tasks), SOLVE_BYTES, "solves", field="instances")
    out, stats = _run_tasks(_solve_task, tasks, executor, workers, progress, "solve", "run")
    rows = []
    for t, (state, r) in zip(tasks, out):
        if state == "ok":
            rows.append(r["row"])
        else:
            alg = get_algorithm(t["algorithm"])
            rows.append({"instance": t["name"], "problem": alg.problem.name, "algorithm": alg.name, "kind": alg.kind,
                         "seed": t["seed"], "status": "error", "error": r})
    table = pd.DataFrame(rows, columns=list(SOLVE_COLUMNS))
    if keep_results:
        table["result"] = [r["result"] if state == "ok" else None for state, r in out]
    table.attrs["tasks"] = stats
    return table


# -- writing a sweep ---------------------------------------------------------------------------------------------
def _cell(key: str, v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if key.endswith("_s") and key != "wall_s":
        return f"{v / 3600:.2f}"
    if key == "mean_utilisation":
        return f"{v:.3f}"
    if key == "wall_s":
        return f"{v:.1f}"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


COLUMNS_MD = (("avg_jct_s", "avg JCT (h)"), ("avg_jct_lb_s", "avg JCT incl. unfinished, lower bound (h)"),
              ("avg_responsiveness_s", "avg responsiveness (h)"), ("mean_utilisation", "mean util."),
              ("preemptions", "preemptions"), ("finished_tracked", "tracked done"), ("wall_s", "wall (s)"))


def frame_markdown(df: pd.DataFrame, digits: int = 3) -> str:
    """A markdown table of any frame (pandas' ``to_markdown`` needs tabulate, which we do not depend on): floats
    with ``digits`` decimals, trailing zeros dropped.

    ```pycon
    >>> print(frame_markdown(pd.DataFrame({"policy": ["fifo", "las"], "avg JCT (h)": [1.5, 1.25]})))
    | policy | avg JCT (h) |
    |---|---|
    | fifo | 1.5 |
    | las | 1.25 |

    ```
    """
    def cell(v: Any) -> str:
        return f"{v:.{digits}f}".rstrip("0").rstrip(".") if isinstance(v, float) else str(v)

    head = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "---|" * len(df.columns)
    return "\n".join([head, rule] + ["| " + " | ".join(cell(v) for v in row) + " |"
                                     for row in df.itertuples(index=False)])


def markdown_table(result: SweepResult, title: str = "", notes: Iterable[str] = ()) -> str:
    """Markdown of a sweep, one row per grid point: hours for times, the mean over seeds with its 95 % interval
    in brackets when there are several seeds."""
    w = result.wide()
    cols = [("load", "load (jobs/h)") if a == "load" else (a, a) for a in result.axes]
    out = [f"# {title}", ""] if title else []
    out += list(notes)
    if notes:
        out.append("")
    heads = [h for _, h in cols] + [h for _, h in COLUMNS_MD] + ["seeds"]
    out.append("| " + " | ".join(heads) + " |")
    out.append("|" + "---|" * len(heads))
    for _, r in w.iterrows():
        cells = [_cell(k, r[k]) for k, _ in cols]
        for key, _h in COLUMNS_MD:
            c = _cell(key, r[key])
            lo, hi = r.get(f"{key}_ci_low"), r.get(f"{key}_ci_high")
            if c != "-" and lo is not None and not pd.isna(lo) and key not in ("finished_tracked", "wall_s"):
                c += f" [{_cell(key, lo)}, {_cell(key, hi)}]"
            cells.append(c)
        cells.append(str(int(r["seeds"])))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _combo(row: Mapping[str, Any], keys: Sequence[str]) -> str:
    return "+".join(str(row[k]) for k in keys) or "run"


def write_sweep(result: SweepResult, out_dir: str | os.PathLike, name: str = "sweep",
                title: str = "Sweep (our simulator)", notes: Iterable[str] = (),
                cdf_load: float | None = None) -> list[Path]:
    """Write ``<name>.md`` (per point, mean and 95 % interval over seeds), ``<name>.csv`` (every run),
    ``<name>_summary.csv`` (the tidy summary), and the plots ``<name>_jct_vs_load.png``,
    ``<name>_responsiveness_vs_load.png`` (the 95 % interval over seeds as error bars) and ``<name>_jct_cdf.png``
    (at ``cdf_load``, default the highest load, every seed's tracked jobs pooled) to ``out_dir``, atomically.
    The plots need a ``load`` axis (or a fixed load); without one only the tables are written."""
    import matplotlib.pyplot as plt

    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    paths = [d / f"{name}.md", d / f"{name}.csv", d / f"{name}_summary.csv"]
    with atomic_open(paths[0], "w", encoding="utf-8") as fh:
        fh.write(markdown_table(result, title, notes))
    with atomic_open(paths[1], "w", encoding="utf-8", newline="") as fh:
        result.runs.to_csv(fh, index=False)
    with atomic_open(paths[2], "w", encoding="utf-8", newline="") as fh:
        result.summary().to_csv(fh, index=False)
    if "load" not in result.axes:
        return paths
    others = [a for a in result.axes if a != "load"]
    # legend labels name only what varies (scheduler), not the placement and admission every line shares
    varying = [a for a in others if a in result.runs.columns and result.runs[a].nunique() > 1]
    others = varying or others[:1]
    seeds = sorted({k[-1] for k in result.cdfs})
    for metric, stem, label in (("avg_jct_s", "jct_vs_load", "average JCT"),
                                ("avg_responsiveness_s", "responsiveness_vs_load", "responsiveness")):
        t = result.summary([metric])
        t["combination"] = [_combo(r, others) for _, r in t.iterrows()]
        fig, ax = plt.subplots(figsize=(6, 4))
        band = ", mean and 95 % interval over seeds" if len(seeds) > 1 else ""
        _plot_vs_load(t, ax=ax, by="combination", title=f"{title}: {label} vs load, seeds {seed_text(seeds)}{band}")
        save_axes(ax, d / f"{name}_{stem}.png")
        paths.append(d / f"{name}_{stem}.png")
    loads = sorted({k[result.axes.index("load")] for k in result.cdfs})
    L = max(loads) if cdf_load is None else cdf_load
    curves: dict[str, list[float]] = {}
    for key, jct in result.cdfs.items():
        point = dict(zip(result.axes, key[:-1]))
        if point["load"] == L and len(jct):
            curves.setdefault(_combo(point, others), []).extend(jct.tolist())
    fig, ax = plt.subplots(figsize=(6, 4))
    _plot_cdfs(curves, ax=ax, title=f"{title}: JCT CDF at {L:g} jobs/h, seeds {seed_text(seeds)}",
               ylabel="fraction of tracked jobs", fontsize=7)
    save_axes(ax, d / f"{name}_jct_cdf.png")
    paths.append(d / f"{name}_jct_cdf.png")
    return paths


def seed_text(seeds: Sequence[int]) -> str:
    """``0-4`` for a run of consecutive seeds, else ``0,3,7``.

    ```pycon
    >>> seed_text([0, 1, 2]), seed_text([1, 5])
    ('0-2', '1,5')

    ```
    """
    if len(seeds) > 2 and list(seeds) == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(map(str, seeds))
