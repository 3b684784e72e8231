"""DeepShare's measured contention table (paper 004), read in place from ``deepshare-contention/``.

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

The tables are read from ``folder`` (default: ``deepshare-contention/`` in the data folder of
:mod:`optsched.data`). A toy pair of tables in the same layout:

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
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Mapping, Sequence

from ..data import data_path
from ..errors import InstanceError
from ..io import read_text
from .base import ColocationLike, JobLike, PerfModel, PlacementLike, RunningJobLike, held_gpus

RATIO_FLOOR = 0.35


def _key(text: str) -> tuple[str, int, int]:
    model, g, n = text.split(",")
    return model.strip(), int(g), int(n)


def load_tables(folder=None) -> tuple[dict, dict]:
    """(isolated throughput by key, ratio by (target key, neighbour key)) from the shared CSV files."""
    base = Path(folder) if folder is not None else data_path("deepshare-contention")
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
    return isolated, ratio


class MeasuredPerf(PerfModel):
    """Isolated throughput of (model, GPUs, servers) with the pairwise worst co-location ratio (module docstring)."""

    name = "measured"
    colocation_aware = True

    def __init__(self, folder=None, floor: float = RATIO_FLOOR):
        self.isolated, self.ratio = load_tables(folder)
        self.floor = float(floor)
        self.nodes: dict[tuple[str, int], list[int]] = {}
        for model, g, n in self.isolated:
            self.nodes.setdefault((model, g), []).append(n)
        for v in self.nodes.values():
            v.sort()

    def key(self, job: JobLike, placement: PlacementLike) -> tuple[str, int, int]:
        """The table row of ``job`` on ``placement``: (model, GPUs held, tabulated server count)."""
        g = held_gpus(placement)
        opts = self.nodes.get((job.model, g))
        if not opts:
            known = sorted({m for m, _ in self.nodes})
            raise InstanceError(f"no measured profile for model {job.model!r} on {g} GPUs "
                                f"(models {known}, GPUs 2, 4, 8)", field="model", job=job.id)
        n = len(placement.servers)
        above = [x for x in opts if x >= n]
        return job.model, g, (above[0] if above else opts[-1])

    def alone_time_s(self, job: JobLike, placement: PlacementLike) -> float:
        return 1.0 / self.isolated[self.key(job, placement)]

    def iteration_times_s(self, running: Sequence[RunningJobLike], cluster: ColocationLike) -> Mapping[str, float]:
        split = {j.id: j for j in running if len(j.placement.servers) > 1}
        keys = {jid: self.key(j, j.placement) for jid, j in split.items()}
        out = {}
        for j in running:
            t = self.alone_time_s(j, j.placement)
            if j.id in split:
                neighbours = cluster.colocated(j.placement, exclude=j.id) & split.keys()
                if neighbours:
                    worst = min(self.ratio[(keys[j.id], keys[o])] for o in neighbours)
                    t /= max(worst, self.floor)
            out[j.id] = t
        return out
