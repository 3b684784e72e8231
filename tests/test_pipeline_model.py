"""Paper 001's job data and per-iteration time model (eqs. 4-7): hand-computed cases, special cases, validation."""

from __future__ import annotations

import json
import math

import pytest

from optsched.algorithms.heavy_edge import alpha_tilde_min
from optsched.api import from_dict, load, save, to_dict
from optsched.cli import main as cli_main
from optsched.errors import InstanceError
from optsched.exact.placement import alpha_min
from optsched.models import CATALOGUE, MODEL_NAMES, catalogue_job, single_gpu_models
from optsched.perf.pipeline import (
    Network,
    alpha,
    alpha_max,
    bandwidth_precondition,
    compute_lower_bound,
    fewest_servers_layout,
    require_bandwidth_precondition,
    singleton_layout,
)
from optsched.placement import place
from optsched.problems.pipeline import FORMAT, PipelineJob, PipelineJobSet, Stage, pipeline_job


def two_stage() -> PipelineJob:
    # k = (2, 1): d_out_1 = 3 MB per replica, so d_in_2 = 2 * 3 / 1 = 6 MB; h = (10, 5) MB
    return pipeline_job("two", replicas=[2, 1], forward_ms=[1, 2], backward_ms=[2, 4], d_out_mb=[3, 0],
                        params_mb=[10, 5])


NET4 = Network(gpus_per_server=4, inter_bandwidth_gbs=1.0, intra_bandwidth_gbs=100.0)


# -- eqs. (4)-(7), by hand -----------------------------------------------------------------------------------
def test_whole_job_on_one_server_uses_only_intra_bandwidth():
    # stage 1: 3 + 2*3*1/100 + 2*1*10/(2*100) = 3.16; stage 2: 6 + 2*6*(2/2)/100 = 6.12
    assert alpha(two_stage(), NET4, {"a": (2, 1)}) == pytest.approx(6.12)


def test_stages_on_different_servers():
    # stage 1 on a: 3 + g*2*3/B_inter = 3 + 24, all-reduce local 0.1 -> 27.1; stage 2 on b: 6 + 4*2*6 = 54
    assert alpha(two_stage(), NET4, {"a": (2, 0), "b": (0, 1)}) == pytest.approx(54.0)


def test_split_replicas_pay_the_nic_all_reduce():
    # a = (1, 1): stage 1: 3 + 2*3*1/100 + 2*1*10*4/(2*1*1) = 43.06; stage 2: 6 + 4*12*0.5 + 12*0.5/100 = 30.06
    # b = (1, 0): stage 1: 3 + 4*2*3 + 40 = 67
    assert alpha(two_stage(), NET4, {"a": (1, 1), "b": (1, 0)}) == pytest.approx(67.0)


def test_middle_stage_sees_both_neighbours():
    job = pipeline_job("mid", replicas=[1, 2, 1], forward_ms=[1, 1, 1], backward_ms=[1, 1, 1], d_out_mb=[4, 1, 0],
                       params_mb=[0, 6, 0])
    net = Network(2, 2.0, 10.0)
    # server b = (0, 1, 1), stage 2: comp 2 + remote in (g/B)*2*2*(1-0) = 4 + local out 2*1*1/10 = 0.2
    #                               + all-reduce 2*1*6*2/(2*1*2) = 6  -> 12.2 (the maximum)
    assert alpha(job, net, {"a": (1, 1, 0), "b": (0, 1, 1)}) == pytest.approx(12.2)


def test_alpha_max_closed_form_by_hand_and_on_singletons():
    # stage 1: 3 + 2*4*(0+3)/1 + 2*4*1*10/(2*1) = 3 + 24 + 40 = 67; stage 2: 6 + 2*4*6 = 54
    assert alpha_max(two_stage(), NET4) == pytest.approx(67.0)
    assert alpha(two_stage(), NET4, singleton_layout(two_stage())) == pytest.approx(67.0)


def test_zero_column_contributes_nothing():
    job = two_stage()
    assert alpha(job, NET4, {"a": (2, 1), "b": (0, 0)}) == alpha(job, NET4, {"a": (2, 1)})


# -- special cases -------------------------------------------------------------------------------------------
def test_single_gpu_job_costs_its_compute():
    job = pipeline_job("one", replicas=[1], forward_ms=[5], backward_ms=[7], d_out_mb=[0], params_mb=[100])
    assert job.kind == "single-gpu"
    assert alpha(job, NET4, {"a": (1,)}) == 12.0 == alpha_max(job, NET4) == alpha_tilde_min(job, NET4)


def test_pure_data_parallel_all_reduce():
    job = pipeline_job("dp", replicas=[4], forward_ms=[1], backward_ms=[1], d_out_mb=[0], params_mb=[8])
    assert job.kind == "data-parallel"
    # one server: 2 + 2*3*8/(4*100) = 2.12; two servers of 2: 2 + 2*3*8*4/(4*2*1) = 26
    assert alpha(job, NET4, {"a": (4,)}) == pytest.approx(2.12)
    assert alpha(job, NET4, {"a": (2,), "b": (2,)}) == pytest.approx(26.0)


