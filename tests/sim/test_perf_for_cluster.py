"""simulate(perf="mixed") takes the cluster's GPUs per server; an explicit value that disagrees is an error."""

import pytest

from optsched.errors import InstanceError
from optsched.generators.recurring import spec_of
from optsched.problems.workload import Workload, WorkloadJob
from optsched.sim import simulate


def _workload():
    spec = spec_of("VGG19:dp4")
    return Workload((WorkloadJob("a", 0, spec.gpus, 10, 1.0, spec=spec),))


@pytest.mark.parametrize("g", [4, 8])
def test_mixed_perf_follows_the_cluster(g):
    wl = _workload()
    r = simulate(wl, servers=4, gpus_per_server=g, scheduler="fifo", perf="mixed", mode="event")
    assert r.config["perf"]["gpus_per_server"] == g
    assert r.jobs["completion_s"].notna().all()


def test_explicit_mismatch_is_a_clear_error():
    with pytest.raises(InstanceError, match="gpus_per_server"):
        simulate(_workload(), servers=4, gpus_per_server=4, perf={"name": "mixed", "gpus_per_server": 8},
                 mode="event")
