"""The comparison and the matrix of ``benchmarks/sim_equivalence.py`` (issue 22's oracle), without a second tree:
the comparison must catch a one-bit change, a sign of zero, a missing or extra job and a missing column, and
must not be fooled by row order, integer vs float storage or NaN payloads."""

from __future__ import annotations

import doctest
import itertools
import struct

import numpy as np
import pandas as pd
import pytest
from benchmarks import sim_equivalence as eq


def table() -> pd.DataFrame:
    return pd.DataFrame({"id": ["a", "b", "c"], "completion_s": [10.0, np.nan, 30.5],
                         "preemptions": [0, 2, 1], "deadline_met": [1.0, np.nan, 0.0]})


def test_identical_tables_and_harmless_differences():
    t = table()
    assert eq.first_difference(t, t.copy()) is None
    shuffled = t.iloc[[2, 0, 1]].reset_index(drop=True)  # the row order is not a per-job result
    assert eq.first_difference(t, shuffled) is None
    as_float = t.assign(preemptions=t["preemptions"].astype(float))  # storage, not value
    assert eq.first_difference(t, as_float) is None
    other_nan = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000123))[0]  # a NaN with another payload
    assert eq.first_difference(t, t.assign(completion_s=[10.0, other_nan, 30.5])) is None
    as_object = t.assign(deadline_met=pd.Series([1.0, None, 0.0], dtype=object))
    assert eq.first_difference(t, as_object) is None


def test_one_bit_sign_of_zero_and_nan_are_differences():
    t = table()
    nudged = t.assign(completion_s=[10.0, np.nan, np.nextafter(30.5, 31.0)])
    assert eq.first_difference(t, nudged) == ("c", "completion_s", 1)
    zero = t.assign(completion_s=[0.0, np.nan, 30.5])
    assert eq.first_difference(zero, zero.assign(completion_s=[-0.0, np.nan, 30.5])) == ("a", "completion_s", 1)
    assert eq.first_difference(t, t.assign(completion_s=[10.0, 20.0, 30.5])) == ("b", "completion_s", 1)
    assert eq.first_difference(t, t.assign(preemptions=[0, 2, 2], deadline_met=[0.0, np.nan, 0.0])) == \
        ("a", "deadline_met", 2)


def test_object_and_bool_columns():
    t = pd.DataFrame({"id": ["a", "b"], "model": ["VGG", None], "servers": [(0, 1), (2,)], "met": [True, False]})
    assert eq.first_difference(t, t.assign(model=["VGG", np.nan])) is None  # both missing
    assert eq.first_difference(t, t.assign(model=["VGG", "BERT"])) == ("b", "model", 1)
    assert eq.first_difference(t, t.assign(servers=[(0, 2), (2,)])) == ("a", "servers", 1)
    assert eq.first_difference(t, t.assign(met=[True, True])) == ("b", "met", 1)


def test_job_and_column_sets():
    t = table()
    assert eq.first_difference(t, t.iloc[:2]) == ("c", "job missing in the candidate (1 jobs)", 1)
    extra = pd.concat([t, t.iloc[[0]].assign(id="d")], ignore_index=True)
    assert eq.first_difference(t, extra) == ("d", "extra job in the candidate (1 jobs)", 1)
    job, what, _ = eq.first_difference(t, t.drop(columns="deadline_met"))
    assert (job, "missing ['deadline_met']" in what) == ("-", True)


def test_canonical_columns_and_renames():
    jobs = pd.DataFrame({"id": [1, 2], "x": [0, 0], **{c: [1.0, 2.0] for c in eq.COMMON[1:]}})
    rounds = pd.DataFrame({"id": ["2", "1"], "round_completion_s": [600.0, 300.0], "runtime_jct_s": [6.0, 3.0],
                           "cs": [1.5, 1.0]})
    t = eq.canonical(jobs, "contention", extra=rounds)
    assert list(t.columns) == list(eq.COMMON) + list(eq.FAMILY["contention"])
    assert t["id"].tolist() == ["1", "2"] and t["round_completion_s"].tolist() == [300.0, 600.0]
    renamed = jobs.assign(rounded=[300.0, 600.0], runtime_jct_s=[3.0, 6.0], cs=[1.0, 1.5])
    t2 = eq.canonical(renamed, "contention", rename={"round_completion_s": "rounded"})
    assert eq.first_difference(t, t2) is None
    with pytest.raises(KeyError, match="DOOR_COLUMNS"):
        eq.canonical(jobs, "deadline")


def test_matrix_names_and_quick_coverage():
    full, quick = eq.matrix(False), eq.matrix(True)
    names = [e.name for e in full]
    assert len(names) == len(set(names))
    assert {e.name for e in quick} <= set(names)
    blox = [e.kwargs for e in quick if e.name.startswith("philly")]
    for spec in ("philly", "philly:blox"):
        seen = {(k["scheduler"], k["placement"], k["admission"], k["event"], k["restore_s"])
                for k in blox if k["spec"] == spec}
        for i, j in itertools.combinations(range(5), 2):  # every pair of option values meets in the quick grid
            values = [eq.BLOX_SCHEDULERS, eq.PLACEMENTS, eq.ADMISSIONS, (False, True), eq.RESTORES]
            assert {(s[i], s[j]) for s in seen} == set(itertools.product(values[i], values[j])), (spec, i, j)


def test_module_doctests():
    assert doctest.testmod(eq).failed == 0
