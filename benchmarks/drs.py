"""Paper 003 (DRS, deadline-aware scheduling) in our simulator: the sweeps of Figs. 7-11 with 95 % intervals,
utilisation over time (Fig. 12), the policies against the exact optimum on tiny instances and against the
energy upper bound on the paper's default trace, and ablations of the readings DRS leaves open.

Run: ``.venv/bin/python benchmarks/drs.py [--quick] [--seeds N] [--out DIR]``.
Full run: writes ``docs/results/drs.md``, ``drs_sweeps.csv``, ``drs_tiny.csv``, ``drs_bound.csv``,
``drs_ablation.csv`` and the plots ``drs_fig7.png`` .. ``drs_fig12.png``, ``drs_tiny.png``, atomically.
``--quick`` (about a minute: 2 seeds, fewer sweep values, 6 tiny instances) writes the same names into a
temporary folder (or ``--out DIR``), never into ``docs/results``.

Workloads: :func:`optsched.generators.deadline.deadline_workload` (the paper's defaults: 4 nodes x 4 GPUs,
B_intra 10 GB/s, B_inter 6 GB/s, lambda = 4 jobs/h over 0-24 h, alpha shares 10/30/60 %, AlexNet + VGG-16 one
fifth of the jobs; profiles are OUR estimates, docs/algorithms/drs.md). Event mode (a decision at every arrival
and completion), no migration or restore overhead (the paper models none). Policies: DRS, NoRM, EDF, FIFO
(every GPU to the head job), Themis (simplified); beyond the paper, two ElasticFlow policies: ``elasticflow``
("ElasticFlow", as its NSDI '23 paper describes it: every admitted job re-planned from its remaining work at each
arrival, allocations that change over time; the policy ``docs/results/elasticflow.md`` evaluates) and
``elasticflow-fixed`` ("ElasticFlow (fixed reservations)": one GPU count and start reserved per admitted job,
never revisited; the policy this page called "ElasticFlow-style" before issue 25); and the simulator's LAS and
Tiresias on each job's requested GPUs (the fewest that meet its deadline at arrival). Means over seeds with 95 %
percentile-bootstrap intervals (``optsched.experiments.summarise``, ``optsched.plot.bootstrap_interval``: inside
the seeds' range, so a share stays in [0, 1] and a time at or above 0), printed as ``mean [lo, hi]`` and drawn
as error bars. Every number printed is OUR simulator's or OUR solvers'; the paper's own figures are quoted only
where labelled as the paper's.

This command is the one way to regenerate the page, its CSVs and all its figures:
``nice -n 5 .venv/bin/python benchmarks/drs.py --seeds 10 --tiny 40`` (``--replot`` only redraws the figures).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from optsched.exact.deadline import brute_force_deadline, deadline_upper_bound, solve_deadline_cpsat  # noqa: E402
from optsched.experiments import summarise as tidy_summary  # noqa: E402
from optsched.generators.deadline import deadline_workload, tiny_deadline_workload  # noqa: E402
from optsched.io import atomic_open, save_figure  # noqa: E402
from optsched.plot import bootstrap_interval, legend_outside, plot_series, series_style  # noqa: E402
from optsched.sim import simulate  # noqa: E402
from optsched.sim.deadline import DRS, NoRM  # noqa: E402
from optsched.sim.deadline.metrics import utilisation_series  # noqa: E402

RESULTS = ROOT / "docs" / "results"
POLICIES = ("drs", "norm", "edf", "deadline-fifo", "themis", "elasticflow", "elasticflow-fixed", "las", "tiresias")
PAPER = ("drs", "norm", "edf", "deadline-fifo", "themis")
LABEL = {"drs": "DRS", "norm": "NoRM", "edf": "EDF", "deadline-fifo": "FIFO", "themis": "Themis",
         "elasticflow": "ElasticFlow", "elasticflow-fixed": "ElasticFlow (fixed reservations)", "las": "LAS",
         "tiresias": "Tiresias"}
ELASTICFLOW = ("elasticflow", "elasticflow-fixed")
METRICS = ("r_trace", "avg_wait_s", "avg_completion_s", "utilisation", "migrations", "declined")


# -- statistics and tables -----------------------------------------------------------------------------------
def summarise(df: pd.DataFrame, var: str) -> pd.DataFrame:
    """One row per (``var``, policy): ``seeds`` and, per metric, ``{metric}_mean`` with its 95 %
    percentile-bootstrap interval over seeds ``{metric}_lo``, ``{metric}_hi`` (``optsched.experiments.summarise``,
    the interval the site's tables and figures use: inside the range of the seeds' values, so a share stays in
    [0, 1] and a time at or above 0; NaN with fewer than two seeds)."""
    rows: dict[tuple, dict] = {}
    for r in tidy_summary(df, [var, "policy"], METRICS).to_dict("records"):
        row = rows.setdefault((r[var], r["policy"]), {var: r[var], "policy": r["policy"], "seeds": 0})
        row["seeds"] = max(row["seeds"], int(r["n"]))
        row[f"{r['metric']}_mean"], row[f"{r['metric']}_lo"], row[f"{r['metric']}_hi"] = \
            r["mean"], r["ci_low"], r["ci_high"]
    return pd.DataFrame(list(rows.values()))


def _cell(mean: float, lo: float, hi: float, scale: float, digits: int) -> str:
    """``mean [lo, hi]`` scaled, ``-`` for no value, the mean alone without an interval."""
    if math.isnan(mean):
        return "-"
    if math.isnan(lo) or math.isnan(hi):
        return f"{mean / scale:.{digits}f}"
    return f"{mean / scale:.{digits}f} [{lo / scale:.{digits}f}, {hi / scale:.{digits}f}]"


def interval_cell(values, scale: float = 1.0, digits: int = 3) -> str:
    """The mean of ``values`` with its 95 % bootstrap interval (``optsched.plot.bootstrap_interval``) as
    ``mean [lo, hi]``."""
    v = pd.to_numeric(pd.Series(values), errors="coerce").dropna().to_numpy(dtype=float)
    if len(v) == 0:
        return "-"
    lo, hi = bootstrap_interval(v) if len(v) >= 2 else (math.nan, math.nan)
    return _cell(float(v.mean()), lo, hi, scale, digits)


def pivot_md(summary: pd.DataFrame, var: str, metric: str, label: str, scale: float = 1.0, digits: int = 3,
             policies=POLICIES) -> str:
    pols = [p for p in policies if p in set(summary["policy"])]
    lines = [f"| {label} | " + " | ".join(LABEL[p] for p in pols) + " |", "|" + "---|" * (len(pols) + 1)]
    for x in dict.fromkeys(summary[var]):
        cells = []
        for p in pols:
            r = summary[(summary[var] == x) & (summary["policy"] == p)]
            cells.append(_cell(r[f"{metric}_mean"].iloc[0], r[f"{metric}_lo"].iloc[0], r[f"{metric}_hi"].iloc[0],
                               scale, digits) if len(r) else "-")
        lines.append(f"| {x:.4g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def md_table(df: pd.DataFrame, cols: list[tuple[str, str, str]]) -> str:
    """Markdown of ``df``: (column, header, format) per column."""
    lines = ["| " + " | ".join(h for _, h, _ in cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(("-" if isinstance(r[c], float) and math.isnan(r[c]) else format(r[c], f))
                                       for c, _, f in cols) + " |")
    return "\n".join(lines)


# -- the sweeps ----------------------------------------------------------------------------------------------
SWEEPS = {  # name -> (variable, label, workload builder, full values, quick values)
    "fig7": ("lam", r"\(\lambda\) (jobs/h)", lambda v, s: deadline_workload(lam=v, seed=s), [2, 4, 6, 8, 10],
             [2, 6, 10]),
    "fig8": ("nodes", "nodes (\u00d7 4 GPUs)", lambda v, s: deadline_workload(nodes=int(v), seed=s), [2, 3, 4], [2, 4]),
    "fig9": ("urgent", r"share of \(\alpha = 0.5\)", lambda v, s: deadline_workload(urgent_share=v, seed=s),
             [0.1, 0.2, 0.3, 0.4, 0.5], [0.1, 0.5]),
    "fig10": ("window_h", "acceptance window (h)", lambda v, s: deadline_workload(window_h=v, seed=s),
              [12, 24, 48, 72], [12, 48]),
    "fig11": ("heavy", "AlexNet + VGG-16 share", lambda v, s: deadline_workload(heavy_share=v, seed=s),
              [0.2, 1 / 3], [0.2, 1 / 3]),
}


def run_sweep(name: str, values, seeds, policies=POLICIES, log=print) -> pd.DataFrame:
    var, _, build, _, _ = SWEEPS[name]
    rows = []
    t0 = time.perf_counter()
    for v in values:
        for s in seeds:
            wl = build(v, s)
            for p in policies:
                m = simulate(wl, scheduler=p, seed=s).custom["deadline"]
                rows.append({"sweep": name, var: v, "seed": s, "policy": p, "jobs": m["jobs"],
                             "unreachable": len(wl.unreachable()), **{k: m[k] for k in METRICS}})
    log(f"  {name}: {len(rows)} runs in {time.perf_counter() - t0:.1f} s")
    return pd.DataFrame(rows)


XLABEL = {"fig7": "arrival rate \u03bb (jobs/hour)", "fig8": "nodes (4 GPUs each)",
          "fig9": "share of urgent jobs (\u03b1 = 0.5)", "fig10": "acceptance window (hours)",
          "fig11": "share of AlexNet + VGG-16 jobs"}
PANELS = (("r_trace", 1.0, "deadlines met / jobs (R_trace)"), ("avg_wait_s", 3600.0, "average wait (hours)"),
          ("avg_completion_s", 3600.0, "average completion time (hours)"))


def plot_sweep(summary: pd.DataFrame, name: str, path: Path | None, title: str):
    """Three panels (deadlines met, wait, completion) against the sweep's variable, one line per policy in the
    site's style (``optsched.plot.plot_series``: own marker and dash, nudged apart, DRS on top, a note where
    policies coincide), the 95 % bootstrap interval over seeds of the tables as error bars (inside the seeds'
    range: a share in [0, 1], a time at or above 0); written to ``path`` (returns the figure)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    var = SWEEPS[name][0]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    order = [p for p in POLICIES if p in set(summary["policy"])]
    for ax, (metric, scale, ylabel) in zip(axes, PANELS):
        plot_series(summary, var, f"{metric}_mean", "policy", ax, lo=f"{metric}_lo", hi=f"{metric}_hi", scale=scale,
                    labels=LABEL, order=order, xlabel=XLABEL[name], ylabel=ylabel, highlight=("drs",), dodge=0.015)
        ax.set_title(ylabel.split(" (")[0], fontsize=9)
    legend_outside(axes[-1], fontsize=8, title="policy")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path, bbox_inches="tight")
    return fig


