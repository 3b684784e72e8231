"""``benchmarks/rl_heldout.py``'s table: the pooled "by set" row is the interval over the sets of each set's mean
over the seeds (not over every seed x set pair), and a row that misses a set of the lookahead's is refused."""

from __future__ import annotations

import benchmarks.rl_heldout as bench
import pandas as pd
import pytest
from benchmarks.rl import ci95
from benchmarks.rl_planner import _fmt


def _rows(changes: dict[str, list[float]]) -> pd.DataFrame:
    rows = [{"policy": "lookahead", "label": "", "instance_seed": 1_000_000 + i, "jobs": 256, "avg_jct_h": 10.0,
             "decisions": 100, "cpu_s": 1.0} for i in range(6)]
    for label, ch in changes.items():
        rows += [{"policy": "agent", "label": label, "instance_seed": 1_000_000 + i, "jobs": 256,
                  "avg_jct_h": 10.0 * (1 + c), "decisions": 100, "cpu_s": 2.0} for i, c in enumerate(ch)]
    return pd.DataFrame(rows)


def test_by_set_row_is_the_interval_over_the_sets_of_the_seed_means():
    a = [-0.02, 0.01, -0.03, 0.00, -0.01, 0.02]
    b = [-0.01, 0.03, -0.02, -0.02, 0.01, 0.00]
    lines = bench.table(_rows({"x s0": a, "x s1": b}))
    means = [(p + q) / 2 for p, q in zip(a, b)]
    by_set = next(line for line in lines if "by set" in line)
    assert f"**{_fmt(*ci95(means))} | {sum(m < 0 for m in means)} / 6 | " in by_set
    # the first five sets (the other pages') and the sixth apart
    assert f"{_fmt(*ci95(means[:5]))} | {sum(m < 0 for m in means[:5])} / 5 | {_fmt(*ci95(means[5:]))} | " in by_set
    every = next(line for line in lines if "every pair" in line)
    assert f"{_fmt(*ci95(a + b))} | {sum(x < 0 for x in a + b)} / 12 |" in every
    assert ci95(means)[1] != pytest.approx(ci95(a + b)[1])  # (the two pools differ: the test tells them apart)


def test_a_row_missing_a_set_is_refused():
    df = _rows({"x s0": [0.0] * 6})
    with pytest.raises(SystemExit, match="x s0"):
        bench.table(df[~((df["label"] == "x s0") & (df["instance_seed"] == 1_000_003))])


@pytest.mark.parametrize("split", [True, False])
def test_every_row_has_the_header_s_cells(split):
    """Each row of the table (the pooled ones too) has as many cells as its header, with and without the
    first-five split (``--first-set`` above 0 leaves it out); the planner rows carry the name given."""
    lines = bench.table(_rows({"x s0": [0.01] * 6, "x s1": [-0.01] * 6}), split, "the planner")
    rows = [line for line in lines if line.startswith("|")]
    width = rows[0].count("|")
    assert all(line.count("|") == width for line in rows), rows
    assert ("first 5 sets" in rows[0]) is split and width == (10 if split else 6)


@pytest.mark.parametrize("argv, field", [
    (["--planner-set", "horizon=0"], "--planner-set"),
    (["--planner-set", "depth=2"], "--planner-set"),
    (["--planner-set", "endgame=none", "deep=none", "stops=1"], "stops"),
    (["--name", "../x"], "--name"),
    (["--first-set", "-1"], "--first-set"),
])
def test_bad_arguments_are_refused_before_any_run(argv, field, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(argv)
    assert e.value.code == 2 and field in capsys.readouterr().err


def test_reuse_keeps_a_planner_row_only_for_the_same_settings():
    """``--reuse`` keeps a planner row only when its recorded settings are the run's in full (the shipped default
    changes over time: a row of another horizon, or one without settings, is run again); other rows by their key."""
    tasks = [("lookahead", "", "", 1_000_001, 256, ()), ("planner", "x s0", "a.npz", 1_000_001, 256, (("horizon", 6),)),
             ("planner", "x s0", "a.npz", 1_000_002, 256, (("horizon", 6),))]
    row = {"policy": "planner", "label": "x s0", "instance_seed": 1_000_001, "jobs": 256, "avg_jct_h": 1.0,
           "decisions": 1, "cpu_s": 1.0}
    look = {**row, "policy": "lookahead", "label": ""}
    old = pd.DataFrame([look, row])  # no settings recorded: the planner row is run again
    rows, left = bench.reused(old, tasks)
    assert [r["policy"] for r in rows] == ["lookahead"] and left == tasks[1:]
    for horizon, kept in ((6, True), (4, False)):
        old = pd.DataFrame([{**look, "search": ""}, {**row, "search": bench.search_key((("horizon", horizon),))}])
        rows, left = bench.reused(old, tasks)
        assert (len(rows) == 2) is kept and left == (tasks[2:] if kept else tasks[1:])
