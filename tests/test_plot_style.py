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
    assert "LAS and Tiresias coincide exactly" in " ".join(t.get_text() for t in ax.texts).replace("\n", " ")
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


# -- intervals over seeds in tables and figures: one bounded interval (issue 27) ------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=2, max_size=12))
def test_summarise_intervals_stay_inside_the_values_range(values):
    from optsched.experiments import summarise

    t = summarise(pd.DataFrame({"g": "a", "x": values}), ["g"], ["x"]).iloc[0]
    lo, hi = min(values), max(values)
    tol = 1e-9 * max(1.0, hi)
    assert lo - tol <= t["ci_low"] <= t["mean"] + tol and t["mean"] - tol <= t["ci_high"] <= hi + tol


def _bracketed(md: str) -> list[float]:
    import re

    return [float(a) for a, _ in re.findall(r"\[(-?[\d.]+), (-?[\d.]+)\]", md)]


@pytest.mark.parametrize("name", ["blox_policies", "blox_policies_bloxmode"])
def test_committed_blox_tables_print_no_interval_below_zero(name):
    md = (RESULTS / f"{name}.md").read_text(encoding="utf-8")
    lows = _bracketed(md)
    assert lows and min(lows) >= 0.0
    s = pd.read_csv(RESULTS / f"{name}_summary.csv")
    assert (s["ci_low"].dropna() >= 0).all()


def test_blox_legends_use_display_names():
    t = pd.read_csv(RESULTS / "blox_policies_summary.csv")
    fig, ax = plt.subplots()
    plot_vs_load(t[t["metric"] == "avg_jct_s"], ax, metric="avg_jct_s")
    assert [x.get_text() for x in ax.get_legend().get_texts()] == ["FIFO", "LAS", "SRTF", "Tiresias"]
    plt.close(fig)


@pytest.mark.parametrize("sfx", ["", "_bloxmode"])
def test_blox_cdfs_are_drawn_from_three_seeds_of_stored_quantiles_with_bands_inside_them(sfx):
    from benchmarks import blox_policies

    q = pd.read_csv(RESULTS / f"blox_policies{sfx}_jct_quantiles.csv")
    assert (q.groupby("scheduler")["seed"].nunique() >= 3).all()
    assert set(q["q"].round(2)) == {round(k / 100, 2) for k in range(101)}
    ax = blox_policies.plot_cdf(sfx, "test")
    labels = [x.get_text() for x in ax.get_legend().get_texts()]
    assert labels[:4] == ["FIFO", "LAS", "SRTF", "Tiresias"] and "bootstrap" in labels[4]
    curves = [ln for ln in ax.get_lines() if ln.get_linestyle() != "None"]
    assert len(curves) == 4 and len({str(ln._unscaled_dash_pattern) for ln in curves}) == 4
    # every band lies within the seeds' own quantiles (hours)
    lo_all = q["jct_s"].min() / 3600 * (1 - 1e-9)
    hi_all = q["jct_s"].max() / 3600 * (1 + 1e-9)
    xs = np.concatenate([p.vertices[:, 0] for c in ax.collections for p in c.get_paths()])
    assert len(xs) and lo_all <= xs.min() and xs.max() <= hi_all
    assert ax.get_xlabel() == "JCT (hours, log scale)"
    plt.close(ax.figure)


# -- the other redrawn figures ---------------------------------------------------------------------------------------
def test_drs_fig12_bands_stay_inside_zero_and_one():
    from benchmarks import drs

    fig = drs.utilisation_figure(None, seeds=[0, 1, 2])
    assert len(fig.axes) == len(drs.FIG12) and all(ax.get_title(loc="left") for ax in fig.axes)
    for ax in fig.axes:
        ys = np.concatenate([p.vertices[:, 1] for c in ax.collections for p in c.get_paths()])
        assert len(ys) and ys.min() >= 0.0 and ys.max() <= 1.0 + 1e-9
    assert "hours" in fig.axes[-1].get_xlabel()
    plt.close(fig)


