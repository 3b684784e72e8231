"""Servers, GPUs and bandwidths: the cluster description shared by every problem.

Units are those of the problem that uses the cluster (paper 000: data units per time slot; paper 001:
GB and GB/s); each problem module documents its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from .errors import InstanceError
from .limits import require_memory

SERVER_BYTES = 400  # a server's share of memory across the cluster, its state and per-server arrays (estimate)


@dataclass(frozen=True)
class Server:
    """One server with ``gpus`` identical GPUs."""

    id: str
    gpus: int


@dataclass(frozen=True)
class Cluster:
    """A set of servers and the two bandwidth classes of the papers.

    ``intra_bandwidth`` is the bandwidth between GPUs of one server (NVLink / PCIe), ``inter_bandwidth``
    the NIC bandwidth between servers.

    >>> c = Cluster.homogeneous(2, 4, intra_bandwidth=300.0, inter_bandwidth=1.25)
    >>> c.total_gpus, c.server_ids
    (8, ('s0', 's1'))
    """

    servers: tuple[Server, ...]
    intra_bandwidth: float = 1.0
    inter_bandwidth: float = 1.0

    def __post_init__(self) -> None:
        servers = tuple(self.servers)
        object.__setattr__(self, "servers", servers)
        if not servers:
            raise InstanceError("must list at least one server", field="cluster.servers")
        seen: set[str] = set()
        for i, s in enumerate(servers):
            if not isinstance(s.id, str) or not s.id:
                raise InstanceError("must be a non-empty string", field=f"cluster.servers[{i}].id")
            if s.id in seen:
                raise InstanceError(f"duplicate server id {s.id!r}", field=f"cluster.servers[{i}].id")
            seen.add(s.id)
            if isinstance(s.gpus, bool) or not isinstance(s.gpus, int) or s.gpus <= 0:
                raise InstanceError(
                    f"must be a positive integer, got {s.gpus!r}", field=f"cluster.servers[{i}].gpus"
                )
        for name in ("intra_bandwidth", "inter_bandwidth"):
            v = getattr(self, name)
            if not _is_number(v) or v <= 0:
                raise InstanceError(f"must be a positive number, got {v!r}", field=f"cluster.{name}")

    @classmethod
    def homogeneous(cls, n_servers: int, gpus_per_server: int, **bandwidths: float) -> Cluster:
        """``n_servers`` servers ``s0..s{n-1}`` with ``gpus_per_server`` GPUs each."""
        require_memory(n_servers, SERVER_BYTES, "servers", field="servers")
        return cls(tuple(Server(f"s{i}", gpus_per_server) for i in range(n_servers)), **bandwidths)

    @property
    def server_ids(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.servers)

    @property
    def capacity(self) -> dict[str, int]:
        """Server id -> number of GPUs."""
        return {s.id: s.gpus for s in self.servers}

    @property
    def total_gpus(self) -> int:
        return sum(s.gpus for s in self.servers)

    @property
    def max_server_gpus(self) -> int:
        return max(s.gpus for s in self.servers)

    def min_servers_for(self, gpus: int) -> int:
        """Fewest servers whose GPUs add up to at least ``gpus`` (largest servers first)."""
        total = 0
        for n, cap in enumerate(sorted((s.gpus for s in self.servers), reverse=True), start=1):
            total += cap
            if total >= gpus:
                return n
        raise InstanceError(f"needs {gpus} GPUs but the cluster has {self.total_gpus}")

    def check_placement(self, placement: Mapping[str, int], *, field: str, job: str | None = None) -> None:
        """Raise unless ``placement`` maps known servers to GPU counts within each server's size."""
        cap = self.capacity
        for sid, n in placement.items():
            if sid not in cap:
                raise InstanceError(f"unknown server {sid!r}", field=field, job=job)
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise InstanceError(f"GPU count on {sid!r} must be a non-negative integer, got {n!r}",
                                    field=field, job=job)
            if n > cap[sid]:
                raise InstanceError(f"{n} GPUs on {sid!r}, which has {cap[sid]}", field=field, job=job)


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and v not in (float("inf"), float("-inf"))


def servers_from(pairs: Iterable[tuple[str, int]]) -> tuple[Server, ...]:
    """Build servers from ``(id, gpus)`` pairs."""
    return tuple(Server(sid, g) for sid, g in pairs)


def as_cluster(spec: Cluster | tuple[int, int] | list[int], *, homogeneous: str | None = None) -> Cluster:
    """A :class:`Cluster` given as itself or as ``(servers, gpus_per_server)``; with ``homogeneous`` (the reason,
    e.g. "paper 001's model"), every server must have the same number of GPUs.

    >>> as_cluster((2, 4)).total_gpus
    8
    >>> as_cluster(Cluster((Server("a", 4), Server("b", 2))), homogeneous="paper 001's model")
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: cluster: paper 001's model needs servers of one size, got [2, 4]
    """
    if isinstance(spec, Cluster):
        cluster = spec
    else:
        try:
            servers, gpus = spec
        except (TypeError, ValueError):
            raise InstanceError(f"must be a Cluster or (servers, gpus_per_server), got {spec!r}",
                                field="cluster") from None
        for name, v in (("servers", servers), ("gpus_per_server", gpus)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InstanceError(f"must be a positive integer, got {v!r}", field=name)
        cluster = Cluster.homogeneous(servers, gpus)
    sizes = sorted({s.gpus for s in cluster.servers})
    if homogeneous is not None and len(sizes) != 1:
        raise InstanceError(f"{homogeneous} needs servers of one size, got {sizes}", field="cluster")
    return cluster
