"""Servers, GPUs and bandwidths: the cluster description shared by every problem.

Units are those of the problem that uses the cluster (paper 000: data units per time slot; paper 001:
GB and GB/s); each problem module documents its own.

Every server has a GPU type (``Server.gpu_type``, default [`DEFAULT_GPU_TYPE`][optsched.cluster.DEFAULT_GPU_TYPE],
``"GPU"``: one untyped kind,
which keeps every existing cluster homogeneous); heterogeneous clusters (Gavel's V100 / P100 / K80) give servers
different types, e.g. with [`Cluster.typed`][optsched.cluster.Cluster.typed] or
[`parse_cluster`][optsched.cluster.parse_cluster]:

```pycon
>>> c = parse_cluster("V100:2x4,K80:1x8")
>>> c.gpu_types, c.gpus_by_type, c.server_ids
(('V100', 'K80'), {'V100': 8, 'K80': 8}, ('v100-0', 'v100-1', 'k80-0'))

```
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, Mapping

from .errors import InstanceError
from .limits import require_memory

SERVER_BYTES = 400  # a server's share of memory across the cluster, its state and per-server arrays (estimate)


DEFAULT_GPU_TYPE = "GPU"  # the one GPU type of a cluster that names none (every existing cluster)


@dataclass(frozen=True)
class Server:
    """One server with ``gpus`` identical GPUs of type ``gpu_type`` (any non-empty name, e.g. ``"V100"``).

    ```pycon
    >>> Server("s0", 4).gpu_type, Server("s1", 8, "K80").gpu_type
    ('GPU', 'K80')

    ```
    """

    id: str
    gpus: int
    gpu_type: str = DEFAULT_GPU_TYPE


@dataclass(frozen=True)
class Cluster:
    """A set of servers and the two bandwidth classes of the papers.

    ``intra_bandwidth`` is the bandwidth between GPUs of one server (NVLink / PCIe), ``inter_bandwidth``
    the NIC bandwidth between servers.

    ```pycon
    >>> c = Cluster.homogeneous(2, 4, intra_bandwidth=300.0, inter_bandwidth=1.25)
    >>> c.total_gpus, c.server_ids
    (8, ('s0', 's1'))

    ```
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
            if not isinstance(s.gpu_type, str) or not s.gpu_type.strip() or "," in s.gpu_type:
                raise InstanceError(f"must be a non-empty name without commas, got {s.gpu_type!r}",
                                    field=f"cluster.servers[{i}].gpu_type")
        for name in ("intra_bandwidth", "inter_bandwidth"):
            v = getattr(self, name)
            if not _is_number(v) or v <= 0:
                raise InstanceError(f"must be a positive number, got {v!r}", field=f"cluster.{name}")

    @classmethod
    def homogeneous(cls, n_servers: int, gpus_per_server: int, **bandwidths: float) -> Cluster:
        """``n_servers`` servers ``s0..s{n-1}`` with ``gpus_per_server`` GPUs each."""
        require_memory(n_servers, SERVER_BYTES, "servers", field="servers")
        return cls(tuple(Server(f"s{i}", gpus_per_server) for i in range(n_servers)), **bandwidths)

    @classmethod
    def typed(cls, spec: Mapping[str, tuple[int, int]], **bandwidths: float) -> Cluster:
        """A heterogeneous cluster from ``{gpu_type: (servers, gpus_per_server)}``, in the mapping's order;
        server ids are ``<type in lower case>-<i>``.

        ```pycon
        >>> Cluster.typed({"V100": (1, 4), "P100": (2, 2)}).capacity
        {'v100-0': 4, 'p100-0': 2, 'p100-1': 2}

        ```
        """
        if not isinstance(spec, Mapping) or not spec:
            raise InstanceError(f"must map GPU types to (servers, gpus_per_server), got {spec!r}", field="cluster")
        servers: list[Server] = []
        for t, pair in spec.items():
            try:
                n, g = pair
            except (TypeError, ValueError):
                raise InstanceError(f"must be (servers, gpus_per_server), got {pair!r}",
                                    field=f"cluster.{t}") from None
            for name, v in (("servers", n), ("gpus_per_server", g)):
                if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                    raise InstanceError(f"must be a positive integer, got {v!r}", field=f"cluster.{t}.{name}")
            require_memory(len(servers) + n, SERVER_BYTES, "servers", field="servers")
            servers += [Server(f"{str(t).lower()}-{i}", g, t) for i in range(n)]
        return cls(tuple(servers), **bandwidths)

    @cached_property
    def gpu_types(self) -> tuple[str, ...]:
        """The GPU types present, in the order they first appear among the servers."""
        return tuple(dict.fromkeys(s.gpu_type for s in self.servers))

    @property
    def gpus_by_type(self) -> dict[str, int]:
        """GPU type -> number of GPUs of that type."""
        out: dict[str, int] = {}
        for s in self.servers:
            out[s.gpu_type] = out.get(s.gpu_type, 0) + s.gpus
        return out

    @property
    def heterogeneous(self) -> bool:
        """True if the servers have more than one GPU type."""
        return len(self.gpu_types) > 1

    @cached_property
    def server_ids(self) -> tuple[str, ...]:
        """The server ids in cluster order (computed once: the cluster is frozen, and packers and evaluators read
        it per job)."""
        return tuple(s.id for s in self.servers)

    @property
    def capacity(self) -> dict[str, int]:
        """Server id -> number of GPUs."""
        return {s.id: s.gpus for s in self.servers}

    @cached_property
    def total_gpus(self) -> int:
        """Number of GPUs in the cluster (computed once, like ``server_ids``: simulators read it per job)."""
        return sum(s.gpus for s in self.servers)

    @cached_property
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
        check_placement_in(self.capacity, placement, field=field, job=job)


