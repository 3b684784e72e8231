"""Heterogeneous GPUs and GPU-count scaling: our throughput table per model and GPU type, and its model.

**Every number in this module is our estimate, not a measurement.** The table gives, per model, the speed of
one GPU of each type relative to a V100 (the type the simulator's profiled iteration times refer to: Blox's
default cluster is p3.8xlarge, 4 x V100), and a communication coefficient ``alpha`` for data-parallel scaling:

* Type speeds. Public peak figures bracket them (NVIDIA datasheets: one GK210 die of a K80 board, 4.37 TFLOPS
  FP32 at boost and 240 GB/s; P100 PCIe 9.3 TFLOPS and 732 GB/s; V100 SXM2 15.7 TFLOPS and 900 GB/s, plus
  tensor cores): a K80 die has about 0.28 of a V100's FP32 peak and 0.27 of its memory bandwidth, a P100 about
  0.59 and 0.81. We put compute-bound convolutional and attention models below those ratios (the V100's tensor
  cores widen the gap), memory-bound recurrent models near the bandwidth ratio, and CPU- or embedding-bound
  models (A3C, Recoder) above them. The one fact we take from Gavel (Narayanan et al., OSDI 2020, section 2 and
  Fig. 1) is qualitative: a newer GPU's speed-up differs widely from model to model, which is what makes a
  heterogeneity-aware allocation pay off. Gavel's measured profiles (stanford-futuredata/gavel,
  ``scheduler/oracle_throughputs*.json``) are not copied here.
* Scaling. ``speedup(g) = g / (1 + alpha (g - 1))`` relative to one GPU (a fixed share ``alpha`` of an
  iteration's single-GPU time per extra GPU goes to gradient exchange); our ``alpha`` per model, small for
  compute-heavy convolutional models, larger for models with big embeddings or small batches.

[`HeteroPerf`][optsched.perf.hetero.HeteroPerf] turns the table into a performance model (``perf="hetero"``). A job's
profiled
``iteration_time_s`` is its time on its requested ``gpus`` V100s on one server (the simulator's convention); on a
placement holding ``h`` GPUs of type ``t`` it is::

    iteration_time_s * speedup(gpus) / speedup(h) / speed(model, t)   (x cross_server_factor if split)

so a job on the GPUs it asked for, of the reference type, runs exactly as under
[`ConstantPerf`][optsched.perf.constant.ConstantPerf] (same 1.25 cross-server factor): the table only matters on other
GPU types and for elastic policies (Optimus) that hand out other GPU counts. A placement over several types
(none of our placements makes one) runs at the slowest type. Untyped servers (``"GPU"``) count as the reference.

```pycon
>>> from types import SimpleNamespace as NS
>>> m = HeteroPerf(server_types=("V100", "K80"))
>>> j = NS(id="a", gpus=1, iteration_time_s=1.0, spec=None, model="ResNet-50/ImageNet")
>>> m.alone_time_s(j, NS(servers=(0,), counts=(1,))), m.alone_time_s(j, NS(servers=(1,), counts=(1,)))
(1.0, 10.0)
>>> round(m.alone_time_s(j, NS(servers=(0,), counts=(4,))), 4)    # 4 GPUs: speed-up 4 / 1.15
0.2875

```
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from ..cluster import DEFAULT_GPU_TYPE, Cluster
from ..errors import InstanceError
from .base import JobLike, PerfModel, PlacementLike

REFERENCE_TYPE = "V100"
GPU_TYPES = ("V100", "P100", "K80")

# OUR ESTIMATES (module docstring): speed of one GPU of each type relative to one V100, per model (Blox Table 2's
# models, plus a default row for any other model name)
TYPE_SPEED: dict[str, dict[str, float]] = {
    "ResNet-18/CIFAR-10": {"V100": 1.0, "P100": 0.55, "K80": 0.20},
    "CycleGAN/monet2photo": {"V100": 1.0, "P100": 0.50, "K80": 0.15},
    "ResNet-50/ImageNet": {"V100": 1.0, "P100": 0.40, "K80": 0.10},
    "LSTM/WikiText-2": {"V100": 1.0, "P100": 0.70, "K80": 0.30},
    "Recoder/ML-20M": {"V100": 1.0, "P100": 0.80, "K80": 0.45},
    "Transformer/Multi30K": {"V100": 1.0, "P100": 0.45, "K80": 0.12},
    "A3C/Pong": {"V100": 1.0, "P100": 0.85, "K80": 0.60},
    "default": {"V100": 1.0, "P100": 0.60, "K80": 0.25},
}

# OUR ESTIMATES: data-parallel communication coefficient (speedup(g) = g / (1 + alpha (g - 1)))
SCALING_ALPHA: dict[str, float] = {
    "ResNet-18/CIFAR-10": 0.10,
    "CycleGAN/monet2photo": 0.15,
    "ResNet-50/ImageNet": 0.05,
    "LSTM/WikiText-2": 0.25,
    "Recoder/ML-20M": 0.30,
    "Transformer/Multi30K": 0.10,
    "A3C/Pong": 0.50,
    "default": 0.15,
}


def speedup(g: float, alpha: float) -> float:
    """Throughput on ``g`` GPUs relative to one GPU: ``g / (1 + alpha (g - 1))`` (0 for g <= 0).

    ```pycon
    >>> speedup(1, 0.3), speedup(4, 0.0), round(speedup(8, 0.5), 3)
    (1.0, 4.0, 1.778)

    ```
    """
    if g <= 0:
        return 0.0
    return g / (1.0 + alpha * (g - 1.0))


class HeteroPerf(PerfModel):
    """Per-type speed and GPU-count scaling from the table (module docstring).

    ``server_types``: the GPU type of every server index (``HeteroPerf.for_cluster(cluster)`` takes them from a
    cluster); None means every server is of the reference type (a homogeneous cluster). ``speeds`` and
    ``alpha`` replace the tables (same layout; a model missing from them uses the ``"default"`` row);
    ``reference`` is the type the profiled iteration times were measured on.
    """

    name = "hetero"
    scales_with_gpus = True  # elastic policies (Optimus) may rely on the GPU count changing the speed

    def __init__(self, server_types: Sequence[str] | None = None, *, speeds: Mapping[str, Mapping[str, float]]
                 | None = None, alpha: Mapping[str, float] | None = None, cross_server_factor: float = 1.25,
                 reference: str = REFERENCE_TYPE):
        self.speeds = {m: dict(row) for m, row in (TYPE_SPEED if speeds is None else speeds).items()}
        self.alpha = dict(SCALING_ALPHA if alpha is None else alpha)
        if "default" not in self.speeds or "default" not in self.alpha:
            raise InstanceError("the tables need a 'default' row", field="speeds")
        for m, row in self.speeds.items():
            for t, v in row.items():
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not (v > 0 and math.isfinite(v)):
                    raise InstanceError(f"speed of {m!r} on {t!r} must be a positive number, got {v!r}",
                                        field="speeds")
        for m, a in self.alpha.items():
            if isinstance(a, bool) or not isinstance(a, (int, float)) or not 0 <= a <= 1:
                raise InstanceError(f"alpha of {m!r} must be in [0, 1], got {a!r}", field="alpha")
        if not isinstance(cross_server_factor, (int, float)) or not cross_server_factor >= 1.0:
            raise InstanceError(f"must be a number >= 1, got {cross_server_factor!r}", field="cross_server_factor")
        self.cross_server_factor = float(cross_server_factor)
        self.reference = reference
        self.server_types = None if server_types is None else tuple(server_types)
        if self.server_types is not None:
            known = set().union(*(row.keys() for row in self.speeds.values())) | {DEFAULT_GPU_TYPE}
            unknown = sorted(set(self.server_types) - known)
            if unknown:
                raise InstanceError(f"GPU type(s) {unknown} have no speed in the table (known: "
                                    f"{', '.join(sorted(known))})", field="server_types")

    @classmethod
    def for_cluster(cls, cluster: Cluster, **kw) -> HeteroPerf:
        """The model bound to ``cluster``'s server types.

        ```pycon
        >>> from optsched.cluster import parse_cluster
        >>> HeteroPerf.for_cluster(parse_cluster("V100:1x4,K80:1x4")).server_types
        ('V100', 'K80')

        ```
        """
        return cls([s.gpu_type for s in cluster.servers], **kw)

    def type_speed(self, model: str, gpu_type: str) -> float:
        """Speed of one GPU of ``gpu_type`` relative to the reference type, for ``model``."""
        if gpu_type == DEFAULT_GPU_TYPE:
            gpu_type = self.reference
        row = self.speeds.get(model) or self.speeds["default"]
        if gpu_type not in row:
            row = self.speeds["default"]
        try:
            return float(row[gpu_type]) / float(row.get(self.reference, 1.0))
        except KeyError:
            raise InstanceError(f"no speed for GPU type {gpu_type!r} (model {model!r})", field="gpu_type") from None

    def scaling(self, model: str) -> float:
        return float(self.alpha.get(model, self.alpha["default"]))

    def time_on(self, job: JobLike, gpu_type: str, gpus: int, servers: int = 1) -> float:
        """Seconds per iteration of ``job`` on ``gpus`` GPUs of ``gpu_type`` spread over ``servers`` servers."""
        a = self.scaling(job.model)
        t = job.iteration_time_s * speedup(job.gpus, a) / speedup(gpus, a) / self.type_speed(job.model, gpu_type)
        return t * self.cross_server_factor if servers > 1 else t

    def _type_of(self, placement: PlacementLike) -> str:
        if self.server_types is None:
            return self.reference
        try:
            types = {self.server_types[s] for s in placement.servers}
        except IndexError:
            raise InstanceError(f"placement on server {max(placement.servers)} but the model knows "
                                f"{len(self.server_types)} servers: bind it with HeteroPerf.for_cluster",
                                field="perf") from None
        if len(types) == 1:
            return types.pop()
        return min(types, key=lambda t: self.type_speed("default", t))  # never made by our placements

    def alone_time_s(self, job: JobLike, placement: PlacementLike) -> float:
        return self.time_on(job, self._type_of(placement), sum(placement.counts), len(placement.servers))

    def throughput(self, job: JobLike, gpu_type: str, gpus: int | None = None) -> float:
        """Iterations per second of ``job`` on ``gpus`` (default: its request) GPUs of ``gpu_type``, one server."""
        return 1.0 / self.time_on(job, gpu_type, job.gpus if gpus is None else gpus)

    def describe(self) -> dict:
        return {"name": self.name, "reference": self.reference, "cross_server_factor": self.cross_server_factor,
                "server_types": None if self.server_types is None else sorted(set(self.server_types)),
                "table": "optsched.perf.hetero (our estimates)"}


__all__ = ["GPU_TYPES", "REFERENCE_TYPE", "SCALING_ALPHA", "TYPE_SPEED", "HeteroPerf", "speedup"]
