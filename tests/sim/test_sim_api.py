"""simulate()'s arguments, the policy registry and plugin import, results as JSON and plots, perf models."""

from __future__ import annotations

import json
import math
import sys
import textwrap

import pytest

import optsched
from optsched import plot
from optsched.cluster import Cluster
from optsched.errors import InstanceError
from optsched.sim import (
    Decision,
    MetricCollector,
    Placement,
    SchedulerPlacer,
    SimulationStalled,
    Simulator,
    Workload,
    WorkloadJob,
    build_admission,
    build_perf,
    build_policy,
    build_scheduling,
    policies,
    register_scheduler,
    simulate,
)
from optsched.sim.registry import unregister

WL = Workload((WorkloadJob("a", 0, 2, 100, 1.0), WorkloadJob("b", 10, 1, 50, 1.0), WorkloadJob("c", 20, 1, 30, 1.0)))


def test_top_level_lazy_simulate():
    r = optsched.simulate(WL, servers=1, gpus_per_server=2, mode="event")
    assert r.jobs["completion_s"].tolist() == [100, 150, 130]


@pytest.mark.parametrize("kw, field", [
    ({"mode": "batch"}, "mode"),
    ({"round_s": 0}, "round_s"),
    ({"scheduler": "lottery"}, "scheduler"),
    ({"placement": "random"}, "placement"),
    ({"admission": "accept-some"}, "admission"),
    ({"admission": {"name": "accept-k", "k": -1}}, "k"),
    ({"scheduler": {"name": "tiresias", "thresholds_gpu_s": [5, 1]}}, "thresholds_gpu_s"),
    ({"scheduler": {"name": "las", "service": "flops"}}, "service"),
    ({"scheduler": "fifo", "bogus_option": 1}, "scheduler"),
    ({"scheduler": {"thresholds_gpu_s": [1]}}, "scheduler"),
    ({"perf": "oracle"}, "perf"),
    ({"restore_s": -1}, "restore_s"),
    ({"servers": 0}, "servers"),
    ({"cluster": "big"}, "cluster"),
])
def test_bad_arguments(kw, field):
    kw = {"servers": 1, "gpus_per_server": 2, **kw}
    if "cluster" in kw:
        kw.pop("servers"), kw.pop("gpus_per_server")
    with pytest.raises(InstanceError) as ei:
        simulate(WL, **kw)
    assert ei.value.field == field


def test_unknown_name_lists_known():
    with pytest.raises(InstanceError, match="known: .*fifo.*las.*srtf.*tiresias"):
        build_scheduling("nope")


def test_register_scheduler_and_combined_module():
    @register_scheduler("test-first-only")
    class FirstOnly(SchedulerPlacer):
        """Combined scheduling + placement: starts only the first job of the workload, on server 0."""
        name = "test-first-only"

        def decide(self, view):
            d = Decision()
            for j in view.jobs.active.values():
                if j.index == 0 and j.status == "queued":
                    d.launch[j] = Placement.of({0: j.gpus})
            return d

    try:
        wl = Workload((WorkloadJob("a", 0, 1, 10, 1.0), WorkloadJob("b", 0, 1, 10, 1.0)))
        assert isinstance(build_policy("test-first-only", "ignored-placement"), FirstOnly)
        with pytest.raises(SimulationStalled):
            simulate(wl, servers=1, gpus_per_server=2, scheduler="test-first-only", mode="event")
    finally:
        unregister("scheduler", "test-first-only")


