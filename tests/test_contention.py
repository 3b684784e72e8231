"""Paper 004's data, contention rule, generator, file format and the simulator's round semantics (issue 13)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.sim.shared_data import DEEPSHARE, needs_data

import optsched
from optsched.cli import main
from optsched.errors import InstanceError
from optsched.generators.contention import MIX_MODELS, mix_weights, random_contention_instance, to_workload
from optsched.perf.measured import RATIO_FLOOR, MeasuredPerf, hour_samples, load_tables
from optsched.problems.contention import ContentionInstance, ContentionJob, from_dict, to_dict
from optsched.sim import WorkloadJob, simulate
from optsched.sim.contention.runner import round_up
from optsched.sim.registry import scheduler_names

pytestmark = needs_data(*DEEPSHARE)

ALL = ["contention-las", "contention-srtf", {"name": "contention-las", "repo_keys": True},
       {"name": "contention-srtf", "repo_keys": True}, "widest-first-fit", "contention-random", "contention-greedy",
       "rl-base", "rl-hybrid"]


def _label(p):
    return p if isinstance(p, str) else p["name"] + "-repo"


# -- the contention rule ---------------------------------------------------------------------------------------
def test_floor_applies_to_ratios_below_it():
    perf = MeasuredPerf()
    (target, other), r = min(perf.ratio.items(), key=lambda kv: kv[1])
    assert r < RATIO_FLOOR  # the table's minimum is 0.123
    got = perf.fresh_ratios({"a": (target, (0, 1)), "b": (other, (1, 2))})
    assert got["a"] == RATIO_FLOOR


def test_single_node_jobs_neither_suffer_nor_cause_contention():
    perf = MeasuredPerf()
    moe, fsdp = ("MoE", 4, 2), ("FSDP", 8, 2)
    split = perf.fresh_ratios({"a": (moe, (0, 1)), "b": (fsdp, (0, 1))})
    assert split["a"] < 1 and split["b"] < 1
    single = perf.fresh_ratios({"a": (moe, (0, 1)), "b": (fsdp, (0,))})
    assert single == {"a": 1.0, "b": 1.0}


def test_ratios_are_asymmetric_as_measured():
    perf = MeasuredPerf()
    a, b = ("MoE", 4, 4), ("FSDP", 8, 8)
    assert perf.ratio[(a, b)] != perf.ratio[(b, a)]
    got = perf.fresh_ratios({"x": (a, (0, 1, 2, 3)), "y": (b, (0, 1, 2, 3))})
    assert got["x"] == pytest.approx(max(perf.ratio[(a, b)], RATIO_FLOOR))
    assert got["y"] == pytest.approx(max(perf.ratio[(b, a)], RATIO_FLOOR))
    assert got["x"] != got["y"]


def test_ratio_is_the_minimum_over_neighbours_sharing_a_node():
    perf = MeasuredPerf()
    me, n1, n2, far = ("DLRM", 4, 2), ("MoE", 4, 2), ("GraphSage", 2, 2), ("FSDP", 4, 2)
    got = perf.fresh_ratios({"me": (me, (0, 1)), "n1": (n1, (1, 2)), "n2": (n2, (0, 3)), "far": (far, (2, 3))})
    expect = max(min(perf.ratio[(me, n1)], perf.ratio[(me, n2)]), RATIO_FLOOR)
    assert got["me"] == pytest.approx(expect)  # "far" shares no node with "me": not counted
    assert perf.ratio[(me, far)] < expect or got["me"] == pytest.approx(expect)


def test_sticky_ratio_never_rises_until_the_job_is_placed_again():
    from optsched.sim.state import Placement

    class J:
        def __init__(self, id, model, gpus, pl, launches=1):
            self.id, self.model, self.gpus, self.placement, self.launches, self.migrations = id, model, gpus, pl, \
                launches, 0
            self.iteration_time_s, self.spec = 1.0, None

    perf = MeasuredPerf(sticky=True)
    a = J("a", "MoE", 4, Placement((0, 1), (2, 2)))
    b = J("b", "FSDP", 4, Placement((1, 2), (2, 2)))
    perf.iteration_times_s([a, b], None)
    low = perf.ratio_of("a")
    assert low < 1
    perf.iteration_times_s([a], None)          # b left: a keeps its ratio
    assert perf.ratio_of("a") == low
    a.launches = 2                             # a relaunched: fresh again
    perf.iteration_times_s([a], None)
    assert perf.ratio_of("a") == 1.0
    fresh = MeasuredPerf()
    fresh.iteration_times_s([J("a", "MoE", 4, a.placement), b], None)
    fresh.iteration_times_s([J("a", "MoE", 4, a.placement)], None)
    assert fresh.ratio_of("a") == 1.0          # without sticky the ratio rises at once


def test_tables_and_hour_samples():
    isolated, ratio = load_tables()
    assert len(isolated) == 36 and len(ratio) == 36 * 36
    # samples = 3600 s x the mean isolated throughput of the multi-node splits (within the file's rounding)
    for model in ("MobileNetV3", "MoE"):
        mean = (isolated[(model, 4, 2)] + isolated[(model, 4, 4)]) / 2
        assert hour_samples(model, 4) == pytest.approx(3600 * mean, rel=1e-4)
    perf = MeasuredPerf(extrapolate=True)
    assert perf.throughput("MoE", 16, 4) == pytest.approx(2 * isolated[("MoE", 8, 4)])
    with pytest.raises(InstanceError, match="no measured profile"):
        MeasuredPerf().throughput("MoE", 16, 4)


# -- generator and file format ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mix", ["normal", "heavy", "medium", "low"])
def test_mixes_give_every_model_its_exact_share(mix):
    inst = random_contention_instance(jobs=256, mix=mix, seed=4)
    w = mix_weights(mix)
    counts = {m: sum(j.model == m for j in inst.jobs) for m in MIX_MODELS}
    for m in MIX_MODELS:
        assert abs(counts[m] - 256 * w[m]) < 1
    assert {j.gpus for j in inst.jobs} == {2, 4, 8} and all(j.arrival_s == 0 for j in inst.jobs)
    assert random_contention_instance(jobs=256, mix=mix, seed=4) == inst
    assert random_contention_instance(jobs=256, mix=mix, seed=5) != inst


def test_generator_variants():
    assert mix_weights("heavy", "repo")["MoE"] == 2 * mix_weights("heavy", "repo")["GraphSage"]
    assert mix_weights("heavy", "paper")["MoE"] == 4 * mix_weights("heavy", "paper")["GraphSage"]
    p = random_contention_instance(jobs=50, seed=1, arrival="poisson", load=0.5)
    arr = [j.arrival_s for j in p.jobs]
    assert arr[0] == 0 and all(b >= a for a, b in zip(arr, arr[1:])) and arr[-1] > 0
    big = random_contention_instance(jobs=200, seed=1, max_gpus=32)
    assert {16, 32} <= {j.gpus for j in big.jobs}
    half = random_contention_instance(jobs=5, seed=1, hours=0.5)
    assert to_workload(half).jobs[0].duration_alone_s == pytest.approx(1800)
    with pytest.raises(InstanceError, match="mix"):
        random_contention_instance(mix="weird")


def test_file_round_trip_and_errors_name_field_and_job(tmp_path):
    inst = random_contention_instance(jobs=6, seed=2, arrival="poisson")
    path = tmp_path / "i.json"
    optsched.save(inst, path)
    assert optsched.load(path) == inst
    doc = to_dict(inst)
    doc["jobs"][1]["gpus"] = 3
    with pytest.raises(InstanceError) as e:
        from_dict(doc)
    assert e.value.field == "jobs[1].gpus" and e.value.job == inst.jobs[1].id
    doc = to_dict(inst)
    doc["jobs"][0]["sampels"] = 1
    with pytest.raises(InstanceError, match="unknown field"):
        from_dict(doc)
    doc = to_dict(inst)
    doc["jobs"][2]["model"] = "BERT"
    with pytest.raises(InstanceError) as e:
        from_dict(doc)
    assert e.value.field == "jobs[2].model"
    with pytest.raises(InstanceError, match="duplicate"):
        ContentionInstance((ContentionJob("a", "MoE", 2, 1.0), ContentionJob("a", "MoE", 2, 1.0)))


def test_cli_generate_and_bad_input(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["generate", "contention", "--jobs", "10", "--mix", "low", "--seed", "3", "-o", str(out)]) == 0
    inst = optsched.load(out)
    assert isinstance(inst, ContentionInstance) and inst.meta["mix"] == "low"
    wl = tmp_path / "w.json"
    assert main(["generate", "contention", "--jobs", "10", "--workload", "-o", str(wl)]) == 0
    assert json.loads(wl.read_text())["format"] == "optsched/workload@1"
    bad = tmp_path / "bad.json"
    doc = to_dict(inst)
    doc["jobs"][0]["samples"] = -1
    bad.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["solve", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "jobs[0].samples" in err and inst.jobs[0].id in err


def test_generate_door():
    inst = optsched.generate("contention", jobs=5, seed=1, hours=0.25)
    assert isinstance(inst, ContentionInstance) and inst.n_jobs == 5


# -- the simulator's round semantics ---------------------------------------------------------------------------
def _capacity_ok(run, inst):
    for _, cfg in run.custom["contention_rounds"]["plan"]:
        used = np.zeros(inst.nodes, dtype=int)
        for jid, nodes in cfg.items():
            g = inst.job(jid).gpus
            assert g % len(nodes) == 0 and len(nodes) in (2, 4)
            used[list(nodes)] += g // len(nodes)
        assert (used <= inst.gpus_per_node).all()


@given(seed=st.integers(0, 10_000), mix=st.sampled_from(["normal", "heavy", "low"]),
       policy=st.sampled_from(range(len(ALL))))
def test_every_policy_keeps_capacity_conserves_samples_and_never_beats_isolation(seed, mix, policy):
    inst = random_contention_instance(jobs=10, mix=mix, seed=seed, hours=0.25)
    run = simulate(inst, scheduler=ALL[policy], seed=seed)
    assert run.custom["contention"]["finished"] == inst.n_jobs
    _capacity_ok(run, inst)
    perf = MeasuredPerf()
    for job in run.job_objects:
        spec = inst.job(job.id)
        done = sum(seg[3] for seg in job.segments)
        assert done == pytest.approx(spec.samples, rel=1e-9)          # samples conserved
        fastest = max(perf.throughput(spec.model, spec.gpus, n) for n, _ in inst.splits(spec.gpus))
        for t0, t1, pl, it in job.segments:                           # never faster than alone
            assert it <= perf.throughput(spec.model, spec.gpus, len(pl.servers)) * (t1 - t0) * (1 + 1e-9)
        row = run.jobs.set_index("id").loc[job.id]
        # every JCT at least the isolated time; the round JCT up to the rounding's own tolerance (a millionth of
        # a round: runner.round_up), the exact one up to float error
        assert row["round_jct_s"] >= spec.samples / fastest - 1e-6 * inst.round_s
        assert row["runtime_jct_s"] >= spec.samples / fastest - 1e-6
        assert row["round_completion_s"] % inst.round_s == 0


def test_rates_are_constant_within_a_round():
    # the sticky ratios change only when a job is placed, i.e. at round boundaries: every segment's rate is
    # set at its start and no job's progress rate changes inside a round
    inst = random_contention_instance(jobs=24, seed=3, hours=0.5)
    run = simulate(inst, scheduler="widest-first-fit")
    for job in run.job_objects:
        for t0, t1, _, _ in job.segments:
            assert t0 % inst.round_s == 0
            assert t1 % inst.round_s == 0 or t1 == job.completion_s


def test_threshold_preemption_and_its_absence():
    inst = random_contention_instance(jobs=40, mix="heavy", seed=0, hours=0.5)
    on = simulate(inst, scheduler="widest-first-fit")
    off = simulate(inst, scheduler="widest-first-fit", threshold=None)
    hits = [r.custom["contention"]["threshold_preemptions"] for r in (on, off)]
    assert hits[0] > 0 and hits[1] == 0
    # with the rule, no job runs two rounds at a ratio at or below the threshold on one placement
    for job in on.job_objects:
        for t0, t1, _, _ in job.segments:
            low = [r[job.id] for t, r in on.custom["contention_rounds"]["ratios"]
                   if t0 <= t < t1 and job.id in r and r[job.id] <= inst.threshold]
            assert len(low) <= 1
    assert any(r <= inst.threshold for _, rr in off.custom["contention_rounds"]["ratios"] for r in rr.values())


def test_las_and_srtf_textbook_and_repository_keys():
    # two equal jobs that cannot run together: textbook LAS alternates (least attained first), the repository's
    # inverted LAS runs one to completion; SRTF is the reverse
    jobs = (ContentionJob("a", "MoE", 8, hour_samples("MoE", 8) * 0.5), ContentionJob("b", "MoE", 8,
                                                                                      hour_samples("MoE", 8) * 0.5))
    jobs = jobs + tuple(ContentionJob(f"f{i}", "MoE", 8, hour_samples("MoE", 8) * 0.5) for i in range(3))
    inst = ContentionInstance(jobs, nodes=2, gpus_per_node=8)
    res = {}
    for name in ("contention-las", "contention-srtf"):
        for repo in (False, True):
            run = simulate(inst, scheduler={"name": name, "repo_keys": repo})
            res[(name, repo)] = run.custom["contention"]["avg_jct_s"]
    assert res[("contention-las", False)] > res[("contention-las", True)]
    assert res[("contention-srtf", False)] < res[("contention-srtf", True)]
    assert res[("contention-srtf", False)] == res[("contention-las", True)]


def test_policies_are_registered_and_run_on_any_workload():
    wl = to_workload(random_contention_instance(jobs=4, seed=0, hours=0.25))
    for name in scheduler_names("contention"):
        if name.startswith("rl"):
            continue
        r = simulate(wl, servers=4, gpus_per_server=8, scheduler=name, perf={"name": "measured", "sticky": True})
        assert r.summary["finished_tracked"] == 4
    # with another performance model they run contention-blind; jobs the table cannot place use first-free GPUs
    for name in scheduler_names("contention"):
        r = simulate(wl, servers=4, gpus_per_server=8, scheduler=name)
        assert r.summary["finished_tracked"] == 4
    odd = to_workload(random_contention_instance(jobs=4, seed=0, hours=0.25)).with_jobs(
        [WorkloadJob(f"o{i}", 0.0, 3, 100.0, 1.0) for i in range(3)])
    for name in scheduler_names("contention"):
        if name.startswith("rl"):
            with pytest.warns(UserWarning, match="8 actions"):  # the agent cannot see 2 nodes
                r = simulate(odd, servers=2, gpus_per_server=4, scheduler=name)
        else:
            r = simulate(odd, servers=2, gpus_per_server=4, scheduler=name)
        assert r.summary["finished_tracked"] == 3


def test_round_up():
    assert round_up(600.0, 300) == 600 and round_up(600.5, 300) == 900 and math.isclose(round_up(1e-9, 300), 0)


def test_the_shipped_agent_runs_without_torch_gymnasium_or_sb3():
    import subprocess
    import sys

    code = ("import sys\n"
            "for m in ('torch', 'gymnasium', 'stable_baselines3', 'sb3_contrib'):\n"
            "    sys.modules[m] = None\n"
            "from optsched.generators.contention import random_contention_instance\n"
            "from optsched.sim import simulate\n"
            "r = simulate(random_contention_instance(jobs=6, seed=0, hours=0.25), scheduler='rl-hybrid')\n"
            "print(r.custom['contention']['finished'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "6"


@pytest.mark.parametrize("patch", [("jobs", 0, "gpus", 3), ("jobs", 0, "model", "ResNet"), ("jobs", 0, "samples", 0),
                                   ("jobs", 0, "sampels", 1.0), ("jobs", 0, "arrival_s", -1.0), ("floor", 1.5),
                                   ("round_s", 0), ("nodes", 0)])
def test_the_schema_accepts_what_we_write_and_refuses_what_the_reader_refuses(patch):
    jsonschema = pytest.importorskip("jsonschema")
    from optsched.io import schema

    inst = random_contention_instance(jobs=6, seed=2, max_gpus=32, arrival="poisson")
    doc = to_dict(inst)
    jsonschema.validate(doc, schema(doc["format"]))
    if len(patch) == 4:
        doc["jobs"][patch[1]][patch[2]] = patch[3]
    else:
        doc[patch[0]] = patch[1]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema(doc["format"]))
    with pytest.raises(InstanceError):
        from_dict(doc)
