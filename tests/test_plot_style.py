"""One plotting style for the site (issue 27): every series of a figure has its own marker and dash, series that
coincide are named under the axes, integer axes are ticked at whole numbers, gap intervals never reach below 0,
and Chrome-trace slices never overlap on a thread. Figures are checked through what matplotlib drew."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from optsched.plot import (  # noqa: E402
    chrome_trace,
    gap_summary,
    gap_table,
    metric_label,
    plot_cdfs,
    plot_gaps,
    plot_series,
    plot_vs_load,
)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results"


class _Named:
    """An errorbar's data line under its series' label (matplotlib keeps the label on the container)."""

    def __init__(self, line, label):
        self.line, self.label = line, label

    def __getattr__(self, name):
        return getattr(self.line, name)

    def get_label(self):
        return self.label


def _data_lines(ax):
    """The lines that carry a series' data points (an errorbar's data line or a labelled plain line)."""
    bars = [_Named(c.lines[0], c.get_label()) for c in ax.containers if type(c).__name__ == "ErrorbarContainer"
            and c.lines[0] is not None]
    return bars or [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 0 and not ln.get_label().startswith("_")]


def _assert_distinct_styles(ax):
    lines = _data_lines(ax)
    assert len(lines) >= 2
    keys = [(ln.get_marker(), str(ln.get_linestyle()), str(ln.get_dashes() if hasattr(ln, "get_dashes") else ""))
            for ln in lines]
    markers = [ln.get_marker() for ln in lines]
    dashes = [ln.line._unscaled_dash_pattern if isinstance(ln, _Named) else ln._unscaled_dash_pattern
              for ln in lines]
    assert len(set(markers)) == len(lines), keys
    assert len({str(d) for d in dashes}) == len(lines), keys


def _is_integer_axis(ticks, lo, hi):
    shown = [t for t in ticks if lo - 1e-9 <= t <= hi + 1e-9]
    return bool(shown) and all(abs(t - round(t)) < 1e-9 for t in shown)


# -- style rules on the library's plots ---------------------------------------------------------------------------
def test_every_series_of_plot_series_has_its_own_marker_and_dash():
    t = pd.DataFrame({"p": np.repeat(list("abcdefgh"), 3), "x": np.tile([1, 2, 3], 8), "y": np.arange(24.0)})
    fig, ax = plt.subplots()
    plot_series(t, "x", "y", "p", ax)
    _assert_distinct_styles(ax)
    plt.close(fig)


def test_coinciding_series_are_named_under_the_axes_and_drawn_apart():
    t = pd.DataFrame({"p": ["LAS"] * 3 + ["Tiresias"] * 3 + ["FIFO"] * 3, "load": [1, 2, 3] * 3,
                      "y": [1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 5.0, 9.0]})
    fig, ax = plt.subplots()
    plot_series(t, "load", "y", "p", ax)
    notes = " ".join(x.get_text() for x in ax.texts)
    assert "LAS and Tiresias coincide exactly at every point" in notes.replace("\n", " ")
    assert "FIFO" in notes     # FIFO meets both at load 1 only
    xs = {ln.get_label(): ln.get_xdata()[0] for ln in _data_lines(ax)}
    assert xs["LAS"] != xs["Tiresias"]        # nudged sideways, both visible
    plt.close(fig)


def test_integer_x_values_get_integer_ticks():
    t = pd.DataFrame({"p": ["a"] * 3 + ["b"] * 3, "nodes": [2, 3, 4] * 2, "y": [1.0, 2, 3, 2, 3, 4]})
    fig, ax = plt.subplots()
    plot_series(t, "nodes", "y", "p", ax)
    lo, hi = ax.get_xlim()
    assert _is_integer_axis(ax.get_xticks(), lo, hi)
    plt.close(fig)


def test_vs_load_says_its_metric_in_words_with_units_and_has_no_legend_over_the_data():
    tidy = pd.DataFrame({"scheduler": ["las"] * 2 + ["tiresias"] * 2, "load": [1.0, 2.0] * 2,
                         "metric": "avg_jct_s", "mean": [3600.0, 7200.0] * 2, "ci_low": [0.0, 3600.0] * 2,
                         "ci_high": [7200.0, 10800.0] * 2, "n": 3, "std": 1.0})
    fig, ax = plt.subplots()
    plot_vs_load(tidy, ax)
    assert ax.get_ylabel() == "average JCT (hours)" and "_" not in ax.get_ylabel()
    assert ax.get_xlabel() == "load (jobs/hour)"
    leg = ax.get_legend()
    fig.canvas.draw()
    box, frame = leg.get_window_extent(), ax.get_window_extent()
    assert box.x0 >= frame.x1 - 1          # beside the axes, not over the data
    assert "las and tiresias coincide exactly" in " ".join(t.get_text() for t in ax.texts).replace("\n", " ")
    plt.close(fig)


@pytest.mark.parametrize("name, words", [("avg_responsiveness_s", "average responsiveness"),
                                         ("p90_jct_s", "90th-percentile JCT"), ("utilisation", "GPU utilisation")])
def test_metric_labels_are_words(name, words):
    assert metric_label(name).startswith(words) and "_" not in metric_label(name)


def test_identical_cdfs_get_distinct_styles_and_a_note():
    fig, ax = plt.subplots()
    v = [1.0, 2.0, 5.0, 9.0]
    plot_cdfs({"mean": v, "random-forest": v, "median": [2.0, 3.0, 4.0, 8.0]}, ax, hours=False)
    steps = [ln for ln in ax.get_lines() if ln.get_drawstyle() == "steps-post"]
    assert len({str(ln._unscaled_dash_pattern) for ln in steps}) == 3
    marks = [ln for ln in ax.get_lines() if ln.get_linestyle() == "None"]
    assert len({ln.get_marker() for ln in marks}) == 3
    assert "mean and random-forest are identical" in " ".join(t.get_text() for t in ax.texts).replace("\n", " ")
    plt.close(fig)


# -- gaps: a quantity that cannot be negative has an interval that cannot be either -----------------------------
@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 5, allow_nan=False), min_size=2, max_size=30))
def test_gap_intervals_never_reach_below_zero(gaps):
    runs = pd.DataFrame({"instance": [f"i{k}" for k in range(len(gaps))] * 2,
                         "algorithm": ["h"] * len(gaps) + ["x"] * len(gaps),
                         "status": ["feasible"] * len(gaps) + ["optimal"] * len(gaps),
                         "objective": [10.0 * (1 + g) for g in gaps] + [10.0] * len(gaps),
                         "lower_bound": [np.nan] * len(gaps) + [10.0] * len(gaps)})
    s = gap_summary(gap_table(runs)).set_index("algorithm")
    assert s.loc["h", "ci_low"] >= 0.0 and s.loc["x", "ci_low"] >= 0.0
    assert s.loc["h", "ci_low"] <= s.loc["h", "mean_gap"] + 1e-12 <= s.loc["h", "ci_high"] + 2e-12


def test_plot_gaps_draws_no_interval_below_zero_and_says_what_the_bars_are():
    # one large gap among zeros: the Student-t interval of this mean reaches below 0, a bootstrap one does not
    gaps = [0.0] * 9 + [0.6]
    runs = pd.DataFrame({"instance": [f"i{k}" for k in range(10)] * 2, "algorithm": ["h"] * 10 + ["x"] * 10,
                         "status": ["feasible"] * 10 + ["optimal"] * 10,
                         "objective": [10.0 * (1 + g) for g in gaps] + [10.0] * 10,
                         "lower_bound": [np.nan] * 10 + [10.0] * 10})
    fig, ax = plt.subplots()
    plot_gaps(gap_table(runs), ax)
    lows = [seg[:, 1].min() for c in ax.collections if type(c).__name__ == "LineCollection"
            for seg in c.get_segments()]
    assert lows and min(lows) >= 0.0
    assert any("bootstrap" in t.get_text() for t in ax.get_legend().get_texts())
    plt.close(fig)


# -- Chrome traces -------------------------------------------------------------------------------------------------
def _overlaps(doc):
    by_thread: dict = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            by_thread.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    bad = 0
    for spans in by_thread.values():
        spans.sort()
        bad += sum(1 for (_, e0), (s1, _) in zip(spans, spans[1:]) if s1 < e0)
    return bad


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(0.001, 50.0, allow_nan=False), min_size=1, max_size=30), st.floats(0.0, 1e5))
def test_chrome_slices_never_overlap_on_a_thread(durations, t0):
    # back-to-back segments on one GPU at float times: start of one == end of the previous, in floats
    ends = t0 + np.cumsum(durations)
    starts = np.r_[t0, ends[:-1]]
    seg = pd.DataFrame({"job": [f"j{k}" for k in range(len(durations))], "server": "s0", "gpus": 1,
                        "start": starts, "end": ends})
    assert _overlaps(chrome_trace(seg, time_unit_s=0.1)) == 0


def test_float_rounding_case_that_overlapped():
    seg = pd.DataFrame({"job": ["a", "b"], "server": "s0", "gpus": 1, "start": [0.1, 0.30000000000000004],
                        "end": [0.30000000000000004, 0.5]})
    assert _overlaps(chrome_trace(seg)) == 0


def test_chrome_slice_names_say_job_model_and_gpus():
    seg = pd.DataFrame({"job": ["7"], "server": [0], "gpus": [4], "start": [0.0], "end": [1.0],
                        "model": ["ResNet-50"]})
    names = {e["name"] for e in chrome_trace(seg)["traceEvents"] if e["ph"] == "X"}
    assert names == {"job 7 · ResNet-50 · 4 GPUs"}


def test_the_committed_trace_has_no_overlapping_slices_and_readable_names():
    doc = json.loads((RESULTS / "pictures_trace.json").read_text(encoding="utf-8"))
    assert _overlaps(doc) == 0
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert xs and all(e["name"].startswith("job ") and "GPU" in e["name"] for e in xs)


# -- the committed figures' producers -------------------------------------------------------------------------------
def test_drs_figures_keep_drs_visible_and_tick_nodes_at_whole_numbers():
    from benchmarks import drs

    raw = pd.read_csv(RESULTS / "drs_sweeps.csv")
    r = raw[raw["sweep"] == "fig8"]
    fig = drs.plot_sweep(drs.summarise(r, "nodes"), "fig8", None, "t")
    for ax in fig.axes:
        lo, hi = ax.get_xlim()
        assert _is_integer_axis(ax.get_xticks(), lo, hi)
        _assert_distinct_styles(ax)
        lines = {ln.get_label(): ln for ln in _data_lines(ax)}
        assert lines["DRS"].get_zorder() > lines["NoRM"].get_zorder()          # DRS on top of NoRM
        assert lines["DRS"].get_xdata()[0] != lines["NoRM"].get_xdata()[0]     # and beside it
    plt.close(fig)


def test_predictor_cdfs_name_identical_predictors_and_show_the_seen_groups_apart():
    from benchmarks import predictors

    rng = np.random.default_rng(0)
    base = rng.integers(0, 5000, 200).astype(float)
    errors = pd.DataFrame({"random-forest": base + rng.integers(0, 50, 200), "median": base, "mean": base,
                           "perfect": 0.0})
    fig = predictors.plot(errors, None, seen=rng.random(200) < 0.4)
    assert len(fig.axes) == 2                                   # every job, and the seen groups only
    for ax in fig.axes:
        steps = [ln for ln in ax.get_lines() if ln.get_drawstyle() == "steps-post"]
        assert len(steps) == 3                                  # perfect is not drawn
        assert len({str(ln._unscaled_dash_pattern) for ln in steps}) == 3
        assert "median and mean are identical" in " ".join(t.get_text() for t in ax.texts).replace("\n", " ")
    plt.close(fig)


def test_table2_figure_has_titled_panels_integer_cases_and_no_bars_on_a_log_axis():
    from benchmarks import table2

    rows = []
    for job in table2.JOBS:
        for i in range(6):
            r = {"job": job, "he_alpha": 10.0 + i, "cut_alpha": 9.0 + i, "map_cpsat_alpha": 8.0 + i,
                 "sel_cpsat_alpha": 8.0 + i, "he_ms": 0.3}
            r.update({f"{f}_{s}_ms": 10.0 + i for f in ("map", "sel") for s in table2.SOLVERS})
            rows.append(r)
    fig = table2.plot(rows, None)
    for ax in fig.axes:
        assert ax.get_title()
        if ax.get_yscale() == "log":
            assert not [p for p in ax.patches if type(p).__name__ == "Rectangle"]   # no bars on a log axis
    top = fig.axes[0]
    lo, hi = top.get_xlim()
    assert _is_integer_axis(top.get_xticks(), lo, hi)
    assert top.get_legend() is None and fig.axes[1].get_legend() is not None     # one legend, beside the panels
    assert "coincide exactly" in " ".join(t.get_text() for t in top.texts).replace("\n", " ")
    plt.close(fig)


def test_highlighted_series_is_thicker_and_on_top():
    t = pd.DataFrame({"p": ["DRS"] * 2 + ["NoRM"] * 2, "x": [1, 2] * 2, "y": [1.0, 2.0, 1.0, 2.0]})
    fig, ax = plt.subplots()
    plot_series(t, "x", "y", "p", ax, highlight=("DRS",))
    lines = {ln.get_label(): ln for ln in _data_lines(ax)}
    assert lines["DRS"].get_linewidth() > lines["NoRM"].get_linewidth()
    assert lines["DRS"].get_zorder() > lines["NoRM"].get_zorder()
    plt.close(fig)


@pytest.mark.parametrize("name", ["blox_policies_summary.csv", "blox_policies_bloxmode_summary.csv"])
def test_blox_policy_figures_rest_on_three_seeds_with_intervals(name):
    t = pd.read_csv(RESULTS / name)
    jct = t[t["metric"] == "avg_jct_s"]
    assert len(jct) and (jct["n"] >= 3).all() and jct["ci_low"].notna().all()
