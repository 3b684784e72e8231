"""Placing one mixed-parallelism job on free GPUs (paper 001, section IV-B): the offline placement problem.

An instance is a [`PipelineJob`][optsched.problems.pipeline.PipelineJob], the free GPUs of each server and the
[`Network`][optsched.problems.pipeline.Network] (g GPUs per server, B_inter, B_intra). A solution maps every stage
replica to a server: per server, the GPUs of each stage (a count matrix x). The objective is the per-iteration
time alpha(x) of eq. (7), in ms ([`optsched.evaluators.placement`][]); the algorithms are Heavy-Edge and the
exact models of [`optsched.exact.placement`][], through [`optsched.placement.place`][].

A schedule of this problem has one job, starting at 0, whose ``placement`` gives the GPUs per server and whose
``stage_placement`` gives the per-stage counts on each server.

```pycon
>>> from optsched.algorithms.heavy_edge import fig2_job
>>> inst = PlacementInstance(fig2_job(), {"a": 4, "b": 1, "c": 1})
>>> inst.free_gpus, inst.network.gpus_per_server
(6, 8)
>>> PlacementInstance(fig2_job(), {"a": 2})
Traceback (most recent call last):
...
optsched.errors.InstanceError: free (job 'fig2'): job needs 6 GPUs but only 2 are free

```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import InstanceError
from ..io import Fields, check_format
from ..registry import Problem, register_problem
from ..result import FrozenDict
from .pipeline import Network, PipelineJob, job_from_fields, job_to_json

__all__ = ["FORMAT", "PlacementInstance", "from_dict", "to_dict"]

FORMAT = "optsched/placement@1"


@dataclass(frozen=True)
class PlacementInstance:
    """A job, the free GPUs per server (server id -> count, in the order given) and the network."""

    job: PipelineJob
    free: Mapping[str, int]
    network: Network = field(default_factory=Network.paper_simulation)
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.job, PipelineJob):
            raise InstanceError(f"must be a PipelineJob, got {type(self.job).__name__}", field="job")
        if not isinstance(self.network, Network):
            raise InstanceError(f"must be a Network, got {type(self.network).__name__}", field="network")
        if not isinstance(self.free, Mapping) or not self.free:
            raise InstanceError("must map at least one server id to its free GPUs", field="free", job=self.job.id)
        g = self.network.gpus_per_server
        clean = {}
        for sid, n in self.free.items():
            if not isinstance(sid, str) or not sid:
                raise InstanceError(f"server ids must be non-empty strings, got {sid!r}", field="free",
                                    job=self.job.id)
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise InstanceError(f"must be a non-negative integer, got {n!r}", field=f"free[{sid!r}]",
                                    job=self.job.id)
            if n > g:
                raise InstanceError(f"{n} free GPUs on a server of {g} (network.gpus_per_server)",
                                    field=f"free[{sid!r}]", job=self.job.id)
            clean[sid] = n
        object.__setattr__(self, "free", FrozenDict(clean))
        self.job.check_fits(self.free_gpus)

    @property
    def free_gpus(self) -> int:
        return sum(self.free.values())

    @property
    def id(self) -> str:
        return self.job.id


def from_dict(data: Mapping[str, Any], name: str = "") -> PlacementInstance:
    """Read ``optsched/placement@1``: ``job`` (a pipeline job object), ``free`` (server -> free GPUs) and an
    optional ``network`` (``gpus_per_server``, ``nic_gbps``, ``intra_gbs``; default: paper 001's simulation)."""
    check_format(data, FORMAT)
    top = Fields(data, "").only("format", "name", "network", "free", "job")
    job_raw = top.raw("job")
    jid = job_raw.get("id") if isinstance(job_raw, Mapping) else None
    job = job_from_fields(Fields(job_raw, "job", jid if isinstance(jid, str) else None))
    ff = top.obj("free")
    free = {sid: ff.integer(sid) for sid in ff.data}
    network = Network.paper_simulation()
    if "network" in data:
        nf = top.obj("network").only("gpus_per_server", "nic_gbps", "intra_gbs")
        network = Network.from_gbps(nf.integer("gpus_per_server", 8), nf.number("nic_gbps", 10.0),
                                     nf.number("intra_gbs", 300.0))
    return PlacementInstance(job, free, network, name=str(data.get("name", name) or name))


def to_dict(inst: PlacementInstance) -> dict[str, Any]:
    """The JSON form of ``inst`` (inverse of [`from_dict`][optsched.problems.placement.from_dict])."""
    out: dict[str, Any] = {"format": FORMAT}
    if inst.name:
        out["name"] = inst.name
    net = inst.network
    out["network"] = {"gpus_per_server": net.gpus_per_server, "nic_gbps": net.inter_bandwidth_gbs * 8.0,
                      "intra_gbs": net.intra_bandwidth_gbs}
    out["free"] = dict(inst.free)
    out["job"] = job_to_json(inst.job)
    return out


PROBLEM = register_problem(Problem(
    name="placement",
    title="place one mixed-parallelism job on free GPUs (paper 001, IV-B): minimise alpha, eq. (7)",
    classes=(PlacementInstance,), format=FORMAT, reader=from_dict, writer=to_dict,
    evaluator="optsched.evaluators.placement:evaluate",
    generator="optsched.generators.placement:random_placement_instance",
    generate_cli="optsched.commands.generate:register_placement",
    summary="optsched.commands.generate:summary_placement",
    default_algorithm="heavy-edge",
    algorithms={"heavy-edge": "optsched.placement", "exact-time": "optsched.placement",
                "exact-cut": "optsched.placement"},
))
