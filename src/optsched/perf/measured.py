"""DeepShare's measured contention table (paper 004), shipped with the package (Apache-2.0, ``perf/deepshare/``).

A job's ``model`` is one of the six profiled models (MobileNetV3, GraphSage, FSDP, Transformer-XL, DLRM, MoE)
and its ``gpus`` one of 2, 4, 8; its ``iterations`` count *samples* (``total_samples_trained.csv`` gives one
hour's worth). Rules (digest 004, section 1, the repo's ``update_shared_thp``):

* throughput alone = ``isolated_thp["model,G,N"]`` samples/s for G GPUs over N servers; a placement whose N
  is not tabulated uses the smallest tabulated N above it (more spread, never optimistic), or the largest;
* a single-server placement is not in the table (the RL scheduler cannot express one): we use the fewest
  tabulated servers for that G (our decision, documented in docs/algorithms/blox-engine.md) and no contention;
* a multi-server job j co-located (sharing a server) with multi-server jobs gets
  ``ratio_j = max(min over those neighbours of shared_thp_ratio[j, other], 0.35)`` (pairwise worst case with
  the repo's floor); alone or single-server, ratio 1. Seconds per sample = 1 / (throughput x ratio).

Two options serve the repository's round semantics (``docs/algorithms/rl-contention.md``):

* ``sticky=True``: a running job's ratio never rises while it keeps its placement (the repo's RL inference
  keeps ``min(old, new)``, ``cluster_env.update_shared_thp``); it is fresh again only when the job is placed
  anew (a launch, a restart or a migration). Since ratios can then change only when a job starts, the rates
  are constant between two decisions, as in a round of the repo;
* ``extrapolate=True``: demands of 16 and 32 GPUs (the paper's "up to 32", never measured) use the 8-GPU row of
  the same server count, throughput scaled by G / 8 (linear scaling, our assumption).

[`MeasuredPerf.ratio_of`][optsched.perf.measured.MeasuredPerf.ratio_of] gives the ratio a running job has now (the
threshold preemption and the
observations read it); [`MeasuredPerf.fresh_ratios`][optsched.perf.measured.MeasuredPerf.fresh_ratios] the ratios of any
configuration (policies predict
with it, the exact model of [`optsched.exact.contention`][] uses it).

The tables are read from ``folder``; by default from ``deepshare-contention/`` in the data folder of
[`optsched.data`][] when there is one (a checkout reads ``../shared/data`` in place), else from the copy shipped
inside the package (``optsched/perf/deepshare/``, Apache-2.0, its license beside it), so an installed wheel needs
no data folder. A toy pair of tables in the same
layout:

```pycon
>>> import os, tempfile
>>> from types import SimpleNamespace as NS
>>> d = tempfile.mkdtemp()
>>> _ = open(os.path.join(d, "isolated_thp.csv"), "w").write(',thp\\n"MoE,4,2",50.0\\n"MoE,4,4",40.0\\n')
>>> _ = open(os.path.join(d, "shared_thp_ratio.csv"), "w").write(',"MoE,4,2"\\n"MoE,4,2",0.5\\n')
>>> m = MeasuredPerf(d)
>>> j = NS(id="a", gpus=4, iteration_time_s=1.0, spec=None, model="MoE")
>>> two = NS(servers=(0, 1), counts=(2, 2), stages=None)
>>> 1 / m.alone_time_s(j, two), 1 / m.alone_time_s(j, NS(servers=(0,), counts=(4,), stages=None))
(50.0, 50.0)
>>> m.fresh_ratios({"a": (("MoE", 4, 2), (0, 1)), "b": (("MoE", 4, 2), (1, 2)), "c": (("MoE", 4, 2), (3,))})
{'a': 0.5, 'b': 0.5, 'c': 1.0}

```
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..data import data_path, find_data_file, packaged_folder
from ..errors import InstanceError
from ..io import read_text
from ..problems.contention import DEMANDS, LEGAL_SPLITS, MODELS, MULTI_SPLITS
from .base import ColocationLike, JobLike, PerfModel, PlacementLike, RunningJobLike, held_gpus

RATIO_FLOOR = 0.35

Key = tuple[str, int, int]


def _key(text: str) -> Key:
    model, g, n = text.split(",")
    return model.strip(), int(g), int(n)


def packaged_tables() -> Path | None:
    """The folder of DeepShare's tables shipped with the package (None if a build left them out)."""
    return packaged_folder("deepshare-contention")