def test_module_class_names_resolve_without_registration(tmp_path, monkeypatch):
    mod = tmp_path / "fake_sim_plugin_xyz.py"
    mod.write_text(textwrap.dedent("""
        from optsched.sim.policies import Fifo

        class PluginFifo(Fifo):
            name = "plugin-fifo"
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        r = simulate(WL, servers=1, gpus_per_server=2, scheduler="fake_sim_plugin_xyz:PluginFifo", mode="event")
        assert r.config["scheduler"]["name"] == "plugin-fifo"
        assert r.jobs["completion_s"].tolist() == [100, 150, 130]
        with pytest.raises(InstanceError, match="cannot import 'fake_sim_plugin_xyz:Nope'"):
            build_scheduling("fake_sim_plugin_xyz:Nope")
    finally:
        sys.modules.pop("fake_sim_plugin_xyz", None)


def test_seed_reaches_policies_that_take_one():
    class Seeded(policies.Fifo):
        def __init__(self, seed=None, **kw):
            super().__init__(**kw)
            self.seed = seed

    register_scheduler("test-seeded")(Seeded)
    try:
        assert build_policy("test-seeded", seed=11).scheduling.seed == 11
        r = simulate(WL, servers=1, gpus_per_server=2, scheduler="test-seeded", seed=5)
        assert r.config["seed"] == 5
    finally:
        unregister("scheduler", "test-seeded")


def test_collectors_and_result_json(tmp_path):
    class CountRounds(MetricCollector):
        name = "rounds"

        def __init__(self):
            self.n = 0

        def collect(self, view):
            self.n += 1

        def result(self):
            return self.n

    c = CountRounds()
    r = simulate(WL, servers=1, gpus_per_server=2, mode="event", collectors=[c], label="hand")
    assert r.custom == {"rounds": r.summary["decisions"]} and c.n > 0
    p = tmp_path / "res.json"
    r.save(p)
    doc = json.loads(p.read_text())
    assert doc["format"] == "optsched/sim-result@1" and doc["config"]["label"] == "hand"
    assert [j["completion_s"] for j in doc["jobs"]] == [100, 150, 130]
    assert doc["summary"]["avg_jct_s"] == pytest.approx(350 / 3)
    assert len(doc["timeseries"]["t_s"]) == len(r.timeseries)


def test_plots_are_written(tmp_path):
    import pandas as pd

    r = simulate(WL, servers=1, gpus_per_server=2, mode="event")
    plot.save_jct_cdf({"fifo": r}, tmp_path / "cdf.png")
    plot.save_timeline(r, tmp_path / "tl.png")
    table = pd.DataFrame({"load": [1, 2, 1, 2], "scheduler": ["fifo", "fifo", "las", "las"],
                          "avg_jct_s": [3600, 7200, 3000, 9000]})
    plot.save_vs_load(table, tmp_path / "load.png")
    for name in ("cdf.png", "tl.png", "load.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_stop_when_tracked_done_and_max_time():
    wl = Workload((WorkloadJob("a", 0, 1, 10, 1.0), WorkloadJob("b", 0, 1, 1000, 1.0, tracked=False)))
    r = simulate(wl, servers=1, gpus_per_server=2, mode="event", stop_when_tracked_done=True)
    assert r.jobs.set_index("id")["completion_s"].to_dict()["a"] == 10
    assert math.isnan(r.jobs.set_index("id").loc["b", "completion_s"])
    r = simulate(wl, servers=1, gpus_per_server=2, mode="event", max_time_s=500)
    assert r.summary["finished_tracked"] == 1 and r.summary["end_s"] <= 500


def test_simulator_runs_again_from_scratch():
    # run() starts with reset(): a second run of the same simulator gives the same result
    sim = Simulator(WL, Cluster.homogeneous(1, 2), mode="event")
    a = sim.run()
    b = sim.run()
    assert a.jobs.drop(columns=[]).equals(b.jobs) and a.jobs["completion_s"].tolist() == [100, 150, 130]
    with pytest.raises(RuntimeError, match="no decision is due"):
        sim.apply(Decision())


def test_builders_accept_objects_and_dicts():
    adm = build_admission({"name": "accept-k", "k": 1.4})
    assert adm.k == 1.4 and build_admission(adm) is adm
    assert build_perf(None).name == "constant" and build_perf({"name": "constant", "cross_server_factor": 1.0}) \
        .cross_server_factor == 1.0


def test_rar_continuous_model_in_the_engine():
    # paper 000's contention model: two 2-GPU jobs split over the same two servers contend (p = 2), so each
    # runs slower than alone; the engine recomputes both rates when the second starts and when it finishes.
    import dataclasses

    from optsched.generators.rar import tiny_rar_example
    from optsched.perf.rar import iteration_time
    from optsched.perf.rar_continuous import RarContinuousPerf

    inst = dataclasses.replace(tiny_rar_example(), contention_xi=1.0)  # k = p: two split jobs do contend
    rj = next(j for j in inst.jobs if j.gpus >= 2)
    perf = RarContinuousPerf(inst, slot_s=1.0)
    t_alone = iteration_time(inst, rj, 2, 1)
    t_shared = iteration_time(inst, rj, 2, 2)
    assert t_shared > t_alone
    # x alone for 50 iterations; y arrives then and both run at the shared speed until x's last 50 are done
    # (50 t_shared later); y, with 50 done, finishes its last 50 alone.
    wl = Workload((WorkloadJob("x", 0, 2, 100, 1.0, spec=rj), WorkloadJob("y", 50 * t_alone, 2, 100, 1.0, spec=rj)))
    r = simulate(wl, Cluster.homogeneous(2, 2), placement="scattered", perf=perf, mode="event")
    x_done = 50 * t_alone + 50 * t_shared
    assert r.jobs["completion_s"].tolist() == pytest.approx([x_done, x_done + 50 * t_alone])


def test_policy_object_reused_across_runs():
    # a Composed keeps incremental state; reusing the object for a second run must give the same result
    pol = build_policy("las", "consolidated")
    a = simulate(WL, servers=1, gpus_per_server=2, scheduler=pol, mode="event")
    b = simulate(WL, servers=1, gpus_per_server=2, scheduler=pol, mode="event")
    assert a.jobs["completion_s"].tolist() == b.jobs["completion_s"].tolist() == [140, 150, 50]


def test_cluster_state_gpu_frame_seen_by_a_collector():
    # Blox's per-GPU data frame: one row per GPU; IN_USE rows match the busy GPUs and name their job
    frames = []

    class Snap(MetricCollector):
        name = "snap"

        def collect(self, view):
            frames.append((view.now, view.cluster.gpu_frame(), view.cluster.busy_gpus))

    simulate(WL, Cluster.homogeneous(2, 2), mode="event", collectors=[Snap()], placement="first-free")
    t, df, busy = frames[0]  # t=0: a holds 2 GPUs of server s0
    assert len(df) == 4 and int(df["IN_USE"].sum()) == busy == 2
    assert df.loc[df["IN_USE"], "JOB_IDS"].tolist() == ["a", "a"]
    assert df.loc[df["IN_USE"], "Node_ID"].tolist() == ["s0", "s0"]