# -- the paper's statements, checked on our numbers ----------------------------------------------------------
# symbols as TeX, rendered by the site's MathJax (pymdownx.arithmatex)
R_TRACE, LAMBDA, ALPHA = r"\(R_\text{trace}\)", r"\(\lambda\)", r"\(\alpha\)"
T_WAIT, T_COMP = r"\(T_\text{wait}\)", r"\(T_\text{comp}\)"
FIG_NOTE = ('One line per policy, each with its own marker and dash, the mean over seeds with its 95 % bootstrap '
            "interval (the tables' [lo, hi]; inside the seeds' range, so a share in [0, 1], a time at or above 0) as "
            'error bars; DRS is the thick blue line, drawn on top and nudged left. The note under each panel names the '
            'policies that coincide or differ by less than 1 % of the axis (DRS and NoRM nearly everywhere). '
            '"ElasticFlow" is the re-planning policy, "ElasticFlow (fixed reservations)" the variant without '
            're-planning.')


def _m(summary, var, x, pol, metric="r_trace"):
    r = summary[(summary[var] == x) & (summary["policy"] == pol)]
    return float(r[f"{metric}_mean"].iloc[0]) if len(r) else math.nan


def checks(sums: dict[str, pd.DataFrame], raw: dict[str, pd.DataFrame]) -> list[str]:
    out = []
    s7 = sums["fig7"]
    lams = sorted(set(s7["lam"]))
    falling = [p for p in PAPER if all(_m(s7, "lam", a, p) >= _m(s7, "lam", b, p) for a, b in zip(lams, lams[1:]))]
    out.append(f"* Fig. 7, {R_TRACE} falls as {LAMBDA} rises for every method. Ours: true for "
               f"{', '.join(LABEL[p] for p in falling) or 'none'} of the five paper methods.")
    best = [lam for lam in lams if _m(s7, "lam", lam, "drs") >= max(_m(s7, "lam", lam, p) for p in PAPER)]
    out.append(f"* Fig. 7, DRS has the best {R_TRACE} of the paper's methods. Ours: at {len(best)} of {len(lams)} "
               f"values of {LAMBDA} ({', '.join(f'{x:g}' for x in best) or 'none'}).")
    for metric, what in (("avg_wait_s", T_WAIT), ("avg_completion_s", T_COMP)):
        best = [lam for lam in lams if _m(s7, "lam", lam, "drs", metric)
                <= min(_m(s7, "lam", lam, p, metric) for p in PAPER)]
        out.append(f"* Fig. 7, DRS has the best {what}. Ours: at {len(best)} of {len(lams)} values of {LAMBDA}.")
    rel = {p: np.mean([(_m(s7, "lam", x, "drs") - _m(s7, "lam", x, p)) / _m(s7, "lam", x, p) for x in lams])
           for p in PAPER[1:]}
    pts = {p: np.mean([_m(s7, "lam", x, "drs") - _m(s7, "lam", x, p) for x in lams]) for p in PAPER[1:]}
    out.append(f"* DRS's {R_TRACE} gain over each baseline, averaged over {LAMBDA} (the paper reports 39.53 %, "
               "41.41 %, 45.49 % and 3.11 % over EDF, FIFO, Themis and NoRM, not saying whether relative or in "
               "points). "
               "Ours, relative / points: " + "; ".join(f"{LABEL[p]} {100 * rel[p]:+.1f} % / {100 * pts[p]:+.1f}"
                                                       for p in ("edf", "deadline-fifo", "themis", "norm")) + ".")
    s8 = sums["fig8"]
    diffs = [abs(_m(s8, "nodes", n, "drs") - _m(s8, "nodes", n, "norm")) for n in sorted(set(s8["nodes"]))]
    out.append(f"* Fig. 8, DRS and NoRM nearly identical at every cluster size. Ours: largest gap "
               f"{max(diffs):.3f} in {R_TRACE}.")
    s9, r9 = sums["fig9"], raw["fig9"]
    us = sorted(set(s9["urgent"]))
    fall = [p for p in ("drs", "norm") if _m(s9, "urgent", us[-1], p) < _m(s9, "urgent", us[0], p)]
    out.append(f"* Fig. 9, more urgent jobs lower {R_TRACE} for DRS and NoRM. Ours: true for "
               f"{', '.join(LABEL[p] for p in fall) or 'neither'} ({us[0]:g} \u2192 {us[-1]:g}).")
    same = []
    for p in ("deadline-fifo", "themis"):
        g = r9[r9["policy"] == p].pivot_table(index="seed", columns="urgent", values="avg_wait_s")
        if np.allclose(g.to_numpy(), g.to_numpy()[:, :1]):
            same.append(LABEL[p])
    out.append(f"* Fig. 9, FIFO and Themis keep exactly the same {T_WAIT} and {T_COMP} when only priorities change. "
               f"Ours: true for {', '.join(same) or 'neither'} (the generator changes only the {ALPHA} values).")
    e_w = [_m(s9, "urgent", u, "edf", "avg_wait_s") / 3600 for u in us]
    out.append(f"* Fig. 9, EDF's {T_WAIT} changes only slightly. Ours: {min(e_w):.2f}\u2013{max(e_w):.2f} h over the "
               "urgent shares.")
    s10 = sums["fig10"]
    ws = sorted(set(s10["window_h"]))
    gap = {w: _m(s10, "window_h", w, "drs") - max(_m(s10, "window_h", w, p) for p in ("edf", "deadline-fifo"))
           for w in ws}
    out.append("* Fig. 10, with the 12 h window EDF and FIFO do well, longer windows favour DRS. Ours: DRS minus "
               "the better of EDF and FIFO: " + ", ".join(f"{w:g} h {gap[w]:+.3f}" for w in ws) + ".")
    s11 = sums["fig11"]
    hs = sorted(set(s11["heavy"]))
    lo, hi = hs[0], hs[-1]
    worse = [LABEL[p] for p in ("edf", "deadline-fifo") if _m(s11, "heavy", hi, p) < _m(s11, "heavy", lo, p)]
    better = [LABEL[p] for p in ("themis", "norm", "drs") if _m(s11, "heavy", hi, p) > _m(s11, "heavy", lo, p)]
    top = max(PAPER, key=lambda p: _m(s11, "heavy", hi, p))
    out.append(f"* Fig. 11, the restricted queue (\u2153 AlexNet + VGG-16) is worse for EDF and FIFO, better for "
               f"Themis, NoRM and DRS, DRS best. Ours: worse for {', '.join(worse) or 'neither'}; better for "
               f"{', '.join(better) or 'none'}; best of the paper's methods: {LABEL[top]}.")
    s4 = s7[s7["lam"] == 4]
    if len(s4):
        u = {p: s4[s4["policy"] == p] for p in ("drs", "norm")}
        pct = {p: _cell(u[p]["utilisation_mean"].iloc[0], u[p]["utilisation_lo"].iloc[0],
                        u[p]["utilisation_hi"].iloc[0], 0.01, 1) for p in u}
        out.append(f"* Utilisation on the default queue: the paper reports 91.27 % (DRS) and 79.13 % (NoRM). Ours "
                   f"(mean over [first arrival, last completion]): DRS {pct['drs']} %, NoRM {pct['norm']} %.")
        ef = {p: _cell(*(float(s4[s4["policy"] == p][f"r_trace_{k}"].iloc[0]) for k in ("mean", "lo", "hi")), 1, 3)
              for p in ("drs", *ELASTICFLOW)}
        out.append(f"* Beyond the paper, on the default queue ({LAMBDA} = 4): {R_TRACE} of ElasticFlow (re-planning, "
                   f"`elasticflow`) {ef['elasticflow']}, of ElasticFlow with fixed reservations "
                   f"(`elasticflow-fixed`) {ef['elasticflow-fixed']}, of DRS {ef['drs']}.")
    return out