def _tables_folder(folder: str | None) -> Path:
    """``folder``; else the data folder's tables (read in place); else the package's copy; else one error naming
    the command that fetches them."""
    if folder is not None:
        return Path(folder)
    found = find_data_file("deepshare-contention", "isolated_thp.csv")
    if found is not None:
        return found.parent
    return packaged_tables() or data_path("deepshare-contention", "isolated_thp.csv").parent


def _tables(folder: str | None) -> tuple[dict, dict, dict]:
    return _read_tables(str(_tables_folder(folder)))


@functools.lru_cache(maxsize=8)
def _read_tables(folder: str) -> tuple[dict, dict, dict]:
    base = Path(folder)
    rows = list(csv.reader(read_text(base / "isolated_thp.csv", encoding="utf-8-sig").splitlines()))
    isolated = {_key(r[0]): float(r[1]) for r in rows[1:] if r}
    rows = list(csv.reader(read_text(base / "shared_thp_ratio.csv", encoding="utf-8-sig").splitlines()))
    cols = [_key(c) for c in rows[0][1:]]
    ratio = {}
    for r in rows[1:]:
        if r:
            target = _key(r[0])
            for c, v in zip(cols, r[1:]):
                ratio[(target, c)] = float(v)
    samples: dict[tuple[str, int], float] = {}
    path = base / "total_samples_trained.csv"
    if path.exists():
        rows = list(csv.reader(read_text(path, encoding="utf-8-sig").splitlines()))
        demands = [int(x) for x in rows[0][1:]]
        for r in rows[1:]:
            if r:
                for g, v in zip(demands, r[1:]):
                    samples[(r[0].strip(), g)] = float(v)
    return isolated, ratio, samples


def load_tables(folder=None) -> tuple[dict, dict]:
    """(isolated throughput by key, ratio by (target key, neighbour key)) from the shared CSV files."""
    isolated, ratio, _ = _tables(None if folder is None else str(folder))
    return dict(isolated), dict(ratio)


def hour_samples(model: str, gpus: int, folder=None) -> float:
    """Samples of one isolated hour of ``model`` on ``gpus`` GPUs (``total_samples_trained.csv``; demands
    above 8 GPUs: 3600 s x the mean multi-server throughput of the 8-GPU rows x G / 8, our extrapolation).

    ```pycon
    >>> round(hour_samples("MobileNetV3", 4) / 3600, 2)      # the mean of the 2- and 4-server rows
    1277.84

    ```
    """
    isolated, _, samples = _tables(None if folder is None else str(folder))
    if (model, gpus) in samples:
        return samples[(model, gpus)]
    base, scale = (gpus, 1.0) if gpus <= 8 else (8, gpus / 8)
    thp = [isolated[(model, base, n)] for n, _ in MULTI_SPLITS.get(base, ()) if (model, base, n) in isolated]
    if not thp or (gpus > 8 and gpus & (gpus - 1)):
        raise InstanceError(f"no measured profile for model {model!r} on {gpus} GPUs", field="gpus")
    return 3600.0 * scale * sum(thp) / len(thp)


