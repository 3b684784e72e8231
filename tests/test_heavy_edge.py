"""Heavy-Edge (paper 001, section IV-B): Fig. 2, the replica graph, valid partitions, determinism."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from optsched.algorithms.heavy_edge import (
    cut_weight,
    double_binary_tree_edges,
    fig2_job,
    heavy_edge,
    replica_graph,
    vertex_name,
)
from optsched.errors import InstanceError
from optsched.models import catalogue_job
from optsched.problems.pipeline import pipeline_job


def names(vs):
    return sorted(vertex_name(v) for v in vs)


def test_fig2_example():
    """Fig. 2: 3 stages x 2 replicas on servers with 4, 1 and 1 free GPUs."""
    job = fig2_job()
    G = replica_graph(job)
    # the printed weights: the S1 all-reduce edge is 20 MB and the heaviest; S1-S2 edges are 1 MB
    heaviest = max(G.edges(data="weight"), key=lambda e: e[2])
    assert {vertex_name(heaviest[0]), vertex_name(heaviest[1])} == {"S1-R1", "S1-R2"} and heaviest[2] == 20.0
    assert G[(0, 0)][(1, 0)]["weight"] == G[(0, 1)][(1, 1)]["weight"] == 1.0
    res = heavy_edge(job, {"m1": 4, "m2": 1, "m3": 1})
    assert names(res.assignment["m1"]) == ["S1-R1", "S1-R2", "S2-R1", "S2-R2"]
    assert names(res.assignment["m2"]) + names(res.assignment["m3"]) == ["S3-R1", "S3-R2"]
    # cut: the four 0.5 MB S2-S3 edges and the 2 MB S3 all-reduce edge
    assert res.cut_weight_mb == pytest.approx(4 * 0.5 + 2.0)
    assert res.counts == {"m1": (2, 2, 0), "m2": (0, 0, 1), "m3": (0, 0, 1)}


def test_servers_are_filled_by_free_gpus_descending():
    res = heavy_edge(fig2_job(), [("small", 1), ("big", 4), ("other", 1)])
    assert res.order == ("big", "small", "other")
    assert names(res.assignment["big"]) == ["S1-R1", "S1-R2", "S2-R1", "S2-R2"]


def test_ring_graph_weights():
    job = pipeline_job("r", replicas=[4, 2], forward_ms=[1, 1], backward_ms=[1, 1], d_out_mb=[3, 0],
                       params_mb=[8, 6])
    G = replica_graph(job)
    ring = [(u, v) for u, v in G.edges if u[0] == v[0] == 0]
    assert len(ring) == 4 and all(G[u][v]["weight"] == 2 * 3 * 8 / 4 for u, v in ring)
    assert G[(1, 0)][(1, 1)]["weight"] == 6.0                     # k = 2: one edge of 2(k-1)h/k = h
    cross = [(u, v) for u, v in G.edges if u[0] != v[0]]
    assert len(cross) == 8 and all(G[u][v]["weight"] == 2 * 3 / 2 for u, v in cross)  # 2 d_out / k_2


@pytest.mark.parametrize("k", range(2, 12))
def test_double_binary_tree_is_two_spanning_trees(k):
    edges = double_binary_tree_edges(k)
    assert sum(m for _, m in edges) == 2 * (k - 1)
    G = nx.Graph([e for e, _ in edges])
    assert G.number_of_nodes() == k and nx.is_connected(G)
    job = pipeline_job("t", replicas=[k], forward_ms=[1], backward_ms=[1], d_out_mb=[0], params_mb=[10],
                       allreduce="tree")
    H = replica_graph(job)
    half = (k - 1) * 10 / k
    assert sorted(H[(0, a)][(0, b)]["weight"] for (a, b), _ in edges) == sorted(m * half for _, m in edges)


def test_single_gpu_servers_take_the_lightest_vertex():
    # after the 2-GPU server takes stage 1 (the 50 MB all-reduce edge), U = {S2-R1, S3-R1} with
    # W(S2-R1) = 1 + 1 + 1 = 3 MB (edges of 2 d_out / k = 1 MB to S1-R1, S1-R2, S3-R1), W(S3-R1) = 1 MB:
    # the 1-GPU server takes S3-R1 although S2-R1 comes first lexicographically
    job = pipeline_job("l", replicas=[2, 1, 1], forward_ms=[1, 1, 1], backward_ms=[1, 1, 1],
                       d_out_mb=[0.5, 0.5, 0], params_mb=[50, 0, 0])
    res = heavy_edge(job, {"big": 2, "a": 1, "c": 1})
    assert names(res.assignment["big"]) == ["S1-R1", "S1-R2"]
    assert names(res.assignment["a"]) == ["S3-R1"] and names(res.assignment["c"]) == ["S2-R1"]


def test_alternative_reading_of_the_lightest_vertex():
    # same job: counting only edges to unassigned vertices, W(S2-R1) = W(S3-R1) = 1 MB, the tie goes to S2-R1
    job = pipeline_job("l", replicas=[2, 1, 1], forward_ms=[1, 1, 1], backward_ms=[1, 1, 1],
                       d_out_mb=[0.5, 0.5, 0], params_mb=[50, 0, 0])
    res = heavy_edge(job, {"big": 2, "a": 1, "c": 1}, lightest="unassigned")
    assert names(res.assignment["a"]) == ["S2-R1"]
    with pytest.raises(ValueError):
        heavy_edge(job, {"big": 4}, grow_from="anything")


def test_valid_partition_on_catalogue_jobs():
    rng = np.random.default_rng(3)
    for spec in ("VGG19:hybrid16", "GPT-175B:pp3x4", "BERT-large:pp4x2-tree", "ResNet152:dp8"):
        job = catalogue_job(spec)
        for _ in range(5):
            cuts = np.sort(rng.choice(np.arange(1, job.gpus), size=min(3, job.gpus - 1), replace=False))
            sizes = np.diff(np.concatenate([[0], cuts, [job.gpus]]))
            free = {f"s{i}": int(n) for i, n in enumerate(sizes)}
            res = heavy_edge(job, free, rng=1)
            seen = [v for vs in res.assignment.values() for v in vs]
            assert len(seen) == len(set(seen)) == job.gpus
            assert {s: len(vs) for s, vs in res.assignment.items()} == free
            assert tuple(sum(c[s] for c in res.counts.values()) for s in range(job.n_stages)) == job.replicas
            assert res.cut_weight_mb == pytest.approx(cut_weight(job, res.assignment))


def test_random_choice_is_seeded_and_deterministic():
    # no edges at all (no activations, no parameters): every pick of the 3-GPU server is random
    job = pipeline_job("e", replicas=[3, 3], forward_ms=[1, 1], backward_ms=[1, 1], d_out_mb=[0, 0],
                       params_mb=[0, 0])
    free = {"a": 3, "b": 3}
    runs = {seed: heavy_edge(job, free, rng=seed).assignment["a"] for seed in range(12)}
    assert all(heavy_edge(job, free, rng=s).assignment["a"] == runs[s] for s in runs)
    assert len(set(runs.values())) > 1          # the seed matters
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    assert heavy_edge(job, free, rng=g1) == heavy_edge(job, free, rng=g2)


def test_input_errors():
    with pytest.raises(InstanceError, match="exactly g_i = 6"):
        heavy_edge(fig2_job(), {"a": 4, "b": 1})
    with pytest.raises(InstanceError, match="non-negative integer"):
        heavy_edge(fig2_job(), {"a": 7, "b": -1})
    with pytest.raises(InstanceError, match="not assigned"):
        cut_weight(fig2_job(), {"a": ((0, 0),)})
    with pytest.raises(InstanceError, match="twice"):
        cut_weight(fig2_job(), {"a": ((0, 0),), "b": ((0, 0),)})
