"""Heavy-Edge GPU mapping (paper 001, section IV-B; digest section 2): greedy balanced graph partition.

The job is a graph Omega ([`replica_graph`][optsched.algorithms.heavy_edge.replica_graph]): one vertex per stage replica
``(s, r)`` (0-based; printed
``S{s+1}-R{r+1}`` as in Fig. 2), edges weighted by the data (MB) they carry per iteration:

* inter-stage: the complete bipartite graph between stages s-1 and s, weight 2 d^out_{s-1} / k_s;
* RAR (``allreduce="ring"``): the replicas of a stage form the ring r_0 - r_1 - ... - r_{k-1} - r_0, each
  edge weighted 2(k-1)h/k; for k = 2 the ring is the single edge r_0 - r_1 (a simple graph);
* TAR (``allreduce="tree"``): the edges of a double binary tree, weight (k-1)h/k per tree; an edge lying in
  both trees carries both halves, so its weights are summed.

Heavy-Edge visits the servers by free GPUs descending (ties: the caller's order) and fills each one: the last
server (or any server whose size equals the number of unassigned vertices) takes them all; a single-GPU
server takes the unassigned vertex of least total incident weight W(v) (in the whole graph); any other server
is seeded with the heaviest edge inside the unassigned set, then grows by the heaviest edge from its current
node_set to an unassigned vertex, and takes a seeded random unassigned vertex when no edge connects.
Ties are broken lexicographically by (stage, replica). See ``docs/algorithms/heavy-edge.md``.

```pycon
>>> from optsched.problems.pipeline import pipeline_job
>>> job = fig2_job()
>>> res = heavy_edge(job, {"a": 4, "b": 1, "c": 1})
>>> sorted(vertex_name(v) for v in res.assignment["a"])
['S1-R1', 'S1-R2', 'S2-R1', 'S2-R2']
>>> res.counts["a"], res.cut_weight_mb
((2, 2, 0), 4.0)

```
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import MappingProxyType
from typing import AbstractSet, Mapping, Sequence

import networkx as nx
import numpy as np

from ..errors import InstanceError
from ..perf.pipeline import Network, alpha, fewest_servers_layout
from ..problems.pipeline import PipelineJob, pipeline_job

Vertex = tuple[int, int]  # (stage, replica), 0-based


def vertex_name(v: Vertex) -> str:
    """``(0, 1)`` -> ``"S1-R2"``, the paper's Fig. 2 labels."""
    return f"S{v[0] + 1}-R{v[1] + 1}"


# -- the graph Omega ---------------------------------------------------------------------------------------
def ring_edges(k: int) -> list[tuple[int, int]]:
    """Edges of the ring over ranks 0..k-1 (one edge for k = 2, none for k = 1).

    ```pycon
    >>> ring_edges(1), ring_edges(2), ring_edges(4)
    ([], [(0, 1)], [(0, 1), (1, 2), (2, 3), (0, 3)])

    ```
    """
    if k < 2:
        return []
    if k == 2:
        return [(0, 1)]
    return [(r, r + 1) for r in range(k - 1)] + [(0, k - 1)]


def _inorder_tree(lo: int, hi: int, out: list[tuple[int, int]]) -> int | None:
    """Balanced in-order binary tree over ranks lo..hi; appends its edges, returns its root."""
    if lo > hi:
        return None
    mid = (lo + hi) // 2
    for child in (_inorder_tree(lo, mid - 1, out), _inorder_tree(mid + 1, hi, out)):
        if child is not None:
            out.append((mid, child))
    return mid


