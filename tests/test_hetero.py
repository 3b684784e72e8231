"""Heterogeneous GPU types (issue 17): clusters, the simulator's cluster state, placements that keep a job on one
type, workload files naming types (old files unchanged), and the throughput table's model."""

from __future__ import annotations

import json

import numpy as np
import pytest

from optsched.cluster import DEFAULT_GPU_TYPE, Cluster, Server, parse_cluster
from optsched.errors import InstanceError
from optsched.generators.workload import synthetic_workload
from optsched.io import schema
from optsched.perf.hetero import GPU_TYPES, TYPE_SPEED, HeteroPerf
from optsched.problems.workload import COLUMNS, Workload, WorkloadJob, read_workload, workload_to_dict, write_workload
from optsched.sim import simulate
from optsched.sim.hetero import time_on_types
from optsched.sim.state import ClusterState

jsonschema = pytest.importorskip("jsonschema")


def test_untyped_clusters_stay_homogeneous():
    c = Cluster.homogeneous(3, 4)
    assert c.gpu_types == (DEFAULT_GPU_TYPE,) and not c.heterogeneous
    assert Server("x", 2).gpu_type == DEFAULT_GPU_TYPE
    assert parse_cluster("3x4") == c
    cs = ClusterState(c)
    assert not cs.typed and cs.type_capacity.tolist() == [12] and cs.allowed(WorkloadJob("a", 0, 1, 1, 1.0)).all()


def test_typed_clusters_and_state():
    c = parse_cluster("V100:2x4,P100:1x2,K80:3x8")
    assert c.heterogeneous and c.gpus_by_type == {"V100": 8, "P100": 2, "K80": 24}
    cs = ClusterState(c)
    assert cs.types == ("V100", "P100", "K80") and cs.type_capacity.sum() == c.total_gpus
    for k, t in enumerate(cs.types):
        assert cs.type_capacity[k] == c.gpus_by_type[t]
        assert [c.servers[i].gpu_type for i in np.flatnonzero(cs.type_mask(k))] == [t] * int(cs.type_mask(k).sum())
    assert cs.free_by_type().tolist() == [8, 2, 24]
    assert cs.type_index("A100") == -1 and not cs.allowed(WorkloadJob("a", 0, 1, 1, 1.0, gpu_type="A100")).any()
    frame = cs.gpu_frame()
    assert frame.groupby("GPU_type").size().to_dict() == {"K80": 24, "P100": 2, "V100": 8}


@pytest.mark.parametrize("bad", ["V100:2", "V100:1x4,V100:1x2", "V100:0x4", "", "V100:ax4"])
def test_bad_cluster_specs(bad):
    with pytest.raises(InstanceError):
        parse_cluster(bad)


@pytest.mark.parametrize("placement", ["consolidated", "first-free", "scattered"])
@pytest.mark.parametrize("scheduler", ["fifo", "las"])
def test_placements_keep_every_job_on_one_type(placement, scheduler):
    cl = parse_cluster("V100:2x4,K80:2x4,P100:1x2")
    base = synthetic_workload(40, load_jph=30.0, seed=3, gpu_mix={1: 0.4, 2: 0.3, 4: 0.2, 8: 0.1})
    types = ["", "V100", "K80", ""]
    jobs = [WorkloadJob(j.id, j.arrival_s, j.gpus, j.iterations, j.iteration_time_s,
                        gpu_type=types[i % 4] if j.gpus <= 8 else "") for i, j in enumerate(base)]
    wl = Workload(tuple(jobs))
    r = simulate(wl, cl, scheduler=scheduler, placement=placement, mode="event")
    assert r.summary["finished_tracked"] == len(wl)
    type_of = [s.gpu_type for s in cl.servers]
    for j in r.job_objects:
        assert j.segments
        for _, _, pl, _ in j.segments:
            seg_types = {type_of[s] for s in pl.servers}
            assert len(seg_types) == 1
            if j.gpu_type:
                assert seg_types == {j.gpu_type}
    on = time_on_types(r, cl)
    for j in r.job_objects:
        if j.gpu_type:
            assert on.loc[j.id].drop(j.gpu_type).sum() == 0.0 and on.loc[j.id, j.gpu_type] > 0