# -- exact optimum, upper bound ------------------------------------------------------------------------------
def tiny_vs_optimum(k: int, log=print) -> pd.DataFrame:
    """k tiny instances (4 jobs; 2 nodes of 2 or 3 GPUs; 60 s grid): the CP-SAT optimum (checked against the
    brute force), the energy bound, and every policy in round mode on the same grid."""
    rows = []
    t0 = time.perf_counter()
    for i in range(k):
        wl = tiny_deadline_workload(4, nodes=2, gpus_per_node=2 + i % 2, seed=i)
        opt = solve_deadline_cpsat(wl, time_limit=30)
        bf = brute_force_deadline(wl)
        if opt.objective != bf.objective:
            raise AssertionError(f"CP-SAT {opt.objective} != brute force {bf.objective} on {wl.name}")
        ub = deadline_upper_bound(wl).value
        for p in POLICIES:
            m = simulate(wl, scheduler=p, round_s=wl.time_unit_s).custom["deadline"]
            rows.append({"instance": wl.name, "gpus": wl.total_gpus, "optimum": opt.objective, "bound": ub,
                         "policy": p, "met": m["deadlines_met"], "moved": m["migrations"] + m["preemptions"]})
    log(f"  tiny: {k} instances in {time.perf_counter() - t0:.1f} s")
    return pd.DataFrame(rows)


