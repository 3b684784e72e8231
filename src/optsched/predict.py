"""Iteration predictors for recurring training jobs (paper 001, Sec. IV-C-3 "Random Forest Based Prediction").

Most training jobs recur: the paper hashes a job's meta-information (user, data set, command line) into a
*group id* and predicts the number of training iterations ``n~_i`` from the job's group id and user id with a
random-forest regression (100 trees, mean-squared-error splits), predicting **0 for unseen jobs** so that
they complete at once on the virtual machine of A-SRPT. Its evaluation also uses the mean and the median of
the group's previous iterations, and a perfect predictor (A-SRPT-Perfect). See ``docs/algorithms/a-srpt.md``.

Data in (a ``pandas.DataFrame`` or a sequence of mappings, one record per job):

============== =============================================================================================
``group_id``   recurrence group (any hashable: int or str); required by ``fit`` and ``predict``
``user_id``    submitting user (any hashable); required by ``fit`` and ``predict``
``iterations`` true number of training iterations (real, >= 0); required by ``fit``, by the perfect
               predictor's ``predict`` and by [`evaluate_predictors`][optsched.predict.evaluate_predictors]
``job_id``     optional; names the job in error messages
``submit_time`` optional; used by [`train_test_split_by_time`][optsched.predict.train_test_split_by_time]
============== =============================================================================================

Every predictor has ``fit(history) -> self`` and ``predict(jobs) -> numpy.ndarray`` (float, one value per job,
in input order). A job is *unseen* when its ``group_id`` does not occur in the history; every predictor except
the perfect one returns 0 for it (paper: "We predict 0 iterations for unseen jobs").

```pycon
>>> history = [{"group_id": "g1", "user_id": "u1", "iterations": 100},
...            {"group_id": "g1", "user_id": "u1", "iterations": 300},
...            {"group_id": "g2", "user_id": "u2", "iterations": 50}]
>>> jobs = [{"group_id": "g1", "user_id": "u1"}, {"group_id": "new", "user_id": "u1"}]
>>> MeanPredictor().fit(history).predict(jobs).tolist()
[200.0, 0.0]
>>> rf = RandomForestPredictor(seed=0).fit(history)
>>> p = rf.predict(jobs); bool(100 <= p[0] <= 300), float(p[1])
(True, 0.0)

```
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .errors import InstanceError, SolverError
from .params import Params

__all__ = [
    "IterationPredictor", "MeanPredictor", "MedianPredictor", "PerfectPredictor", "PREDICTORS",
    "RandomForestPredictor", "as_job_frame", "evaluate_predictors", "make_predictor", "predict_frame",
    "rolling_predictions", "train_test_split_by_time",
]

KEY_COLUMNS = ("group_id", "user_id")
TARGET = "iterations"


# ---------------------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------------------

def _job_name(frame: pd.DataFrame, pos: int) -> str:
    if "job_id" in frame.columns:
        return str(frame["job_id"].iloc[pos])
    return f"#{pos}"


def as_job_frame(records: Any, *, require: Sequence[str] = (*KEY_COLUMNS, TARGET)) -> pd.DataFrame:
    """Validated copy of ``records`` as a DataFrame with a fresh 0..n-1 index.

    Raises [`InstanceError`][optsched.errors.InstanceError] naming the field (and the job, by ``job_id`` or by position
    ``#k``) for a missing column, a missing id, or an iteration count that is not a finite number >= 0.

    ```pycon
    >>> as_job_frame([{"group_id": 1, "user_id": 2}], require=("group_id", "user_id", "iterations"))
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: iterations: missing column (required: group_id, user_id, iterations)

    ```
    """
    if isinstance(records, pd.DataFrame):
        frame = records.reset_index(drop=True).copy()
    else:
        if isinstance(records, (str, bytes)) or not isinstance(records, Iterable):
            raise InstanceError("expected a DataFrame or a sequence of records", field="records")
        rows = list(records)
        for k, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise InstanceError(f"record must be a mapping, got {type(row).__name__}", field=f"records[{k}]")
        frame = pd.DataFrame.from_records(rows) if rows else pd.DataFrame(columns=list(require))
    for col in require:
        if col not in frame.columns:
            raise InstanceError(f"missing column (required: {', '.join(require)})", field=col)
    for col in KEY_COLUMNS:
        if col in require:
            missing = frame[col].isna().to_numpy()
            if missing.any():
                pos = int(np.flatnonzero(missing)[0])
                raise InstanceError("missing value", field=f"{col}", job=_job_name(frame, pos))
    if TARGET in require:
        values = []
        for pos, v in enumerate(frame[TARGET].tolist()):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                    or not math.isfinite(float(v)) or v < 0:
                raise InstanceError(f"must be a finite number >= 0, got {v!r}", field=TARGET,
                                    job=_job_name(frame, pos))
            values.append(float(v))
        frame[TARGET] = np.asarray(values, dtype=float)
    return frame


# ---------------------------------------------------------------------------------------------------------
# predictors
# ---------------------------------------------------------------------------------------------------------

class IterationPredictor(Params):
    """Interface: ``fit(history)`` learns from finished jobs, ``predict(jobs)`` returns ``n~`` per job. Parameters
    are declared once, in ``__init__`` ([`Params`][optsched.params.Params]: ``describe()``, ``get_params()`` and
    ``clone()``, an unfitted copy, derive from them)."""

    name = "predictor"
    reset_with_owner = False  # a fitted predictor is an input of the policy holding it: it keeps its fit

    def fit(self, history: Any) -> IterationPredictor:
        raise NotImplementedError

    def predict(self, jobs: Any) -> np.ndarray:
        raise NotImplementedError

    def _seen_groups(self) -> pd.Index:
        groups = getattr(self, "_groups", None)
        if groups is None:
            raise RuntimeError(f"{type(self).__name__}.predict() called before fit()")
        return groups


class _GroupStatPredictor(IterationPredictor):
    """Per-group statistic of the history's iterations; 0 for an unseen group."""

    stat = "mean"

    def fit(self, history: Any) -> _GroupStatPredictor:
        frame = as_job_frame(history)
        table = frame.groupby("group_id", sort=False)[TARGET].agg(self.stat)
        self._groups = pd.Index(table.index)
        self._values = table.to_numpy(dtype=float)
        return self

    def predict(self, jobs: Any) -> np.ndarray:
        groups = self._seen_groups()
        frame = as_job_frame(jobs, require=KEY_COLUMNS)
        codes = groups.get_indexer(frame["group_id"])
        return np.where(codes >= 0, self._values[np.maximum(codes, 0)] if len(self._values) else 0.0, 0.0)


class MeanPredictor(_GroupStatPredictor):
    """Mean of the group's historical iterations (0 for an unseen group).

    ```pycon
    >>> MeanPredictor().fit([{"group_id": 1, "user_id": 0, "iterations": 1},
    ...                      {"group_id": 1, "user_id": 0, "iterations": 4}]).predict(
    ...     [{"group_id": 1, "user_id": 9}]).tolist()
    [2.5]

    ```
    """

    name = "mean"
    stat = "mean"


class MedianPredictor(_GroupStatPredictor):
    """Median of the group's historical iterations (0 for an unseen group; the mean of the two middle values
    for an even count, as ``pandas``/``numpy`` define it).

    ```pycon
    >>> MedianPredictor().fit([{"group_id": 1, "user_id": 0, "iterations": v} for v in (1, 2, 10)]).predict(
    ...     [{"group_id": 1, "user_id": 0}]).tolist()
    [2.0]

    ```
    """

    name = "median"
    stat = "median"


class RandomForestPredictor(IterationPredictor):
    """scikit-learn random-forest regression on (group id, user id), as paper 001 Sec. IV-C-3: 100 trees,
    squared-error (MSE) splits, prediction 0 for a job whose group is not in the history.

    Ids are categorical; they are encoded as integer codes in order of first appearance in the history (an
    arbitrary but deterministic order: the trees only need to isolate groups). A user absent from the history
    (in a seen group) gets code -1. ``seed`` is the forest's ``random_state``; other keyword arguments go to
    ``RandomForestRegressor``.

    ```pycon
    >>> rf = RandomForestPredictor(seed=1).fit([{"group_id": g, "user_id": 0, "iterations": 7} for g in "abc"])
    >>> rf.predict([{"group_id": "b", "user_id": 0}, {"group_id": "z", "user_id": 0}]).tolist()
    [7.0, 0.0]

    ```
    """

    name = "random-forest"

    def __init__(self, seed: int = 0, n_estimators: int = 100, **forest_options: Any) -> None:
        self.seed = seed
        self.n_estimators = n_estimators
        self.forest_options = {"criterion": "squared_error", "n_jobs": 1, **forest_options}
        self.model: Any = None

    def _features(self, frame: pd.DataFrame) -> np.ndarray:
        return np.column_stack([self._groups.get_indexer(frame["group_id"]),
                                self._users.get_indexer(frame["user_id"])]).astype(float)

    def fit(self, history: Any) -> RandomForestPredictor:
        try:
            from sklearn.ensemble import RandomForestRegressor  # heavy import, only when used
        except ModuleNotFoundError:
            raise SolverError("the random-forest predictor needs scikit-learn: pip install 'optsched[ml]'") from None

        frame = as_job_frame(history)
        self._groups = pd.Index(pd.unique(frame["group_id"]))
        self._users = pd.Index(pd.unique(frame["user_id"]))
        self.model = RandomForestRegressor(n_estimators=self.n_estimators, random_state=self.seed,
                                           **self.forest_options)
        if len(frame):
            self.model.fit(self._features(frame), frame[TARGET].to_numpy())
        return self

    def predict(self, jobs: Any) -> np.ndarray:
        groups = self._seen_groups()
        frame = as_job_frame(jobs, require=KEY_COLUMNS)
        out = np.zeros(len(frame))
        seen = groups.get_indexer(frame["group_id"]) >= 0
        if seen.any():
            out[seen] = self.model.predict(self._features(frame.loc[seen]))
        return out


class PerfectPredictor(IterationPredictor):
    """The true iterations (A-SRPT-Perfect): ``predict`` returns the jobs' own ``iterations`` column.

    ```pycon
    >>> PerfectPredictor().fit([]).predict([{"group_id": 1, "user_id": 1, "iterations": 42}]).tolist()
    [42.0]

    ```
    """

    name = "perfect"

    def fit(self, history: Any) -> PerfectPredictor:
        self._groups = pd.Index([])
        return self

    def predict(self, jobs: Any) -> np.ndarray:
        self._seen_groups()
        return as_job_frame(jobs)[TARGET].to_numpy(dtype=float)


PREDICTORS: dict[str, type[IterationPredictor]] = {
    cls.name: cls for cls in (RandomForestPredictor, MedianPredictor, MeanPredictor, PerfectPredictor)
}


def make_predictor(name: str, seed: int = 0) -> IterationPredictor:
    """A fresh predictor by name (``random-forest``, ``median``, ``mean``, ``perfect``).

    ```pycon
    >>> make_predictor("median").name
    'median'

    ```
    """
    if name not in PREDICTORS:
        raise InstanceError(f"unknown predictor {name!r} (known: {', '.join(PREDICTORS)})", field="predictor")
    cls = PREDICTORS[name]
    return cls(seed=seed) if cls is RandomForestPredictor else cls()


# ---------------------------------------------------------------------------------------------------------
# train/test split and evaluation
# ---------------------------------------------------------------------------------------------------------

def train_test_split_by_time(records: Any, train_fraction: float = 0.8, *, time_column: str = "submit_time"
                             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The first ``floor(train_fraction * n)`` jobs by submission time, and the rest (paper 001 Sec. V-A-1-c:
    "We use the first 80% jobs in the trace to train"). Jobs with equal submission times keep their input
    order (stable sort). Both parts keep the input's columns and get a fresh index.

    ```pycon
    >>> recs = [{"group_id": 0, "user_id": 0, "iterations": i, "submit_time": t} for i, t in enumerate([5, 1, 3])]
    >>> train, test = train_test_split_by_time(recs, 0.67)
    >>> train["submit_time"].tolist(), test["submit_time"].tolist()
    ([1, 3], [5])

    ```
    """
    if isinstance(train_fraction, bool) or not isinstance(train_fraction, (int, float)) \
            or not 0 <= train_fraction <= 1:
        raise InstanceError(f"must be in [0, 1], got {train_fraction!r}", field="train_fraction")
    frame = as_job_frame(records, require=(*KEY_COLUMNS, TARGET, time_column))
    times = pd.to_numeric(frame[time_column], errors="coerce")
    if times.isna().any():
        pos = int(np.flatnonzero(times.isna().to_numpy())[0])
        raise InstanceError("must be a number", field=time_column, job=_job_name(frame, pos))
    ordered = frame.iloc[np.argsort(times.to_numpy(), kind="stable")].reset_index(drop=True)
    n_train = math.floor(train_fraction * len(ordered))
    return ordered.iloc[:n_train].reset_index(drop=True), ordered.iloc[n_train:].reset_index(drop=True)


def evaluate_predictors(train: Any, test: Any, predictors: Iterable[str | IterationPredictor] | None = None,
                        *, seed: int = 0) -> pd.DataFrame:
    """Fit each predictor on ``train``, predict ``test``; one row per predictor with the average absolute
    error ``mean_abs_error`` = mean |n~_i - n_i| (the paper's "average error", eps-bar of Eq. 9),
    ``median_abs_error``, ``exact_share`` (share of test jobs with round(n~_i) == n_i, our reading of
    Fig. 4's "predicted correctly") and ``unseen_share`` (share of test jobs whose group is not in ``train``).

    ```pycon
    >>> train = [{"group_id": 1, "user_id": 1, "iterations": v} for v in (10, 20, 90)]
    >>> test = [{"group_id": 1, "user_id": 1, "iterations": 20}, {"group_id": 2, "user_id": 1, "iterations": 5}]
    >>> evaluate_predictors(train, test, ["mean", "median"])[["predictor", "mean_abs_error"]].values.tolist()
    [['mean', 12.5], ['median', 2.5]]

    ```
    """
    train_frame = as_job_frame(train)
    test_frame = as_job_frame(test)
    chosen = list(predictors) if predictors is not None else list(PREDICTORS)
    truth = test_frame[TARGET].to_numpy(dtype=float)
    seen_groups = pd.Index(pd.unique(train_frame["group_id"]))
    unseen = float(np.mean(seen_groups.get_indexer(test_frame["group_id"]) < 0)) if len(test_frame) else 0.0
    rows = []
    for p in chosen:
        predictor = make_predictor(p, seed=seed) if isinstance(p, str) else p
        pred = predictor.fit(train_frame).predict(test_frame)
        err = np.abs(pred - truth)
        rows.append({
            "predictor": predictor.name,
            "mean_abs_error": float(err.mean()) if len(err) else 0.0,
            "median_abs_error": float(np.median(err)) if len(err) else 0.0,
            "exact_share": float(np.mean(np.round(pred) == truth)) if len(err) else 0.0,
            "unseen_share": unseen,
            "n_train": len(train_frame),
            "n_test": len(test_frame),
        })
    return pd.DataFrame(rows)


# -- predictions over job frames (paper 001's workloads) ------------------------------------------------------
def predict_frame(train: pd.DataFrame, test: pd.DataFrame, predictor: str = "random-forest",
                  seed: int = 0) -> np.ndarray:
    """Fit ``predictor`` (a name of [`optsched.predict`][]) on ``train`` and predict ``test``'s iterations in
    one batch call. Unseen groups get 0 (paper l. 233)."""
    p = make_predictor(predictor, seed=seed)
    cols = ["group_id", "user_id", "iterations"]
    p.fit(train[cols])
    return np.asarray(p.predict(test[cols]), dtype=float)


def rolling_predictions(frame: pd.DataFrame, predictor: str = "random-forest", period_s: float = 7 * 86400.0,
                        seed: int = 0) -> np.ndarray:
    """Predictions with periodic retraining (paper l. 233: "frequent retrainings (hourly/daily)"): the frame's
    submission span is cut into periods of ``period_s``; the jobs of each period are predicted in one batch by a
    predictor fitted on every job submitted before the period starts (the first period has no history: all 0,
    unseen). Used for the 75,000-job run, whose window is larger than any 20% test part.

    ```pycon
    >>> from optsched.generators.recurring import map_models, synthetic_recurring_frame
    >>> fr = map_models(synthetic_recurring_frame(300, seed=4), seed=4)
    >>> p = rolling_predictions(fr, "median", period_s=10 * 86400.0)
    >>> len(p) == len(fr), bool((p[fr["submit_s"] < fr["submit_s"].iloc[0] + 10 * 86400.0] == 0).all())
    (True, True)

    ```
    """
    if not period_s > 0:
        raise InstanceError(f"must be positive, got {period_s!r}", field="period_s")
    t = frame["submit_s"].to_numpy(float)
    period = np.floor((t - t[0]) / period_s).astype(np.int64)
    out = np.zeros(len(frame))
    for k in np.unique(period):
        idx = np.flatnonzero(period == k)
        hist = frame.iloc[:idx[0]]
        if len(hist):
            out[idx] = predict_frame(hist, frame.iloc[idx], predictor, seed=seed)
    return out