def test_drs_sweep_intervals_respect_the_quantitys_range():
    from benchmarks import drs

    raw = pd.read_csv(RESULTS / "drs_sweeps.csv")
    fig = drs.plot_sweep(drs.summarise(raw[raw["sweep"] == "fig7"], "lam"), "fig7", None, "t")
    r_trace, wait = fig.axes[0], fig.axes[1]
    ys = [seg[:, 1] for c in r_trace.collections if type(c).__name__ == "LineCollection" for seg in c.get_segments()]
    assert ys and max(float(y.max()) for y in ys) <= 1.0 + 1e-9
    ys = [seg[:, 1] for c in wait.collections if type(c).__name__ == "LineCollection" for seg in c.get_segments()]
    assert ys and min(float(y.min()) for y in ys) >= 0.0
    plt.close(fig)


def test_total_jct_figure_has_whole_number_jobs_distinct_series_and_asrpt_on_top():
    from benchmarks import total_jct

    fig = total_jct.plot(pd.read_csv(RESULTS / "total_jct.csv").to_dict("records"), None)
    for ax in fig.axes:
        lo, hi = ax.get_xlim()
        assert _is_integer_axis(ax.get_xticks(), lo, hi) and ax.get_xlabel() == "jobs per instance"
        _assert_distinct_styles(ax)
    lines = {ln.get_label(): ln for ln in _data_lines(fig.axes[1])}
    assert lines["A-SRPT / OPT"].get_zorder() > lines["A-SRPT-Perfect / OPT"].get_zorder()
    plt.close(fig)


def test_rar_exact_figure_has_a_panel_per_class_and_no_gap_interval_below_zero():
    from benchmarks import rar_exact

    rows = pd.read_csv(RESULTS / "rar_exact.csv").to_dict("records")
    fig = rar_exact.plot(rows, ["ff", "ls", "rand", "sjf-bco", "greedy*"], None)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == len({(r["jobs"], r["servers"]) for r in rows})
    for ax in panels:
        lows = [seg[:, 1].min() for c in ax.collections if type(c).__name__ == "LineCollection"
                for seg in c.get_segments()]
        assert lows and min(lows) >= 0.0
        assert [t.get_text() for t in ax.get_xticklabels()][:4] == ["FF", "LS", "RAND", "SJF-BCO"]
    plt.close(fig)


def test_rar_heuristics_figure_keeps_every_algorithm_apart_and_ticks_kappa_at_whole_numbers():
    from benchmarks import rar_heuristics

    fig = rar_heuristics.plot(pd.read_csv(RESULTS / "rar_heuristics.csv"), None)
    kappa, servers = fig.axes[2], fig.axes[4]
    lo, hi = kappa.get_xlim()
    assert _is_integer_axis(kappa.get_xticks(), lo, hi)
    _assert_distinct_styles(servers)
    assert [t.get_text() for t in servers.get_legend().get_texts()] == ["SJF-BCO", "FF", "LS", "RAND"]
    plt.close(fig)


def test_gantt_and_occupancy_legends_sit_beside_the_axes():
    import optsched
    from optsched.generators.workload import synthetic_workload
    from optsched.plot import gantt, occupancy
    from optsched.sim import simulate

    inst = optsched.generate("rar", jobs=4, servers=2, seed=1)
    res = optsched.solve(inst, "sjf-bco")
    run = simulate(synthetic_workload(n_jobs=8, load_jph=4.0, seed=0), servers=2, gpus_per_server=4,
                   scheduler="las", mode="event")
    for draw in (lambda ax: gantt(inst, res.schedule, ax, optimum=res.objective), lambda ax: occupancy(run, ax)):
        fig, ax = plt.subplots()
        draw(ax)
        fig.canvas.draw()
        assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1 - 1
        plt.close(fig)