def tiny_table(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for p in POLICIES:
        g = df[df["policy"] == p]
        gap = g["optimum"] - g["met"]
        rows.append({"policy": LABEL[p], "instances": len(g), "at_optimum": int((gap <= 0).sum()),
                     "mean_gap": float(gap.mean()), "max_gap": float(gap.max()),
                     "above_optimum": int((gap < 0).sum()), "met_over_opt": float(g["met"].sum() / g["optimum"].sum())})
    return pd.DataFrame(rows)


def default_vs_bound(seeds, time_limit: float, log=print) -> pd.DataFrame:
    rows = []
    t0 = time.perf_counter()
    for s in seeds:
        wl = deadline_workload(seed=s)
        b = deadline_upper_bound(wl, time_limit=time_limit)
        for p in POLICIES:
            m = simulate(wl, scheduler=p, seed=s).custom["deadline"]
            rows.append({"seed": s, "jobs": len(wl), "bound": b.value, "bound_status": b.status.value,
                         "reachable": b.reachable, "policy": p, "met": m["deadlines_met"],
                         "ratio": m["deadlines_met"] / b.value if b.value else math.nan})
    log(f"  bound: {len(seeds)} seeds in {time.perf_counter() - t0:.1f} s")
    return pd.DataFrame(rows)


# -- ablations -----------------------------------------------------------------------------------------------
VARIANTS = {
    "DRS (as read: fragment = plan size, P = slack / N, filter on)": lambda: DRS(),
    "DRS, fragment = partly busy node": lambda: DRS(fragment="node"),
    "DRS, score = slack": lambda: DRS(score="slack"),
    "DRS, score = fewest GPUs": lambda: DRS(score="fewest-gpus"),
    "DRS, no speed-up filter": lambda: DRS(use_filter=False),
    "NoRM": lambda: NoRM(),
}


def ablation(seeds, lams, log=print) -> pd.DataFrame:
    rows = []
    t0 = time.perf_counter()
    for lam in lams:
        for s in seeds:
            wl = deadline_workload(lam=lam, seed=s)
            for name, make in VARIANTS.items():
                m = simulate(wl, scheduler=make(), seed=s).custom["deadline"]
                rows.append({"variant": name, "lam": lam, "seed": s, **{k: m[k] for k in METRICS}})
    log(f"  ablation: {len(rows)} runs in {time.perf_counter() - t0:.1f} s")
    return pd.DataFrame(rows)


# -- Fig. 12 -------------------------------------------------------------------------------------------------
FIG12 = ("drs", "norm", "edf", "deadline-fifo", "themis", "elasticflow", "elasticflow-fixed")


def utilisation_hours(seeds) -> pd.DataFrame:
    """GPU utilisation per hour of the default trace for each Fig. 12 policy and seed (``policy, seed, hour,
    utilisation``); an hour after a run's last job has finished counts as 0 (the cluster is idle), up to the last
    hour of any run of that policy."""
    rows = []
    for p in FIG12:
        runs = {sd: utilisation_series(simulate(deadline_workload(seed=sd), scheduler=p, seed=sd), 3600.0)
                for sd in seeds}
        hours = max(len(u) for u in runs.values())
        for sd, u in runs.items():
            vals = list(u["utilisation"].astype(float)) + [0.0] * (hours - len(u))
            rows += [{"policy": p, "seed": sd, "hour": h, "utilisation": v} for h, v in enumerate(vals)]
    return pd.DataFrame(rows)


def fig12_note(t: pd.DataFrame) -> str:
    """The sentence under Fig. 12: what to look at, with each policy's last busy hour taken from ``t`` (the table
    of :func:`utilisation_hours`), so a rerun keeps it true."""
    last = {}
    for p in FIG12:
        busy = t[(t["policy"] == p) & (t["utilisation"] > 0)]
        last[p] = int(busy["hour"].max()) + 1 if len(busy) else 0
    mean_last = {p: float(t[(t["policy"] == p) & (t["utilisation"] > 0)].groupby("seed")["hour"].max().mean()) + 1
                 for p in FIG12}
    return ("One panel per policy on a shared time axis: the line is the mean over seeds of each hour's GPU "
            "utilisation, the band its 95 % bootstrap interval over seeds (a run that has finished counts as idle). "
            "Look at how long each policy keeps the 16 GPUs busy and how full it keeps them: EDF and FIFO stay at "
            "full utilisation longest, Themis leaves about half the GPUs idle throughout, DRS and NoRM trace the "
            "same curve. Hour by which the cluster is empty, mean over seeds (latest seed): "
            + "; ".join(f"{LABEL[p]} {mean_last[p]:.0f} ({last[p]})" for p in FIG12) + ". ElasticFlow and "
            "ElasticFlow (fixed reservations) end early partly because the jobs they decline never run.")


def utilisation_figure(path: Path | None, seeds=range(10), table: pd.DataFrame | None = None):
    """Fig. 12 in our simulator: one panel per policy (small multiples on one time axis), the mean over seeds of
    each hour's GPU utilisation as a step line with its 95 % percentile-bootstrap interval over seeds as a band
    (inside [0, 1], as utilisation is), the policy's mean utilisation over its runs in the panel's title. Runs
    in under a second in all, so it is simulated again rather than stored. Written to ``path`` (returns the
    figure). ``table``: the result of :func:`utilisation_hours` for ``seeds`` when already computed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seeds = list(seeds)
    t = utilisation_hours(seeds) if table is None else table
    fig, axes = plt.subplots(len(FIG12), 1, figsize=(8, 1.55 * len(FIG12) + 1.0), sharex=True, sharey=True)
    for ax, p in zip(axes, FIG12):
        piv = t[t["policy"] == p].pivot_table(index="hour", columns="seed", values="utilisation")
        hours = piv.index.to_numpy(dtype=float)
        mean = piv.mean(axis=1).to_numpy()
        band = np.array([bootstrap_interval(row) for row in piv.to_numpy(dtype=float)])
        st = series_style(POLICIES.index(p))
        ax.fill_between(hours, band[:, 0], band[:, 1], step="post", color=st["color"], alpha=0.2, linewidth=0)
        ax.step(hours, mean, where="post", color=st["color"], linestyle=st["linestyle"], linewidth=1.4)
        # the policy's own mean utilisation per run (over its busy span), as in the tables
        per_run = [float(np.mean(g["utilisation"].to_numpy()[:int(np.flatnonzero(g["utilisation"].to_numpy() > 0)
                                                                      .max()) + 1]))
                   for _, g in t[t["policy"] == p].groupby("seed")]
        lo, hi = bootstrap_interval(per_run)
        ax.set_title(f"{LABEL[p]}: hourly utilisation averaged over its busy span {np.mean(per_run):.2f} "
                     f"[{lo:.2f}, {hi:.2f}]", fontsize=8.5, loc="left")
        ax.set_ylim(0, 1.05)
        ax.set_yticks([0, 0.5, 1.0])
        ax.grid(axis="y", linewidth=0.3)
    fig.supylabel("GPU utilisation (busy GPUs / 16)", fontsize=9)
    axes[-1].set_xlabel("time since the first arrival (hours)")
    fig.suptitle(f"Fig. 12 in our simulator: GPU utilisation per hour, default trace (\u03bb = 4 jobs/h over 24 h, "
                 f"4 \u00d7 4 GPUs);\nline: mean over seeds {seeds[0]}\u2013{seeds[-1]}, band: its 95 % bootstrap "
                 "interval (a finished run counts as idle)", fontsize=9)
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path, bbox_inches="tight")
    return fig


def plot_tiny(table: pd.DataFrame, path: Path | None, k: int):
    """Deadlines met over the optimum per policy as horizontal bars (policy names on the y axis never collide),
    the value written inside each bar's end; written to ``path`` (returns the figure)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = table.iloc[::-1]
    fig, ax = plt.subplots(figsize=(7, 0.42 * len(t) + 1.4))
    colours = [series_style(i)["color"] for i in range(len(table))][::-1]
    ax.barh(t["policy"], t["met_over_opt"], color=colours, height=0.6)
    for yy, v in enumerate(t["met_over_opt"]):
        # inside the bar's end, so a value near 1 never sits on the optimum's line
        ax.text(v - 0.01, yy, f"{v:.3f}", va="center", ha="right", fontsize=7.5, color="white", fontweight="bold")
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xlim(0.0, max(1.08, float(t["met_over_opt"].max()) + 0.08))   # bars from 0: lengths compare
    ax.set_xlabel("deadlines met / CP-SAT optimum (sum over instances; 1 = optimal)")
    ax.set_title(f"{k} tiny instances (4 jobs, 2 nodes of 2\u20133 GPUs, 60 s grid), seeds 0\u2013{k - 1}:\n"
                 "our simulator against our CP-SAT optimum", fontsize=9)
    if path is not None:
        save_figure(fig, path, bbox_inches="tight")
    return fig


def replot(out: Path = RESULTS, seeds_hint: str | None = None) -> list[Path]:
    """Redraw Figs. 7-11 and the tiny-instance figure from the committed ``drs_sweeps.csv`` and ``drs_tiny.csv``
    (no simulation); returns the paths written."""
    raw = pd.read_csv(out / "drs_sweeps.csv")
    paths = []
    for name in SWEEPS:
        r = raw[raw["sweep"] == name]
        seeds = sorted(set(r["seed"]))
        plot_sweep(summarise(r, SWEEPS[name][0]), name, out / f"drs_{name}.png", sweep_title(name, seeds))
        paths.append(out / f"drs_{name}.png")
    tiny = pd.read_csv(out / "drs_tiny.csv")
    plot_tiny(tiny_table(tiny), out / "drs_tiny.png", tiny["instance"].nunique())
    utilisation_figure(out / "drs_fig12.png", sorted(set(raw["seed"])))   # 70 short runs, under a second each
    return paths + [out / "drs_tiny.png", out / "drs_fig12.png"]


def sweep_title(name: str, seeds) -> str:
    return (f"{XLABEL[name].split(' (')[0]} sweep (our simulator): the paper's default trace otherwise "
            f"(\u03bb = 4 jobs/hour, 24 h, 4 \u00d7 4 GPUs); mean over seeds {min(seeds)}\u2013{max(seeds)} with "
            "95 % bootstrap intervals over seeds")


# -- main ----------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 seeds, fewer values; writes to a temporary folder")
    ap.add_argument("--seeds", type=int, default=10, help="seeds per sweep point (default 10; >= 5)")
    ap.add_argument("--tiny", type=int, default=40, help="tiny instances against the optimum (default 40)")
    ap.add_argument("--out", default=None, help="output folder (default docs/results; --quick: a temporary one)")
    ap.add_argument("--replot", action="store_true",
                    help="only redraw Figs. 7-11 and the tiny figure from the CSVs in --out (default docs/results), "
                         "and Fig. 12 (its 70 short runs simulated again)")
    args = ap.parse_args(argv)
    if args.replot:
        for p in replot(Path(args.out) if args.out else RESULTS):
            print(p)
        return 0
    quick = args.quick
    out = Path(args.out) if args.out else (Path(tempfile.mkdtemp(prefix="drs_quick_")) if quick else RESULTS)
    out.mkdir(parents=True, exist_ok=True)
    seeds = list(range(2 if quick else args.seeds))
    t_all = time.perf_counter()
    log = lambda msg: print(msg, flush=True)  # noqa: E731
    raw, sums = {}, {}
    for name in SWEEPS:
        values = SWEEPS[name][4 if quick else 3]
        raw[name] = run_sweep(name, values, seeds, log=log)
        sums[name] = summarise(raw[name], SWEEPS[name][0])
    k = 6 if quick else args.tiny
    tiny = tiny_vs_optimum(k, log)
    tiny_t = tiny_table(tiny)
    bound = default_vs_bound(seeds, 10.0 if quick else 60.0, log)
    abl = ablation(seeds, [4] if quick else [2, 4, 8], log)

    titles = {"fig7": "arrival rate", "fig8": "cluster size", "fig9": "share of urgent jobs",
              "fig10": "acceptance window", "fig11": "AlexNet + VGG-16 share"}
    for name in SWEEPS:
        plot_sweep(sums[name], name, out / f"drs_{name}.png", sweep_title(name, seeds))
    hours = utilisation_hours(seeds)
    utilisation_figure(out / "drs_fig12.png", seeds, table=hours)
    plot_tiny(tiny_t, out / "drs_tiny.png", k)
    write_csv(pd.concat(raw.values(), ignore_index=True), out / "drs_sweeps.csv")
    write_csv(tiny, out / "drs_tiny.csv")
    write_csv(bound, out / "drs_bound.csv")
    write_csv(abl, out / "drs_ablation.csv")

    cmd = f".venv/bin/python benchmarks/drs.py{' --quick' if quick else ''} --seeds {len(seeds)} --tiny {k}"
    md = [f"# DRS (paper 003): our simulator and solvers{' (QUICK run)' if quick else ''}", "",
          f"Command: `{cmd}` (total {time.perf_counter() - t_all:.0f} s on this machine). Every number below is "
          "OUR simulator's or OUR solvers', on workloads with OUR estimated profiles (docs/algorithms/drs.md); the "
          "paper's own numbers appear only where labelled as the paper's. Every table cell is the mean over seeds "
          "and, in brackets, its 95 % percentile-bootstrap interval over seeds [lo, hi] (inside the seeds' range, so "
          "a share stays in [0, 1] and a time at or above 0); the figures draw the same interval. Policies: the "
          "paper's five (DRS, NoRM, EDF, FIFO, Themis); beyond the paper, two ElasticFlow policies: **ElasticFlow** "
          "(`elasticflow`), as its NSDI '23 paper describes it, re-plans every admitted job from its remaining work "
          "at each arrival and lets a job's GPU count change over time: it is the policy "
          "[elasticflow.md](elasticflow.md) evaluates against ElasticFlow's own baselines; **ElasticFlow (fixed "
          "reservations)** (`elasticflow-fixed`) reserves one GPU count and start per admitted job and never "
          "revisits it (this page's \"ElasticFlow-style\" policy before issue 25, per job identical to it); both "
          "decline jobs they cannot guarantee, and a declined job never runs. Last, the simulator's LAS and "
          "Tiresias on each job's requested GPUs (the fewest that meet its deadline at arrival). Event mode, no "
          "migration, rescaling or restore overhead.", "",
          "## The paper's statements, checked on our numbers", "", *checks(sums, raw), ""]
    for name in SWEEPS:
        var, label = SWEEPS[name][0], SWEEPS[name][1]
        md += [f"## {name.replace('fig', 'Fig. ')}: {titles[name]}", "", f"![{name}](drs_{name}.png)", "", FIG_NOTE, "",
               f"{R_TRACE} (deadlines met / jobs):", "", pivot_md(sums[name], var, "r_trace", label), "",
               f"Average wait {T_WAIT} (h):", "", pivot_md(sums[name], var, "avg_wait_s", label, 3600, 2), "",
               f"Average completion {T_COMP} (h):", "", pivot_md(sums[name], var, "avg_completion_s", label, 3600, 2),
               "", "Utilisation:", "", pivot_md(sums[name], var, "utilisation", label), ""]
        if name == "fig7":
            md += ["Migrations (DRS: moves of a running job; both ElasticFlow policies: rescalings of a running "
                   "job, counted as migrations):", "",
                   pivot_md(sums[name], var, "migrations", label, 1, 1, ("drs", *ELASTICFLOW)), "",
                   "Jobs declined at arrival (only the two ElasticFlow policies decline; a declined job never runs and "
                   "counts as missed):", "",
                   pivot_md(sums[name], var, "declined", label, 1, 1, ELASTICFLOW), ""]
    md += ["## Fig. 12: utilisation over time", "", "![fig12](drs_fig12.png)", "", fig12_note(hours), "",
           f"## Against the exact optimum: {k} tiny instances", "",
           f"Instances `tiny_deadline_workload(4, nodes=2, gpus_per_node=2 or 3, seed=i)`, i = 0..{k - 1}; the "
           "optimum is our CP-SAT model (time grid 60 s, non-preemptive, GPU count and nodes chosen), checked "
           "equal to the brute force on every instance; policies run in round mode with 60 s rounds, so they "
           "start jobs on the same grid (except at the wake-ups the ElasticFlow policies ask for, at a plan's next "
           "change for ElasticFlow and at a reservation's start for ElasticFlow (fixed reservations), which may fall "
           "between rounds). Gap = optimum - deadlines met. A run that preempts, migrates, "
           "rescales or starts a job between rounds is not bound by the non-preemptive grid optimum (`above "
           "optimum` counts the instances where a policy beat it); every run is bounded by the energy bound.", "",
           md_table(tiny_t, [("policy", "policy", "s"), ("instances", "instances", "d"),
                             ("at_optimum", "at the optimum", "d"), ("mean_gap", "mean gap", ".3f"),
                             ("max_gap", "max gap", ".0f"), ("above_optimum", "above optimum", "d"),
                             ("met_over_opt", "met / optimum (sum)", ".3f")]), "",
           f"Bound vs optimum on these instances: the bound equals the optimum on "
           f"{int((tiny.groupby('instance').first().eval('bound - optimum') <= 1e-9).sum())} of {k}; mean "
           f"bound - optimum {float(tiny.groupby('instance').first().eval('bound - optimum').mean()):.3f}.", "",
           "![tiny](drs_tiny.png)", "", "Deadlines met over the optimum, summed over the instances, per policy: "
           "bars from 0, the value at each bar, 1 (the line) is the optimum.", "",
           "## Against the upper bound: the paper's default trace", "",
           "The bound is the energy relaxation of `docs/formulations/deadline.md` solved by CP-SAT (its proven value "
           "when the time limit stops it); `reachable` counts the jobs that can meet their deadline alone.", ""]
    bt = []
    for p in POLICIES:
        g = bound[bound["policy"] == p]
        bt.append({"policy": LABEL[p], "met": float(g["met"].mean()), "bound": float(g["bound"].mean()),
                   "reachable": float(g["reachable"].mean()), "jobs": float(g["jobs"].mean()),
                   "ratio": interval_cell(g["ratio"])})
    md += [md_table(pd.DataFrame(bt), [("policy", "policy", "s"), ("jobs", "jobs (mean)", ".1f"),
                                       ("reachable", "reachable (mean)", ".1f"), ("bound", "bound (mean)", ".1f"),
                                       ("met", "met (mean)", ".1f"),
                                       ("ratio", "met / bound, mean [95 % bootstrap interval]", "s")]), "",
           f"Bound status per seed: {', '.join(sorted(set(bound['bound_status'])))}.", "",
           "## Ablations: the readings DRS leaves open", "",
           f"Default trace at {LAMBDA} = 2, 4, 8 (quick: 4), same seeds; {R_TRACE} and utilisation as mean "
           "[95 % bootstrap interval over seeds]:", ""]
    asum = []
    for (name, lam), g in abl.groupby(["variant", "lam"], sort=False):
        asum.append({"variant": name, "lam": lam, "r": interval_cell(g["r_trace"]),
                     "u": interval_cell(g["utilisation"]), "mig": float(g["migrations"].mean())})
    md += [md_table(pd.DataFrame(asum), [("variant", "variant", "s"), ("lam", LAMBDA, "g"), ("r", R_TRACE, "s"),
                                         ("u", "utilisation", "s"), ("mig", "migrations (mean)", ".1f")]), ""]
    with atomic_open(out / "drs.md", encoding="utf-8") as fh:
        fh.write("\n".join(md) + "\n")
    log(f"wrote {out / 'drs.md'} and plots/CSVs in {time.perf_counter() - t_all:.0f} s")
    return 0


def write_csv(df: pd.DataFrame, path: Path) -> None:
    with atomic_open(path, encoding="utf-8", newline="") as fh:
        df.to_csv(fh, index=False)


if __name__ == "__main__":
    sys.exit(main())