def double_binary_tree_edges(k: int) -> list[tuple[tuple[int, int], int]]:
    """Edges of the double binary tree over ranks 0..k-1 with their multiplicity (1 or 2).

    Tree 1 is a balanced in-order binary tree; tree 2 is tree 1 shifted by +1 mod k (k even) or mirrored
    r -> k-1-r (k odd) (Sanders et al. / NCCL, digest section 2). An edge present in both trees has
    multiplicity 2.

    ```pycon
    >>> double_binary_tree_edges(2)
    [((0, 1), 2)]
    >>> sum(m for _, m in double_binary_tree_edges(8))   # two spanning trees of 8 vertices
    14

    ```
    """
    if k < 2:
        return []
    t1: list[tuple[int, int]] = []
    _inorder_tree(0, k - 1, t1)
    f = (lambda r: (r + 1) % k) if k % 2 == 0 else (lambda r: k - 1 - r)
    mult: dict[tuple[int, int], int] = {}
    for u, v in t1 + [(f(u), f(v)) for u, v in t1]:
        e = (min(u, v), max(u, v))
        mult[e] = mult.get(e, 0) + 1
    return sorted(mult.items())


def replica_graph(job: PipelineJob) -> nx.Graph:
    """The job graph Omega of section IV-B (vertices ``(stage, replica)``, edge attribute ``weight`` in MB)."""
    return _graph(job).copy()


def _graph(job: PipelineJob) -> nx.Graph:
    # cached by structure, not by job id: a trace's many jobs of one catalogue configuration share one graph
    return _graph_of(job.stages, job.allreduce)


@functools.lru_cache(maxsize=1024)
def _graph_of(stages, allreduce: str) -> nx.Graph:
    job = PipelineJob("graph", stages, allreduce)
    G = nx.Graph()
    for s, st in enumerate(job.stages):
        G.add_nodes_from((s, r) for r in range(st.replicas))
    for s, st in enumerate(job.stages):
        k, h = st.replicas, st.params_mb
        if s > 0:
            prev = job.stages[s - 1]
            w = 2.0 * prev.d_out_mb / k
            if w > 0:
                G.add_edges_from((((s - 1, a), (s, b)) for a in range(prev.replicas) for b in range(k)), weight=w)
        if k > 1 and h > 0:
            if job.allreduce == "ring":
                w = 2.0 * (k - 1) * h / k
                G.add_edges_from((((s, a), (s, b)) for a, b in ring_edges(k)), weight=w)
            else:
                w = (k - 1) * h / k
                for (a, b), m in double_binary_tree_edges(k):
                    G.add_edge((s, a), (s, b), weight=m * w)
    return G


@dataclass(frozen=True)
class _Adjacency:
    """Plain-dict adjacency of Omega, for a fast greedy (networkx is used to build, not to iterate)."""

    vertices: tuple[Vertex, ...]
    nbrs: Mapping[Vertex, tuple[tuple[Vertex, float], ...]]
    total: Mapping[Vertex, float]  # W(v): total incident weight in Omega
    edges_desc: tuple[tuple[float, Vertex, Vertex], ...]  # heaviest first, ties lexicographic


def _adjacency(job: PipelineJob) -> _Adjacency:
    return _adjacency_of(job.stages, job.allreduce)


@functools.lru_cache(maxsize=1024)
def _adjacency_of(stages, allreduce: str) -> _Adjacency:
    G = _graph_of(stages, allreduce)
    vertices = tuple(sorted(G.nodes))
    nbrs = {v: tuple(sorted((u, d["weight"]) for u, d in G[v].items())) for v in vertices}
    total = {v: sum(w for _, w in nbrs[v]) for v in vertices}
    edges = sorted(((-d["weight"], min(u, v), max(u, v)) for u, v, d in G.edges(data=True)))
    return _Adjacency(vertices, nbrs, total, tuple((-w, u, v) for w, u, v in edges))


# -- the algorithm -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HeavyEdgeResult:
    """Heavy-Edge's output: vertices per server, the count matrix x^m_s, and the cut weight (MB)."""

    assignment: Mapping[str, tuple[Vertex, ...]]
    counts: Mapping[str, tuple[int, ...]]
    cut_weight_mb: float
    order: tuple[str, ...]  # servers in the order Heavy-Edge filled them