def test_pure_model_parallel_has_no_all_reduce():
    job = pipeline_job("mp", replicas=[1, 1], forward_ms=[1, 1], backward_ms=[1, 1], d_out_mb=[2, 0],
                       params_mb=[50, 50])
    assert job.kind == "model-parallel"
    assert alpha(job, NET4, {"a": (1, 1)}) == pytest.approx(2 + 4 / 100)
    assert alpha(job, NET4, {"a": (1, 0), "b": (0, 1)}) == pytest.approx(2 + 4 * 4 / 1)


def test_network_from_cluster_and_overrides():
    from optsched.cluster import Cluster
    from optsched.placement import network_for

    c = Cluster.homogeneous(3, 4, intra_bandwidth=100.0, inter_bandwidth=1.0)
    assert network_for(cluster=c) == NET4
    assert network_for(inter_bandwidth_gbs=2.5) == Network(8, 2.5, 300.0)
    assert Network.from_gbps(8, 10.0, 300.0) == Network.paper_simulation() == Network(8, 1.25, 300.0)
    assert place(two_stage(), {"s0": 4}, cluster=c).alpha == pytest.approx(6.12)
    with pytest.raises(InstanceError, match="network.gpus_per_server"):
        Network(0, 1.0, 1.0)


def test_compute_bound_and_precondition():
    job = two_stage()
    assert compute_lower_bound(job) == 6.0
    assert bandwidth_precondition(Network(8, 8.0, 1.0)) and not bandwidth_precondition(Network(8, 9.0, 1.0))
    with pytest.raises(InstanceError, match="B_inter / g"):
        require_bandwidth_precondition(Network(8, 9.0, 1.0))


def test_alpha_can_exceed_alpha_max_when_intra_bandwidth_is_too_low():
    # B_intra = 0.01 < B_inter/g = 0.25: co-locating makes the local transfers slower than the NIC slices
    net = Network(4, 1.0, 0.01)
    job = two_stage()
    assert alpha(job, net, {"a": (2, 1)}) > alpha_max(job, net)


def test_fewest_servers_layout_and_exact_alpha_min():
    job = pipeline_job("j", replicas=[3, 2], forward_ms=[1, 1], backward_ms=[1, 1], d_out_mb=[2, 0],
                       params_mb=[4, 1])
    assert fewest_servers_layout(job, 4) == [4, 1]
    exact = alpha_min(job, NET4, method="exact")
    assert exact == pytest.approx(alpha_min(job, NET4, method="enumerate"))
    assert exact <= alpha_tilde_min(job, NET4) + 1e-9


# -- validation ------------------------------------------------------------------------------------------------
def _stage(**kw):
    base = dict(replicas=1, forward_ms=1.0, backward_ms=1.0, d_in_mb=0.0, d_out_mb=0.0, params_mb=0.0)
    base.update(kw)
    return Stage(**base)


@pytest.mark.parametrize("stages, field", [
    ((_stage(d_out_mb=2.0, replicas=2), _stage(d_in_mb=3.0, replicas=1)), "stages[1].d_in_mb"),
    ((_stage(replicas=0),), "stages[0].replicas"),
    ((_stage(replicas=1.5),), "stages[0].replicas"),
    ((_stage(forward_ms=-1.0),), "stages[0].forward_ms"),
    ((_stage(params_mb=math.nan),), "stages[0].params_mb"),
    ((_stage(d_in_mb=1.0),), "stages[0].d_in_mb"),
    ((_stage(d_out_mb=1.0),), "stages[0].d_out_mb"),
    ((), "stages"),
])
def test_invalid_jobs_name_field_and_job(stages, field):
    with pytest.raises(InstanceError) as exc:
        PipelineJob("bad", stages)
    assert exc.value.field == field and exc.value.job == "bad"


def test_inconsistent_inter_stage_sizes_message():
    with pytest.raises(InstanceError, match=r"k\[0\]\*d_out_mb\[0\] = 2\*2 = 4 but k\[1\]\*d_in_mb\[1\] = 1\*3 = 3"):
        PipelineJob("bad", (_stage(d_out_mb=2.0, replicas=2), _stage(d_in_mb=3.0, replicas=1)))


def test_bad_allreduce_and_id():
    with pytest.raises(InstanceError, match="'ring' or 'tree'"):
        PipelineJob("x", (_stage(),), allreduce="mesh")
    with pytest.raises(InstanceError) as exc:
        PipelineJob("", (_stage(),))
    assert exc.value.field == "id"


def test_job_larger_than_free_gpus():
    with pytest.raises(InstanceError, match="needs 3 GPUs but only 2 are free") as exc:
        place(two_stage(), {"a": 1, "b": 1})
    assert exc.value.job == "two"


def test_alpha_rejects_placements_breaking_eq2_or_capacity():
    with pytest.raises(InstanceError, match="eq. 2"):
        alpha(two_stage(), NET4, {"a": (1, 1)})
    with pytest.raises(InstanceError, match="server with 4"):
        alpha(pipeline_job("dp", replicas=[5], forward_ms=[1], backward_ms=[1], d_out_mb=[0], params_mb=[1]),
              NET4, {"a": (5,)})


