"""Iteration predictors (optsched.predict) on small hand-made histories; expected values derived by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from optsched.errors import InstanceError
from optsched.predict import (
    PREDICTORS,
    MeanPredictor,
    MedianPredictor,
    PerfectPredictor,
    RandomForestPredictor,
    evaluate_predictors,
    make_predictor,
    train_test_split_by_time,
)


def rec(group, user, iterations=None, **extra):
    r = {"group_id": group, "user_id": user, **extra}
    if iterations is not None:
        r["iterations"] = iterations
    return r


# group "a": 10, 20, 60 (mean 30, median 20); group "b": 5, 7, 9, 100 (mean 30.25, median 8); group 3: 4
HISTORY = [rec("a", "u1", 10), rec("b", "u2", 5), rec("a", "u1", 20), rec("b", "u2", 7), rec("a", "u3", 60),
           rec("b", "u2", 9), rec("b", "u2", 100), rec(3, "u1", 4)]
QUERIES = [rec("a", "u1"), rec("b", "u2"), rec(3, "u1"), rec("never-seen", "u1"), rec("a", "new-user")]


def test_mean_hand_computed_and_unseen_zero():
    got = MeanPredictor().fit(HISTORY).predict(QUERIES)
    assert got.tolist() == [30.0, 30.25, 4.0, 0.0, 30.0]


def test_median_hand_computed_and_unseen_zero():
    # even count in "b": median of 5, 7, 9, 100 is (7 + 9) / 2
    got = MedianPredictor().fit(HISTORY).predict(QUERIES)
    assert got.tolist() == [20.0, 8.0, 4.0, 0.0, 20.0]


def test_dataframe_and_records_give_the_same_predictions():
    for cls in (MeanPredictor, MedianPredictor):
        a = cls().fit(HISTORY).predict(QUERIES)
        b = cls().fit(pd.DataFrame(HISTORY).set_index(pd.Index(range(100, 108)))).predict(pd.DataFrame(QUERIES))
        assert np.array_equal(a, b)


def test_random_forest_paper_configuration():
    rf = RandomForestPredictor(seed=3).fit(HISTORY)
    assert rf.model.n_estimators == 100 and rf.model.criterion == "squared_error"
    assert rf.model.random_state == 3
    assert rf.model.n_features_in_ == 2  # group id and user id only


def test_random_forest_unseen_group_is_zero_and_seen_within_target_range():
    p = RandomForestPredictor(seed=0).fit(HISTORY).predict(QUERIES)
    assert p[3] == 0.0
    # a forest averages leaf means of training targets, so every prediction lies in [min, max] of the history
    assert all(4 <= v <= 100 for v in np.delete(p, 3))


def test_random_forest_reproducible_for_a_seed():
    a = RandomForestPredictor(seed=11).fit(HISTORY).predict(QUERIES)
    b = RandomForestPredictor(seed=11).fit(HISTORY).predict(QUERIES)
    assert np.array_equal(a, b)


def test_random_forest_recovers_groups_with_constant_iterations():
    # 30 jobs per group: a bootstrap sample of 90 misses a whole group with probability (2/3)^90 < 1e-15,
    # so every tree separates the three groups into pure leaves and predicts each group's constant exactly
    values = {"x": 10.0, "y": 50.0, "z": 200.0}
    history = [rec(g, f"u{g}", v) for _ in range(30) for g, v in values.items()]
    got = RandomForestPredictor(seed=5).fit(history).predict([rec(g, f"u{g}") for g in values] + [rec("w", "ux")])
    assert got.tolist() == [10.0, 50.0, 200.0, 0.0]


def test_perfect_returns_true_iterations_exactly():
    jobs = [rec("a", "u", 7), rec("zz", "u", 0), rec("b", "u", 123456789)]
    assert PerfectPredictor().fit(HISTORY).predict(jobs).tolist() == [7.0, 0.0, 123456789.0]


def test_perfect_needs_the_iterations_column():
    with pytest.raises(InstanceError) as e:
        PerfectPredictor().fit(HISTORY).predict(QUERIES)
    assert e.value.field == "iterations"


@pytest.mark.parametrize("missing", ["group_id", "user_id", "iterations"])
def test_missing_column_names_the_field(missing):
    history = [{k: v for k, v in r.items() if k != missing} for r in HISTORY]
    for name in PREDICTORS:
        if name == "perfect":
            continue
        with pytest.raises(InstanceError) as e:
            make_predictor(name).fit(history)
        assert e.value.field == missing
        assert missing in str(e.value)


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf"), "12", None, True])
def test_bad_iterations_name_field_and_job(bad):
    history = [rec("a", "u", 3, job_id="j0"), rec("a", "u", bad, job_id="j1")]
    with pytest.raises(InstanceError) as e:
        MeanPredictor().fit(history)
    assert e.value.field == "iterations" and e.value.job == "j1"


def test_missing_group_value_names_the_job_by_position():
    with pytest.raises(InstanceError) as e:
        MeanPredictor().fit(HISTORY).predict([rec("a", "u"), rec(None, "u")])
    assert e.value.field == "group_id" and e.value.job == "#1"


def test_predict_before_fit_is_an_error():
    with pytest.raises(RuntimeError):
        MeanPredictor().predict(QUERIES)
    with pytest.raises(RuntimeError):
        RandomForestPredictor().predict(QUERIES)


def test_unknown_predictor_name():
    with pytest.raises(InstanceError) as e:
        make_predictor("oracle")
    assert e.value.field == "predictor"


def test_split_by_time_first_80_percent_stable_on_ties():
    times = [9, 0, 4, 4, 1, 8, 2, 7, 3, 6]
    recs = [rec("g", "u", i, submit_time=t) for i, t in enumerate(times)]
    train, test = train_test_split_by_time(recs)
    # floor(0.8 * 10) = 8 earliest; the two jobs at time 4 (iterations 2, then 3) keep their input order
    assert train["submit_time"].tolist() == [0, 1, 2, 3, 4, 4, 6, 7]
    assert train["iterations"].tolist() == [1, 4, 6, 8, 2, 3, 9, 7]
    assert test["submit_time"].tolist() == [8, 9]
    assert list(train.index) == list(range(8)) and list(test.index) == [0, 1]


def test_split_validation():
    recs = [rec("g", "u", 1, submit_time=0)]
    with pytest.raises(InstanceError) as e:
        train_test_split_by_time(recs, 1.5)
    assert e.value.field == "train_fraction"
    with pytest.raises(InstanceError) as e:
        train_test_split_by_time([rec("g", "u", 1)])
    assert e.value.field == "submit_time"
    with pytest.raises(InstanceError) as e:
        train_test_split_by_time([rec("g", "u", 1, submit_time="soon", job_id="late")])
    assert e.value.field == "submit_time" and e.value.job == "late"


def test_evaluate_predictors_hand_computed():
    test = [rec("a", "u1", 25), rec("b", "u2", 8), rec("new", "u1", 6)]
    table = evaluate_predictors(HISTORY, test).set_index("predictor")
    assert list(table.index) == ["random-forest", "median", "mean", "perfect"]
    # mean: |30-25| + |30.25-8| + |0-6| = 5 + 22.25 + 6 = 33.25 over 3 jobs
    assert table.loc["mean", "mean_abs_error"] == pytest.approx(33.25 / 3)
    # median: |20-25| + |8-8| + |0-6| = 11 over 3 jobs; median error 5; one exact (b)
    assert table.loc["median", "mean_abs_error"] == pytest.approx(11 / 3)
    assert table.loc["median", "median_abs_error"] == 5.0
    assert table.loc["median", "exact_share"] == pytest.approx(1 / 3)
    assert table.loc["perfect", "mean_abs_error"] == 0.0 and table.loc["perfect", "exact_share"] == 1.0
    assert table["unseen_share"].tolist() == pytest.approx([1 / 3] * 4)
    assert (table["n_test"] == 3).all() and (table["n_train"] == len(HISTORY)).all()
    # the random forest predicts 0 for the unseen job, so its error there is exactly 6
    assert table.loc["random-forest", "mean_abs_error"] >= 6 / 3