def test_untyped_cluster_runs_as_before():
    wl = synthetic_workload(30, load_jph=20.0, seed=1, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2})
    a = simulate(wl, (2, 4), scheduler="tiresias")
    b = simulate(wl, Cluster((Server("s0", 4, DEFAULT_GPU_TYPE), Server("s1", 4))), scheduler="tiresias")
    assert a.jobs["completion_s"].tolist() == b.jobs["completion_s"].tolist()


def test_the_engine_refuses_a_type_it_lacks():
    cl = parse_cluster("V100:1x4,K80:1x2")
    for j in (WorkloadJob("a", 0, 1, 1, 1.0, gpu_type="A100"), WorkloadJob("b", 0, 3, 1, 1.0, gpu_type="K80")):
        with pytest.raises(InstanceError) as e:
            simulate(Workload((j,)), cl)
        assert e.value.field == "gpu_type" and e.value.job == j.id


# -- workload files -------------------------------------------------------------------------------------------
def _typed_workload() -> Workload:
    return Workload((WorkloadJob("a", 0.0, 2, 10, 1.0, gpu_type="V100"), WorkloadJob("b", 5.0, 1, 20, 0.5),
                     WorkloadJob("c", 9.0, 4, 30, 0.25, model="m", gpu_type="K80")), name="t")


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_workload_files_name_types_and_round_trip(tmp_path, suffix):
    wl = _typed_workload()
    p = tmp_path / f"w{suffix}"
    write_workload(wl, p)
    back = read_workload(p)
    assert [j.gpu_type for j in back] == ["V100", "", "K80"]
    assert back.jobs == wl.jobs
    if suffix == ".csv":
        assert p.read_text().splitlines()[0].split(",")[-1] == "gpu_type"
    else:
        jsonschema.validate(json.loads(p.read_text()), schema("optsched/workload@1"))


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_files_without_types_are_unchanged(tmp_path, suffix):
    wl = synthetic_workload(5, seed=0)
    p = tmp_path / f"w{suffix}"
    write_workload(wl, p)
    text = p.read_text()
    assert "gpu_type" not in text
    if suffix == ".csv":
        assert tuple(text.splitlines()[0].split(",")) == tuple(c for c in COLUMNS if c != "gpu_type")
    assert all(j.gpu_type == "" for j in read_workload(p))


def test_a_hand_written_csv_without_the_column_reads(tmp_path):
    p = tmp_path / "old.csv"
    p.write_text("id,arrival_s,gpus,iterations,iteration_time_s\nj0,0,1,10,1.0\n")
    assert read_workload(p).jobs[0].gpu_type == ""


@pytest.mark.parametrize("bad", [" V100", "V,100", 7])
def test_bad_gpu_types_are_refused_with_the_job_named(tmp_path, bad):
    doc = workload_to_dict(_typed_workload())
    doc["jobs"][1]["gpu_type"] = bad
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(InstanceError) as e:
        read_workload(p)
    assert "gpu_type" in e.value.field and e.value.job == "b"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema("optsched/workload@1"))


# -- the throughput table's model ---------------------------------------------------------------------------------
def test_hetero_perf_equals_the_constant_model_on_the_reference_type():
    wl = synthetic_workload(30, load_jph=20.0, seed=2, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2})
    for sched in ("fifo", "srtf"):
        a = simulate(wl, (2, 4), scheduler=sched, perf="constant")
        b = simulate(wl, (2, 4), scheduler=sched, perf=HeteroPerf())
        assert np.allclose(a.jobs["completion_s"], b.jobs["completion_s"])


def test_table_has_every_type_and_slower_types_are_slower():
    m = HeteroPerf(server_types=GPU_TYPES)
    for model, row in TYPE_SPEED.items():
        assert set(GPU_TYPES) <= set(row)
        assert m.type_speed(model, "V100") == 1.0
        assert 0 < m.type_speed(model, "K80") < m.type_speed(model, "P100") <= 1.0
    j = WorkloadJob("a", 0, 4, 10, 1.0, model="ResNet-50/ImageNet")
    # more GPUs: faster, with diminishing returns; split over servers: slower
    t = [m.time_on(j, "V100", g) for g in (1, 2, 4, 8)]
    assert all(x > y for x, y in zip(t, t[1:]))
    assert all(t[i] / t[i + 1] <= 2.0 for i in range(3))
    assert m.time_on(j, "V100", 4, servers=2) > m.time_on(j, "V100", 4)
    with pytest.raises(InstanceError):
        HeteroPerf(server_types=("V100", "TPU"))