def _as_items(free: Mapping[str, int] | Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    return list(free.items()) if isinstance(free, Mapping) else [(str(a), b) for a, b in free]


def heavy_edge(job: PipelineJob, free: Mapping[str, int] | Sequence[tuple[str, int]],
               rng: np.random.Generator | int | None = 0, *, lightest: str = "graph",
               grow_from: str = "node_set") -> HeavyEdgeResult:
    """Map every replica of ``job`` onto ``free`` = {server: GPUs it gives}, with sum = g_i exactly.

    ``rng`` (a numpy Generator or a seed) is used only when no edge connects the growing node_set to an
    unassigned vertex. Servers giving 0 GPUs are ignored.

    The defaults are the digest's readings of section IV-B. Two alternative readings, kept to measure how much
    they matter (``benchmarks/table2.py``): ``lightest="unassigned"`` (W(v) counts only edges to unassigned
    vertices) and ``grow_from="assigned"`` (grow by the heaviest edge from ANY assigned vertex, earlier
    servers' included, to U).
    """
    if lightest not in ("graph", "unassigned") or grow_from not in ("node_set", "assigned"):
        raise ValueError("lightest must be 'graph' or 'unassigned', grow_from 'node_set' or 'assigned'")
    items = [(sid, n) for sid, n in _as_items(free) if n != 0]
    for sid, n in items:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise InstanceError(f"free GPUs must be a non-negative integer, got {n!r}", field=f"free[{sid!r}]",
                                job=job.id)
    total = sum(n for _, n in items)
    if total != job.gpus:
        raise InstanceError(f"Heavy-Edge needs servers giving exactly g_i = {job.gpus} GPUs, got {total}",
                            field="free", job=job.id)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    adj = _adjacency(job)
    order = sorted(range(len(items)), key=lambda i: -items[i][1])  # stable: ties keep the caller's order
    unassigned = set(adj.vertices)
    assignment: dict[str, tuple[Vertex, ...]] = {}
    for i in order:
        sid, gm = items[i]
        if len(unassigned) == gm:                                   # case 1 (always the last server)
            node_set = sorted(unassigned)
        elif gm == 1:                                               # case 2: min total edge weight W(v)
            if lightest == "graph":
                node_set = [min(unassigned, key=lambda v: (adj.total[v], v))]
            else:
                node_set = [min(unassigned, key=lambda v: (sum(w for u, w in adj.nbrs[v] if u in unassigned), v))]
        else:
            earlier = set(adj.vertices) - unassigned if grow_from == "assigned" else set()
            node_set = _grow(adj, unassigned, gm, gen, earlier)
        assignment[sid] = tuple(sorted(node_set))
        unassigned.difference_update(node_set)
    counts = counts_from_assignment(job, assignment)
    return HeavyEdgeResult(MappingProxyType(assignment), MappingProxyType(counts),
                           cut_weight(job, assignment), tuple(items[i][0] for i in order))


def _grow(adj: _Adjacency, unassigned: set[Vertex], gm: int, gen: np.random.Generator,
          earlier: AbstractSet[Vertex] = frozenset()) -> list[Vertex]:
    """Fill one multi-GPU server: seed with the heaviest edge in U, grow by the heaviest edge to node_set
    (and to the ``earlier`` servers' vertices under the alternative reading)."""
    node_set: list[Vertex] = []
    in_set: set[Vertex] = set()
    best: dict[Vertex, float] = {}  # unassigned v -> heaviest edge weight from node_set to v
    for a in earlier:
        for u, w in adj.nbrs[a]:
            if u in unassigned and w > best.get(u, 0.0):
                best[u] = w

    def add(v: Vertex) -> None:
        node_set.append(v)
        in_set.add(v)
        best.pop(v, None)
        for u, w in adj.nbrs[v]:
            if u in unassigned and u not in in_set and w > best.get(u, 0.0):
                best[u] = w

    while len(node_set) < gm:
        if not node_set:  # the seed, even when earlier servers' edges reach U (the paper always seeds)
            seed = next(((u, v) for _, u, v in adj.edges_desc if u in unassigned and v in unassigned), None)
            if seed is not None:
                add(seed[0])
                add(seed[1])
                continue
        elif best:
            # heaviest edge (node_set, U); ties -> lexicographically smallest unassigned endpoint
            v = min(best, key=lambda u: (-best[u], u))
            add(v)
            continue
        pool = sorted(v for v in unassigned if v not in in_set)
        add(pool[int(gen.integers(len(pool)))])
    return node_set


def counts_from_assignment(job: PipelineJob, assignment: Mapping[str, Sequence[Vertex]]) -> dict[str, tuple[int, ...]]:
    """x^m_s = number of stage-s vertices on server m."""
    out = {}
    for sid, vs in assignment.items():
        c = [0] * job.n_stages
        for s, _ in vs:
            c[s] += 1
        out[sid] = tuple(c)
    return out


def cut_weight(job: PipelineJob, assignment: Mapping[str, Sequence[Vertex]]) -> float:
    """Total weight (MB) of the edges of Omega whose endpoints lie on different servers.

    Every vertex must be assigned exactly once (raises [`InstanceError`][optsched.errors.InstanceError] otherwise).
    """
    where: dict[Vertex, str] = {}
    for sid, vs in assignment.items():
        for raw in vs:
            v: Vertex = (int(raw[0]), int(raw[1]))
            if v in where:
                raise InstanceError(f"replica {vertex_name(v)} assigned twice", field="assignment", job=job.id)
            where[v] = sid
    adj = _adjacency(job)
    missing = [v for v in adj.vertices if v not in where]
    if missing or len(where) != len(adj.vertices):
        raise InstanceError(f"replicas not assigned: {', '.join(vertex_name(v) for v in missing) or 'unknown'}",
                            field="assignment", job=job.id)
    return float(sum(w for w, u, v in adj.edges_desc if where[u] != where[v]))


def contiguous_assignment(job: PipelineJob, counts: Mapping[str, Sequence[int]]) -> dict[str, tuple[Vertex, ...]]:
    """Replicas for a count matrix: each stage's replicas in index order, server by server.

    Consecutive ring ranks share a server, so a ring stage spread over p >= 2 servers cuts exactly p ring
    edges (the fewest possible); the inter-stage cut does not depend on which replicas go where.
    """
    nxt = [0] * job.n_stages
    out: dict[str, tuple[Vertex, ...]] = {}
    for sid, col in counts.items():
        vs: list[Vertex] = []
        for s, c in enumerate(col):
            vs.extend((s, nxt[s] + r) for r in range(c))
            nxt[s] += c
        out[sid] = tuple(vs)
    return out


def fig2_job() -> PipelineJob:
    """The job of the paper's Fig. 2: 3 stages x 2 replicas, RAR. Weights not printed in the paper are ours.

    Printed: the stage-1 all-reduce edge S1-R1 - S1-R2 carries 20 MB and the stage-1/2 edges 1 MB. Ours:
    stage-2 all-reduce 4 MB, stage-3 all-reduce 2 MB, stage-2/3 edges 0.5 MB (lighter than the 1 MB ones,
    so that the first server takes S2-R1 and S2-R2 as the paper describes).
    """
    # inter-stage weight 2 d^out_{s-1} / k_s: 1 MB -> d^out_1 = 1; 0.5 MB -> d^out_2 = 0.5; RAR k=2: w = h
    return pipeline_job("fig2", replicas=[2, 2, 2], forward_ms=[1.0, 1.0, 1.0], backward_ms=[2.0, 2.0, 2.0],
                        d_out_mb=[1.0, 0.5, 0.0], params_mb=[20.0, 4.0, 2.0], allreduce="ring")


# -- alpha-tilde_min: Heavy-Edge on the fewest-servers layout -----------------------------------------------
def alpha_tilde_min(job: PipelineJob, net: Network, seed: int | None = 0) -> float:
    """alpha-tilde_i^min (section IV-B): Heavy-Edge on the fewest-servers layout, evaluated by eq. (7) (ms).

    ```pycon
    >>> from optsched.perf.pipeline import alpha_max
    >>> net = Network.paper_simulation()
    >>> alpha_tilde_min(fig2_job(), net) <= alpha_max(fig2_job(), net)
    True

    ```
    """
    free = {f"m{i}": c for i, c in enumerate(fewest_servers_layout(job, net.gpus_per_server))}
    res = heavy_edge(job, free, rng=seed)
    return alpha(job, net, res.counts, check=False)