# -- JSON ------------------------------------------------------------------------------------------------------
def test_json_round_trip_and_derived_d_in(tmp_path):
    p = tmp_path / "job.json"
    save(two_stage(), p)
    assert load(p) == two_stage()
    data = to_dict(two_stage())
    for st in data["stages"]:
        del st["d_in_mb"]  # optional: derived from the previous stage
    assert from_dict(data) == two_stage()
    s = PipelineJobSet((two_stage(), catalogue_job("VGG19:pp4")))
    save(s, tmp_path / "set.json")
    assert load(tmp_path / "set.json") == s


def test_json_errors_name_path_and_job():
    data = to_dict(two_stage())
    del data["stages"][1]["forward_ms"]
    with pytest.raises(InstanceError) as exc:
        from_dict(data)
    assert exc.value.field == "stages[1].forward_ms" and exc.value.job == "two"
    bad = {"format": FORMAT, "jobs": [to_dict(two_stage()) | {"format": None}, to_dict(two_stage())]}
    bad["jobs"][0].pop("format")
    bad["jobs"][1].pop("format")  # a job inside a set carries no format of its own (unknown keys are refused)
    bad["jobs"][1]["stages"][1]["d_in_mb"] = 5.0
    with pytest.raises(InstanceError) as exc:
        from_dict(bad)
    assert exc.value.field == "jobs[1].stages[1].d_in_mb" and exc.value.job == "two"
    bad["jobs"][1]["stages"][1]["d_in_mb"] = 6.0
    with pytest.raises(InstanceError, match="duplicate job id"):
        from_dict(bad)


# -- catalogue -------------------------------------------------------------------------------------------------
TABLE_I = {"VGG19": (144, 32), "ResNet152": (60, 4), "Inception-V3": (24, 32), "BERT-large": (340, 4),
           "XLNet-large": (550, 4), "T5": (11000, 8), "GPT-6.7B": (6700, 32), "GPT-13B": (13000, 32),
           "GPT-175B": (175000, 16)}


def test_catalogue_matches_table_one():
    assert set(CATALOGUE) == set(TABLE_I) == set(MODEL_NAMES)
    for name, (params, batch) in TABLE_I.items():
        m = CATALOGUE[name]
        assert (m.params_m, m.batch_size) == (params, batch)
        if name not in ("T5", "GPT-6.7B", "GPT-13B", "GPT-175B"):  # full networks: blocks add up to Table I
            assert m.profiled_params_m == pytest.approx(params, rel=0.03)
        for c in m.configs:
            job = m.job(c.name)
            assert job.gpus == c.gpus and alpha_max(job, Network()) >= compute_lower_bound(job)


def test_gpt_layers_have_twelve_d_squared_parameters():
    # GPT-175B: d = 12288, 12 d^2 = 1811.9M parameters per layer, 3 layers, fp32 gradients
    job = catalogue_job("GPT-175B:pp3")
    assert job.stages[0].params_mb == pytest.approx(4 * 12 * 12288 ** 2 / 1e6)
    assert "GPT-175B" not in single_gpu_models() and "VGG19" in single_gpu_models()
    with pytest.raises(InstanceError, match="no configuration"):
        catalogue_job("GPT-175B:1gpu")


# -- CLI -------------------------------------------------------------------------------------------------------
def test_cli_place_prints_alpha_and_cut(tmp_path, capsys):
    p = tmp_path / "job.json"
    save(two_stage(), p)
    assert cli_main(["place", str(p), "--free", "a=2,b=1", "--gpus-per-server", "4", "--nic-gbps", "8",
                     "--intra-gbs", "100"]) == 0
    out = capsys.readouterr().out
    assert "alpha=" in out and "cut_weight=" in out
    assert cli_main(["place", "model:VGG19:pp4", "--free", "s0=4", "-a", "exact-time"]) == 0


def test_cli_place_job_set_needs_job_id(tmp_path, capsys):
    p = tmp_path / "set.json"
    save(PipelineJobSet((two_stage(), catalogue_job("VGG19:pp4", "vgg"))), p)
    assert cli_main(["place", str(p), "--free", "a=4"]) == 2
    assert "--job-id" in capsys.readouterr().err
    assert cli_main(["place", str(p), "--free", "a=2,b=2", "--job-id", "vgg", "-a", "exact-cut"]) == 0
    out = capsys.readouterr().out
    assert "algorithm=exact-cut status=optimal" in out
    assert cli_main(["place", str(p), "--free", "a=4", "--job-id", "nope"]) == 2


@pytest.mark.parametrize("free, msg", [("a=2,b", "expected SERVER=GPUS"), ("a=x", "expected SERVER=GPUS"),
                                       ("a=1,b=1", "needs 3 GPUs but only 2 are free"), ("a=1,a=2", "twice")])
def test_cli_place_bad_input_exits_2_with_one_line(tmp_path, capsys, free, msg):
    p = tmp_path / "job.json"
    p.write_text(json.dumps(to_dict(two_stage())))
    assert cli_main(["place", str(p), "--free", free]) == 2
    err = capsys.readouterr().err.strip()
    assert msg in err and "\n" not in err
