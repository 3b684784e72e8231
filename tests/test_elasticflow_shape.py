"""The ElasticFlow-shaped generator's defaults (calibrated to the public Fig. 8a trace's statistics, issue 25) and its
first shape (``EF_SHAPE_V1``), checked statistically against the parameters that define them, recomputed here
from their definitions (mixture moments, weights, the fixed work per model)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optsched.errors import InstanceError
from optsched.generators.deadline import (
    EF_ASKS,
    EF_BURSTS,
    EF_PROFILES,
    EF_SHAPE_V1,
    EF_WORK_H,
    elasticflow_shaped_workload,
)


def _run_on_ask(j) -> float:
    return j.iterations / dict(j.throughput)[j.gpus]


def _gap_cv(wl) -> float:
    g = np.diff(np.sort([j.arrival_s for j in wl.jobs]))
    return float(g.std() / g.mean())


def _batch_index(j) -> int:
    return EF_PROFILES[j.model][3].index(j.batch)


def test_default_work_is_fixed_per_model_and_batch():
    wl = elasticflow_shaped_workload(300, seed=7)
    for j in wl.jobs:
        one_gpu_s = j.iterations / dict(j.throughput)[1]
        want = EF_WORK_H[j.model][_batch_index(j)] * 3600.0
        assert one_gpu_s == pytest.approx(want, abs=1.0 / dict(j.throughput)[1])   # within one iteration
    # the run time on the requested count follows from it: the longest jobs are those of the longest model
    longest = max(wl.jobs, key=_run_on_ask)
    assert longest.model == max(EF_WORK_H, key=lambda m: EF_WORK_H[m][0])


def test_work_sigma_spreads_the_work_around_the_models():
    wl = elasticflow_shaped_workload(400, seed=3, work_sigma=0.5)
    ratios = np.array([j.iterations / dict(j.throughput)[1] / (EF_WORK_H[j.model][_batch_index(j)] * 3600.0)
                       for j in wl.jobs])
    assert np.std(np.log(ratios)) == pytest.approx(0.5, rel=0.15)
    assert abs(np.median(np.log(ratios))) < 0.1


def test_requested_counts_follow_the_weights_whatever_the_model():
    n = 4000
    wl = elasticflow_shaped_workload(n, seed=11)
    asks = np.array([j.gpus for j in wl.jobs])
    total = sum(w for _, w in EF_ASKS)
    for c, w in EF_ASKS:
        p = w / total
        assert abs(np.mean(asks == c) - p) <= 4 * math.sqrt(p * (1 - p) / n) + 1e-9, c
    # the trace's users ask for counts slower than a smaller one: so do ours by default, never in the first shape
    assert any(j.gpus > EF_PROFILES[j.model][2] for j in wl.jobs)
    old = elasticflow_shaped_workload(2000, seed=11, **EF_SHAPE_V1)
    assert all(j.gpus <= EF_PROFILES[j.model][2] for j in old.jobs)
    assert {j.gpus for j in old.jobs} <= {c for c, _ in EF_SHAPE_V1["asks"]}


def test_counts_above_the_cluster_are_never_asked():
    wl = elasticflow_shaped_workload(300, nodes=1, gpus_per_node=4, seed=2)
    assert max(j.gpus for j in wl.jobs) <= 4


def test_arrival_gaps_have_the_burst_mixtures_variation_and_the_offered_load():
    p, a = EF_BURSTS
    b = (1 - p * a) / (1 - p)                    # the long gaps' mean, so that the mean gap is 1
    cv = math.sqrt(2 * (p * a * a + (1 - p) * b * b) - 1)      # second moment of an exponential: 2 m^2
    wl = elasticflow_shaped_workload(4000, seed=5)
    assert _gap_cv(wl) == pytest.approx(cv, abs=0.25)
    poisson = elasticflow_shaped_workload(4000, seed=5, bursts=None)
    assert _gap_cv(poisson) == pytest.approx(1.0, abs=0.1)
    for w, load in ((wl, 3.0), (elasticflow_shaped_workload(4000, seed=6, load=1.5), 1.5)):
        arr = [j.arrival_s for j in w.jobs]
        offered = sum(j.gpus * _run_on_ask(j) for j in w.jobs) / (w.total_gpus * (max(arr) - min(arr)))
        assert offered == pytest.approx(load, rel=0.15)


@pytest.mark.parametrize("kw", [{}, EF_SHAPE_V1])
def test_deadlines_are_the_slack_times_the_run_time_on_the_requested_count(kw):
    wl = elasticflow_shaped_workload(300, seed=9, slack=(0.7, 1.2), **kw)
    f = np.array([(j.deadline_s - j.arrival_s) / _run_on_ask(j) for j in wl.jobs])
    runs = np.array([_run_on_ask(j) for j in wl.jobs])
    tol = 2e-3 / runs                               # arrivals and deadlines are rounded to milliseconds
    assert np.all(f >= 0.7 - tol) and np.all(f <= 1.2 + tol)
    assert np.quantile(f, 0.5) == pytest.approx(0.95, abs=0.1)


def test_the_first_shape_draws_log_normal_run_times_on_the_requested_count():
    wl = elasticflow_shaped_workload(2000, seed=4, **EF_SHAPE_V1)
    h = np.array([_run_on_ask(j) for j in wl.jobs]) / 3600.0
    assert h.min() >= 0.01 - 1e-3 and h.max() <= 200.0 + 1e-3        # the clip
    assert np.median(h) == pytest.approx(3.0, rel=0.2)
    inner = np.log(h[(h > 0.02) & (h < 150)])
    assert np.quantile(inner, 0.75) - np.quantile(inner, 0.25) == pytest.approx(2 * 0.6745 * 1.8, rel=0.15)
    assert _gap_cv(wl) == pytest.approx(1.0, abs=0.1)
    # not fixed per model: the same model and batch have many works
    works = {(j.model, j.batch, j.iterations) for j in wl.jobs}
    assert len(works) > 100


@pytest.mark.parametrize("kw, field", [({"work": "uniform"}, "work"), ({"work_sigma": -1.0}, "work_sigma"),
                                       ({"asks": ()}, "asks"), ({"asks": ((0, 1.0),)}, "asks"),
                                       ({"asks": ((1, 0.0),)}, "asks"), ({"asks": "x"}, "asks"),
                                       ({"bursts": (0.9, 2.0)}, "bursts"), ({"bursts": (1.5, 0.1)}, "bursts")])
def test_bad_settings_name_their_field(kw, field):
    with pytest.raises(InstanceError) as e:
        elasticflow_shaped_workload(5, **kw)
    assert e.value.field == field