def check_placement_in(cap: Mapping[str, int], placement: Mapping[str, int], *, field: str, job: str | None = None,
                       error: type[InstanceError] = InstanceError) -> None:
    """[`Cluster.check_placement`][optsched.cluster.Cluster.check_placement] against a server id -> GPUs mapping built
    once (a schedule checker calls
    it per job), raising ``error`` (e.g. [`ScheduleError`][optsched.errors.ScheduleError]).

    ```pycon
    >>> check_placement_in({"s0": 2}, {"s0": 3}, field="placement", job="a")
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: placement (job 'a'): 3 GPUs on 's0', which has 2

    ```
    """
    for sid, n in placement.items():
        if sid not in cap:
            raise error(f"unknown server {sid!r}", field=field, job=job)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise error(f"GPU count on {sid!r} must be a non-negative integer, got {n!r}", field=field, job=job)
        if n > cap[sid]:
            raise error(f"{n} GPUs on {sid!r}, which has {cap[sid]}", field=field, job=job)


_INFINITIES = (float("inf"), float("-inf"))


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and v not in _INFINITIES


def servers_from(pairs: Iterable[tuple[str, int]]) -> tuple[Server, ...]:
    """Build servers from ``(id, gpus)`` pairs."""
    return tuple(Server(sid, g) for sid, g in pairs)


def parse_cluster(text: str, **bandwidths: float) -> Cluster:
    """A cluster from ``"TYPE:SERVERSxGPUS,..."`` (e.g. ``"V100:8x4,P100:8x4,K80:8x4"``, Gavel's three types) or
    plain ``"SERVERSxGPUS"`` (one untyped kind).

    ```pycon
    >>> parse_cluster("2x4").total_gpus, parse_cluster("V100:1x4,K80:2x2").gpus_by_type
    (8, {'V100': 4, 'K80': 4})
    >>> parse_cluster("V100:4")
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: cluster: part 'V100:4' must be [TYPE:]SERVERSxGPUS, e.g. V100:8x4

    ```
    """
    if not isinstance(text, str) or not text.strip():
        raise InstanceError(f"must be [TYPE:]SERVERSxGPUS[,...], got {text!r}", field="cluster")
    spec: dict[str, tuple[int, int]] = {}
    for part in text.split(","):
        part = part.strip()
        t, _, size = part.rpartition(":")
        try:
            n_text, g_text = size.lower().split("x")
            n, g = int(n_text), int(g_text)
        except ValueError:
            raise InstanceError(f"part {part!r} must be [TYPE:]SERVERSxGPUS, e.g. V100:8x4", field="cluster") from None
        t = t.strip() or DEFAULT_GPU_TYPE
        if t in spec:
            raise InstanceError(f"GPU type {t!r} given twice", field="cluster")
        spec[t] = (n, g)
    if list(spec) == [DEFAULT_GPU_TYPE]:
        n, g = spec[DEFAULT_GPU_TYPE]
        for name, v in (("servers", n), ("gpus_per_server", g)):
            if v < 1:
                raise InstanceError(f"must be a positive integer, got {v!r}", field=name)
        return Cluster.homogeneous(n, g, **bandwidths)
    return Cluster.typed(spec, **bandwidths)


def as_cluster(spec: Cluster | tuple[int, int] | list[int] | str, *, homogeneous: str | None = None) -> Cluster:
    """A [`Cluster`][optsched.cluster.Cluster] given as itself, as ``(servers, gpus_per_server)`` or as a
    [`parse_cluster`][optsched.cluster.parse_cluster] string;
    with ``homogeneous`` (the reason, e.g. "paper 001's model"), every server must have the same number of GPUs.

    ```pycon
    >>> as_cluster((2, 4)).total_gpus
    8
    >>> as_cluster(Cluster((Server("a", 4), Server("b", 2))), homogeneous="paper 001's model")
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: cluster: paper 001's model needs servers of one size, got [2, 4]

    ```
    """
    if isinstance(spec, Cluster):
        cluster = spec
    elif isinstance(spec, str):
        cluster = parse_cluster(spec)
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