class MeasuredPerf(PerfModel):
    """Isolated throughput of (model, GPUs, servers) with the pairwise worst co-location ratio (module docstring).

    ``floor``: the repo's safety floor on a ratio (0.35); ``sticky``: a running job's ratio never rises until
    it is placed anew; ``extrapolate``: 16- and 32-GPU demands from the 8-GPU rows.
    """

    name = "measured"
    colocation_aware = True

    def __init__(self, folder=None, floor: float = RATIO_FLOOR, sticky: bool = False, extrapolate: bool = False):
        if isinstance(floor, bool) or not isinstance(floor, (int, float)) or not 0 <= floor <= 1:
            raise InstanceError(f"must be a number in [0, 1], got {floor!r}", field="floor")
        self.folder = None if folder is None else str(folder)
        self.isolated, self.ratio, _ = _tables(self.folder)
        self.floor = float(floor)
        self.sticky, self.extrapolate = bool(sticky), bool(extrapolate)
        self.nodes: dict[tuple[str, int], list[int]] = {}
        for model, g, n in self.isolated:
            self.nodes.setdefault((model, g), []).append(n)
        for v in self.nodes.values():
            v.sort()
        self._now: dict[str, tuple[Any, float]] = {}  # job id -> (placement token, ratio now)

    def __deepcopy__(self, memo: dict) -> MeasuredPerf:
        # the tables are read-only and shared; only the ratios of the running jobs are state
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        new.__dict__.update(self.__dict__)
        new._now = dict(self._now)
        return new

    def describe(self) -> dict:
        return {"name": self.name, "floor": self.floor, "sticky": self.sticky, "extrapolate": self.extrapolate}

    # -- keys and throughput -----------------------------------------------------------------------------------
    def table_key(self, model: str, gpus: int, servers: int, job: str | None = None) -> tuple[Key, float]:
        """(the table row, throughput scale) of ``model`` on ``gpus`` GPUs over ``servers`` servers."""
        scale = 1.0
        g = gpus
        if g > 8 and self.extrapolate and not g & (g - 1):
            g, scale = 8, gpus / 8
        opts = self.nodes.get((model, g))
        if not opts:
            known = sorted({m for m, _ in self.nodes})
            raise InstanceError(f"no measured profile for model {model!r} on {gpus} GPUs "
                                f"(models {known}, GPUs 2, 4, 8)", field="model", job=job)
        above = [x for x in opts if x >= servers]
        return (model, g, above[0] if above else opts[-1]), scale

    def key(self, job: JobLike, placement: PlacementLike) -> tuple[str, int, int]:
        """The table row of ``job`` on ``placement``: (model, GPUs held, tabulated server count)."""
        return self.table_key(job.model, held_gpus(placement), len(placement.servers), job.id)[0]

    def throughput(self, model: str, gpus: int, servers: int) -> float:
        """Isolated samples/s of ``model`` on ``gpus`` GPUs over ``servers`` servers."""
        k, scale = self.table_key(model, gpus, servers)
        return self.isolated[k] * scale

    def alone_time_s(self, job: JobLike, placement: PlacementLike) -> float:
        k, scale = self.table_key(job.model, held_gpus(placement), len(placement.servers), job.id)
        return 1.0 / (self.isolated[k] * scale)

    # -- contention --------------------------------------------------------------------------------------------
    def pair_ratio(self, target: Key, other: Key) -> float:
        """Throughput ratio of ``target`` beside ``other`` (both table rows), floored."""
        return max(self.ratio[(target, other)], self.floor)

    def fresh_ratios(self, entries: Mapping[str, tuple[Key, Sequence[int]]]) -> dict[str, float]:
        """Ratio of every job of a configuration ``{id: (table row, servers)}``: the minimum over the multi-server
        jobs sharing a server with it (single-server jobs neither suffer nor cause contention), floored."""
        split = {i: (k, set(s)) for i, (k, s) in entries.items() if len(s) > 1}
        out = {}
        for i, (k, _) in entries.items():
            r = 1.0
            if i in split:
                for o, (ko, so) in split.items():
                    if o != i and so & split[i][1]:
                        r = min(r, self.pair_ratio(k, ko))
            out[i] = r
        return out

    def ratio_of(self, job_id: str) -> float:
        """The ratio a running job had at the last recomputation (1.0 for a job the model has not seen)."""
        e = self._now.get(job_id)
        return 1.0 if e is None else e[1]

    def iteration_times_s(self, running: Sequence[RunningJobLike], cluster: ColocationLike) -> Mapping[str, float]:
        entries = {}
        scales = {}
        for j in running:
            k, scale = self.table_key(j.model, held_gpus(j.placement), len(j.placement.servers), j.id)
            entries[j.id] = (k, j.placement.servers)
            scales[j.id] = scale
        fresh = self.fresh_ratios(entries)
        out, now = {}, {}
        for j in running:
            r = fresh[j.id]
            # a placement token: a new launch, restart or move of the job gives a new one
            token = (getattr(j, "launches", None), getattr(j, "migrations", None), j.placement)
            if self.sticky:
                old = self._now.get(j.id)
                if old is not None and old[0] == token:
                    r = min(r, old[1])
            now[j.id] = (token, r)
            out[j.id] = 1.0 / (self.isolated[entries[j.id][0]] * scales[j.id] * r)
        self._now = now
        return out


__all__ = ["DEMANDS", "LEGAL_SPLITS", "MODELS", "MULTI_SPLITS", "RATIO_FLOOR", "MeasuredPerf", "hour_samples",
           "load_tables", "packaged_tables"]
