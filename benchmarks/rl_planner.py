"""Issue 24: a learned scheduler that plans ([`optsched.rl.planner`][]: one-step rollout over a trained agent) on the
30 proven small instances and on the held-out Normal sets, in OUR simulator against OUR DP's optima and OUR
lookahead (never the paper's numbers).

Run: ``.venv/bin/python benchmarks/rl_planner.py [--part small,large] [--agent [LABEL=]NPZ ...] [--sets 5]
[--horizon 4] [--top 2] [--gate disagree] [--endgame 8] [--deep 8] [--stops 1] [--stops-mixes MIXES]
[--plain-stops none] [--mixes normal,heavy,medium,low]
[--large-agents LABELS] [--mix-agents MIX=LABELS ...] [--plain-planners BASE[:GATE],...] [--plain-mixes normal]
[--small-horizon none] [--small-top none] [--reuse CSV] [--out DIR] [--quick]``.

* **small**: the instances and optima of ``docs/results/rl_optimum.csv`` (the DP is not run again; as
  ``benchmarks/rl_small_teachers.py``). Per base (the lookahead, each agent): the base alone and the planner over
  it (full rollouts, every valid action, unless ``--small-horizon`` / ``--small-top``): mean gap to the optimum,
  optimal count, CPU per decision; agents whose labels end in ``sN`` are also pooled (every seed x instance pair,
  95 % t-interval).
* **large**: per mix of ``--mixes``, ``--sets`` held-out sets of 256 jobs (seeds 1,000,000 + i, all at t = 0):
  the lookahead, random valid actions, contention-greedy, and per agent of ``--large-agents`` the agent alone
  (argmax and sampled) and the planner over it (``--horizon`` rounds then the fluid estimate, the agent's
  ``--top`` best actions tried, only where ``--gate`` says the agent is unsure; where at most ``--endgame`` jobs
  are unfinished, every valid action followed to the end by the agent and both lookaheads, two decisions deep in
  the first round where at most ``--deep`` are, and at each round's start there every set of at most ``--stops``
  running jobs stopped; the defaults are ``SHIPPED_PLANNER``'s; ``--stops-mixes``: the mixes whose planners search
  stops, the others' planners do not, as before session 15). Paired change of the average
  JCT against the lookahead, random, contention-greedy and the agent alone, per agent and pooled over the agents
  labelled ``... sN`` (every seed x set pair), with the 95 % t-interval and the wins; CPU ms per decision.
* **does the network matter?** (``--plain-planners``, on the mixes of ``--plain-mixes``): the same search (the
  same horizon, top, endgame and deep) over a non-learned base, ``lookahead`` or ``lookahead-small``, ungated
  (``BASE``: planning at every decision with a choice, over the base's own top actions) or gated
  (``BASE:experts``: only where the two lookaheads' actions differ; the ``disagree`` gate of the agents compares
  with the lookahead, so it would never fire for a lookahead base); its change against the baselines, its CPU, and
  each agent's planner paired against it set by set (pooled over the ``sN`` seeds).

Writes ``docs/results/rl_planner.md`` and ``.csv`` (``--out DIR``: there instead; ``--quick``: ``tmp/rl_quick/``,
2 small instances and one 64-job set). ``--reuse``: rows of an earlier CSV (same part, agent, policy, set and
settings) kept, not run again.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT / "src", ROOT):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from benchmarks.rl import ci95  # noqa: E402  (one 95 % interval for the RL tables)
from optsched.generators.contention import random_contention_instance  # noqa: E402
from optsched.io import atomic_open  # noqa: E402
from optsched.sim.contention.agent import NumpyPolicy  # noqa: E402

SHIPPED = str(ROOT / "src" / "optsched" / "rl" / "data" / "normal-wc.npz")


def _opt(x: str) -> int | None:
    return None if x in ("none", "all", "") else int(x)


def _seed_group(label: str) -> str | None:
    """The group a label's row is pooled in: ``small s3`` -> ``small s`` (every seed of one recipe); None for a
    label without a seed number."""
    grp = label.rstrip("0123456789")
    return grp if grp != label and grp.endswith("s") else None


def _fmt(m: float, h: float, pct: bool = True) -> str:
    f = (lambda v: f"{v:+.1%}") if pct else (lambda v: f"{v:.2%}")
    return f(m) if math.isnan(h) else f"{f(m)} ± {h:.1%}"


def _plain_tables(plain, agents, res, look, rnd, grd, hz, tp, eg, dp, stp=None) -> list[str]:
    """The markdown of the control "does the network matter?": each non-learned base's planner against the
    baselines, then each agent's planner paired with it set by set (pooled over the agents labelled ``sN``)."""

    def share(d: dict) -> str:
        n = sum(d[s]["choices"] for s in look)
        return f"{sum(d[s]['planned'] for s in look) / n:.0%}" if n else ""

    def cpu(d: dict) -> str:
        return f"{1000 * sum(d[s]['cpu_s'] for s in look) / sum(d[s]['decisions'] for s in look):.1f}"

    lines = ["#### Does the learned network matter? The same search over a non-learned base", "",
             f"The same search (horizon {hz}, top {tp}, endgame {eg}, deep {dp}, fortified, "
             + ("without stops: the agents' planners above may stop jobs in the endgame, this control does not"
                if stp is None else f"stops {stp}") + ") with the lookahead as its "
             "base instead of the network: tried actions the lookahead's own best (by its predicted total "
             "throughput), planned at every decision with a choice, or only where the lookahead's action is not "
             "lookahead-small's (gate `experts`; the network's gate `disagree` compares with the lookahead, so it "
             "never fires for it). Planned: the share of the decisions with a choice that were searched.", "",
             "| planner base | avg JCT (h) | vs lookahead | wins | vs random | wins | vs greedy | wins | planned | "
             "CPU ms / decision |", "|---" * 10 + "|"]
    for label, _, _ in plain:
        d = res[label]["planner"]
        cells = []
        for ref in (look, rnd, grd):
            v = [d[s]["avg_jct_h"] / ref[s]["avg_jct_h"] - 1 for s in look]
            cells.append(f"{_fmt(*ci95(v))} | {sum(x < 0 for x in v)} / {len(v)}")
        m, h = ci95([d[s]["avg_jct_h"] for s in look])
        lines.append(f"| {label} | {m:.3f} ± {h:.3f} | " + " | ".join(cells) + f" | {share(d)} | {cpu(d)} |")
    lines += ["", "Each agent's planner (the shipped search over the network) paired with the non-learned base's "
              "planner on the same sets (negative: the network's planner has the lower average JCT; pooled rows: "
              "every seed x set pair):", "",
              "| agent | planned | CPU ms / decision | " + " | ".join(f"vs {lab} | wins" for lab, _, _ in plain) + " |",
              "|---" * (3 + 2 * len(plain)) + "|"]
    pool: dict[str, list[list[float]]] = {}
    for label in agents:
        d = res[label]["planner"]
        cells = []
        for k, (lab, _, _) in enumerate(plain):
            v = [d[s]["avg_jct_h"] / res[lab]["planner"][s]["avg_jct_h"] - 1 for s in look]
            cells.append(f"{_fmt(*ci95(v))} | {sum(x < 0 for x in v)} / {len(v)}")
            if (grp := _seed_group(label)) is not None:
                pool.setdefault(grp, [[] for _ in plain])[k].extend(v)
        lines.append(f"| {label} | {share(d)} | {cpu(d)} | " + " | ".join(cells) + " |")
    for grp, vs in pool.items():
        if len(vs[0]) > len(look):
            lines.append(f"| {grp}* (all seeds) | | | " + " | ".join(
                f"**{_fmt(*ci95(v))}** | {sum(x < 0 for x in v)} / {len(v)}" for v in vs) + " |")
    return lines + [""]


def main(argv: list[str] | None = None) -> int:
    from optsched.rl.planner import GATES, SHIPPED_PLANNER, plan_episode

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", default="small,large")
    ap.add_argument("--agent", nargs="*", default=None, help="LABEL=NPZ or NPZ (default: the shipped normal-wc)")
    ap.add_argument("--optima", default=str(ROOT / "docs" / "results" / "rl_optimum.csv"))
    ap.add_argument("--sets", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=256)
    ap.add_argument("--horizon", default="4", help="rounds of each rollout on the large sets (none: to the end)")
    ap.add_argument("--top", default="2", help="the agent's best actions tried on the large sets (all: every one)")
    ap.add_argument("--gate", default="none", help="plan only where the agent is unsure on the large sets: "
                                                    "'disagree', 'disagree-any', a probability, or 'none'")
    ap.add_argument("--endgame", default=str(SHIPPED_PLANNER["endgame"]),
                    help="exact rollout with three bases where at most this many jobs are unfinished (none: never)")
    ap.add_argument("--deep", default=str(SHIPPED_PLANNER["deep"]),
                    help="two decisions deep in the first round where at most this many jobs are unfinished")
    ap.add_argument("--stops", default=str(SHIPPED_PLANNER["stops"]),
                    help="the endgame search also stops every set of at most this many running jobs at a round's "
                         "start (none: never)")
    ap.add_argument("--plain-stops", default="none",
                    help="--stops of the --plain-planners' search (default none: the control as session 12 ran it)")
    ap.add_argument("--stops-mixes", default="all",
                    help="comma-separated mixes whose planners search stops (all: every mix); the others' do not")
    ap.add_argument("--mixes", default="normal", help="comma-separated mixes of the large sets")
    ap.add_argument("--other-mix-agents", default=None,
                    help="comma-separated labels of the agents run on the mixes other than normal (default: those "
                         "of --large-agents)")
    ap.add_argument("--mix-agents", nargs="*", default=[],
                    help="MIX=LABELS (comma-separated): the agents run on that mix, over --other-mix-agents")
    ap.add_argument("--small-jobs", default="4,5", help="job counts of the small instances (all 73 proven: "
                                                        "benchmarks/rl_optimum.py --planner)")
    ap.add_argument("--small-horizon", default="none")
    ap.add_argument("--small-top", default="all")
    ap.add_argument("--large-agents", default=None,
                    help="comma-separated labels of the agents run on the large sets (default: the first agent)")
    ap.add_argument("--plain-planners", default="",
                    help="comma-separated BASE[:GATE] (lookahead or lookahead-small; gate none or experts): the same "
                         "search over a non-learned base, paired with each agent's planner")
    ap.add_argument("--plain-mixes", default="normal", help="comma-separated mixes of --plain-planners")
    ap.add_argument("--reuse", default=None)
    ap.add_argument("--out", default=None, help="directory of the .md and .csv (default: docs/results; a quick run "
                                                "that must not rewrite the tracked page: tmp/...)")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    parts = [p for p in args.part.split(",") if p]
    agents: dict[str, str] = {}
    for a in (args.agent if args.agent else [f"shipped={SHIPPED}"]):
        label, _, path = a.rpartition("=")
        agents[label or Path(path).stem] = path
        NumpyPolicy.load(path)  # a bad file fails here, before any work
    out = Path(args.out) if args.out else ROOT / ("tmp/rl_quick" if args.quick else "docs/results")
    out.mkdir(parents=True, exist_ok=True)
    if args.quick:
        args.sets, args.jobs = 1, 64
    reuse: dict = {}
    if args.reuse:
        old = pd.read_csv(args.reuse)
        for col, default in (("horizon", -1), ("top", -1), ("mix", "normal"), ("gate", "none"), ("agent", ""),
                             ("endgame", -1), ("deep", -1), ("fortify", 0), ("tiebreak", "none"), ("stops", -1)):
            old[col] = old[col].fillna(default) if col in old else default
        reuse = {(r["part"], r["mix"], r["agent"], r["policy"], int(r["jobs"]), int(r["instance_seed"]),
                  int(r["horizon"]), int(r["top"]), str(r["gate"]), int(r["endgame"]), int(r["deep"]),
                  int(r["fortify"]), str(r["tiebreak"]), int(r["stops"])): r.to_dict()
                 for _, r in old.iterrows()}
    eg, dp, stp, plain_stp = _opt(args.endgame), _opt(args.deep), _opt(args.stops), _opt(args.plain_stops)
    stop_mixes = None if args.stops_mixes == "all" else {m for m in args.stops_mixes.split(",") if m}
    t0 = time.perf_counter()
    rows: list[dict] = []

    def run(part: str, agent: str, policy: str, inst, base, horizon, top, plan, extra, mix="normal",
            gate=None, stops=None) -> dict:
        sd = -1 if inst.seed is None else int(inst.seed)
        g = "none" if gate is None or not plan else str(gate)
        e, d = (eg, dp) if plan and part == "large" else (None, None)
        fort = bool(SHIPPED_PLANNER["fortify"]) and e is not None  # old rows without the column: unfortified
        tie = SHIPPED_PLANNER["tiebreak"] if e is not None else None  # old rows without the column: none
        st = stops if e is not None and (stop_mixes is None or mix in stop_mixes) else None  # old rows: none
        key = (part, mix, agent, policy, len(inst.jobs), sd, -1 if horizon is None else horizon,
               -1 if top is None else top, g, -1 if e is None else e, -1 if d is None else d, int(fort),
               str(tie or "none"), -1 if st is None else st)
        if key in reuse:
            row = reuse[key]
        else:
            r = plan_episode(inst, base, horizon=horizon, plan=plan, top=top, gate=gate if plan else None,
                             endgame=e, deep=d, fortify=fort, tiebreak=tie, stops=st)
            r.pop("summary", None)
            r.pop("actions", None)
            row = {"part": part, "mix": mix, "agent": agent, "policy": policy, "instance_seed": sd,
                   "jobs": len(inst.jobs), "horizon": key[6], "top": key[7], "gate": g, "endgame": key[9],
                   "deep": key[10], "fortify": key[11], "tiebreak": key[12], "stops": key[13], **extra, **r}
        rows.append(row)
        return row

    lines = ["# Issue 24: a learned scheduler that plans (our simulator, our DP; not the paper's numbers)", "",
             "The planner (`optsched.rl.planner`) is one step of rollout over a base policy: at each decision "
             "with a choice, each tried action is applied to a copy of the environment and the base policy is "
             "followed (to the end, or for `horizon` rounds and then a value-free fluid estimate of the rest); the "
             "best is taken (ties: the base's own action). It is a planner, not a network alone: its CPU cost per "
             "decision is in the tables. The base agents are networks of `optsched.rl.train` (numpy at inference; "
             "the planner needs the `[rl]` extra's gymnasium for the environment, not torch).", ""]
    if "small" in parts:
        opt = pd.read_csv(args.optima)
        opt = opt[(opt["status"] == "optimal")
                  & opt["jobs"].isin([int(x) for x in args.small_jobs.split(",") if x])].reset_index(drop=True)
        if args.quick:
            opt = opt.head(2)
        insts = [(random_contention_instance(jobs=int(r["jobs"]), mix="normal", seed=int(r["seed"]), hours=0.25),
                  float(r["opt_avg_jct_h"])) for _, r in opt.iterrows()]
        sh, st = _opt(args.small_horizon), _opt(args.small_top)
        lines += [f"## {len(insts)} small instances with proven optima", "",
                  f"Normal, {args.small_jobs} jobs of a quarter hour (`{Path(args.optima).name}`); planner: horizon "
                  f"{'to the end' if sh is None else sh}, tried actions {'all valid' if st is None else f'top {st}'}."
                  " Mean gap of the average JCT to the optimum (95 % t-interval over the instances; pooled rows: "
                  "over every seed x instance pair).", "",
                  "| base | policy | mean gap | by jobs | optimal | CPU ms / decision |",
                  "|---|---|---|---|---|---|"]
        pooled: dict[tuple[str, str], list[float]] = {}
        for label, base in [("lookahead", "lookahead"), *agents.items()]:
            for policy, plan in (("base", False), ("planner", True)):
                gaps, cpu, dec, n4 = [], 0.0, 0, []
                for inst, o in insts:
                    r = run("small", label, policy, inst, base, sh if plan else None, st if plan else None, plan,
                            {"opt_avg_jct_h": o})
                    gaps.append(r["avg_jct_h"] / o - 1)
                    cpu, dec = cpu + r["cpu_s"], dec + r["decisions"]
                    n4.append(len(inst.jobs))
                g, n4a = np.asarray(gaps), np.asarray(n4)
                m, h = ci95(g)
                by = ", ".join(f"{n}: {g[n4a == n].mean():.2%}" for n in sorted(set(n4)))
                lines.append(f"| {label} | {policy} | {_fmt(m, h, False)} | {by} | {int(np.sum(g < 1e-9))} / "
                             f"{len(g)} | {1000 * cpu / max(dec, 1):.1f} |")
                print(lines[-1], flush=True)
                if (grp := _seed_group(label)) is not None:
                    pooled.setdefault((grp, policy), []).extend(gaps)
        for (grp, policy), v in pooled.items():
            if len(v) > len(insts):
                m, h = ci95(v)
                lines.append(f"| {grp}* (all {len(v) // len(insts)} seeds) | {policy} | {_fmt(m, h, False)} | | "
                             f"{int(np.sum(np.asarray(v) < 1e-9))} / {len(v)} | |")
        lines.append("")
    if "large" in parts:
        from optsched.rl.train import eval_seeds
        from optsched.sim import simulate

        hz, tp = _opt(args.horizon), _opt(args.top)
        gate = None if args.gate in ("none", "") else (args.gate if args.gate in GATES else float(args.gate))
        big = [x for x in args.large_agents.split(",") if x] if args.large_agents else list(agents)[:1]
        if set(big) - set(agents):
            ap.error(f"--large-agents: unknown label(s) {sorted(set(big) - set(agents))}")

        def simulated(mix: str, inst, label: str, policy: str, spec) -> dict:
            """A plain policy through the simulator (the one door), as a row of the same shape."""
            sd = -1 if inst.seed is None else int(inst.seed)
            key = ("large", mix, label, policy, len(inst.jobs), sd, -1, -1, "none", -1, -1, 0, "none", -1)
            if key in reuse:
                row = reuse[key]
            else:
                c0 = time.process_time()
                res = simulate(inst, scheduler=spec)
                cpu = time.process_time() - c0
                n = len(res.custom["contention_rounds"]["plan"])
                row = {"part": "large", "mix": mix, "agent": label, "policy": policy, "instance_seed": sd,
                       "jobs": len(inst.jobs), "horizon": -1, "top": -1, "gate": "none", "endgame": -1, "deep": -1,
                       "fortify": 0, "tiebreak": "none", "stops": -1,
                       "avg_jct_h": float(res.jobs["round_jct_s"].mean()) / 3600.0,
                       "cpu_s": cpu, "rounds": n}
            rows.append(row)
            return row

        def pct(m: float, h: float) -> str:
            return _fmt(m, h)

        lines += [f"## Held-out sets ({args.sets} x {args.jobs} jobs per mix)", "",
                  f"The shipped learned scheduler (rl-planner): the agent plus search, horizon "
                  f"{'to the end' if hz is None else f'{hz} rounds + fluid estimate'}, tried actions "
                  f"{'all valid' if tp is None else f'the agent top {tp}'}, planning "
                  + ("at every decision with a choice" if gate is None else
                     "only where the agent's action is not the lookahead's" if gate == "disagree" else
                     "only where the agent's action is not the lookahead's or not lookahead-small's"
                     if gate == "disagree-any" else f"only where the agent's probability is below {gate}")
                  + ("" if eg is None and dp is None else
                     f"; where at most {max(eg or 0, dp or 0)} jobs are unfinished (the episode's tail), every valid "
                     "action followed to the end by the agent and both lookaheads, scored by the best (`endgame`"
                     + (f"; two decisions deep in the first round where at most {dp} are, `deep`" if dp else "")
                     + ("" if stp is None else
                        f"; at each round's start there, stopping every set of at most {stp} running jobs tried too, "
                        "each followed to the end by the same bases, and taken when strictly better (`stops`"
                        + ("" if stop_mixes is None else
                           f", on {', '.join(sorted(stop_mixes))} only: the other mixes' planner rows are without "
                           "stops, as session 12 ran them")
                        + ")")
                     + ")")
                  + " (elsewhere the agent's own argmax action). Paired change of the average JCT (mean ± 95 % "
                  "t-interval over the sets; pooled rows: every seed x set pair, and by set: each set's mean over "
                  "the seeds, the interval over the sets, the one to read as the seeds share the sets) and wins; "
                  "agent: argmax, sampled (the agent's softmax, seed 0) and the planner over the argmax agent. "
                  "CPU ms per decision in the same harness (one decision = one placement action).", ""]
        plain: list[tuple[str, str, str | None]] = []  # (label, base, gate)
        for spec in [x for x in args.plain_planners.split(",") if x]:
            b, _, g = spec.partition(":")
            if b not in ("lookahead", "lookahead-small") or g not in ("", "none", "experts"):
                ap.error(f"--plain-planners: {spec!r} is not BASE[:GATE] with BASE lookahead or lookahead-small and "
                         "GATE none or experts")
            plain.append((f"{b} ({'every decision' if g in ('', 'none') else 'gate experts'})", b,
                          None if g in ("", "none") else g))
        plain_mixes = [m for m in args.plain_mixes.split(",") if m]
        every = big
        for mix in [m for m in args.mixes.split(",") if m]:
            big = every if mix == "normal" or not args.other_mix_agents else \
                [x for x in args.other_mix_agents.split(",") if x]
            for spec in args.mix_agents:
                m, _, labels = spec.partition("=")
                if m == mix:
                    big = [x for x in labels.split(",") if x]
            if set(big) - set(agents):
                ap.error(f"--other-mix-agents: unknown label(s) {sorted(set(big) - set(agents))}")
            sets = [random_contention_instance(jobs=args.jobs, mix=mix, seed=s) for s in eval_seeds(args.sets)]
            res: dict[str, dict[str, dict[int, dict]]] = {}
            for inst in sets:
                sd = -1 if inst.seed is None else int(inst.seed)
                la = run("large", "", "lookahead", inst, "lookahead", None, None, False, {"mix": mix}, mix=mix)
                res.setdefault("", {}).setdefault("lookahead", {})[sd] = la
                res[""].setdefault("random", {})[sd] = simulated(mix, inst, "", "random", "contention-random")
                res[""].setdefault("greedy", {})[sd] = simulated(mix, inst, "", "greedy", "contention-greedy")
                for label in big:
                    base = agents[label]
                    b = run("large", label, "base", inst, base, None, None, False, {"mix": mix}, mix=mix)
                    smp = simulated(mix, inst, label, "sampled",
                                    {"name": "rl-agent", "policy": base, "deterministic": False, "seed": 0})
                    p = run("large", label, "planner", inst, base, hz, tp, True, {"mix": mix}, mix=mix, gate=gate,
                            stops=stp)
                    for k, v in (("base", b), ("sampled", smp), ("planner", p)):
                        res.setdefault(label, {}).setdefault(k, {})[sd] = v
                    print(f"  {mix} set {inst.seed} [{label}]: lookahead {la['avg_jct_h']:.3f} h, agent "
                          f"{b['avg_jct_h']:.3f} h, planner {p['avg_jct_h']:.3f} h ({p['cpu_ms_per_decision']:.1f} CPU "
                          "ms / decision)", flush=True)
                for label, b, g in plain if mix in plain_mixes else []:
                    p = run("large", b, "planner", inst, b, hz, tp, True, {"mix": mix}, mix=mix, gate=g,
                            stops=plain_stp)
                    res.setdefault(label, {})["planner"] = {**res.get(label, {}).get("planner", {}), sd: p}
                    print(f"  {mix} set {inst.seed} [{label} planner]: {p['avg_jct_h']:.3f} h "
                          f"({p['cpu_ms_per_decision']:.1f} CPU ms / decision)", flush=True)
            look, rnd, grd = res[""]["lookahead"], res[""]["random"], res[""]["greedy"]
            lines += [f"### {mix}", "",
                      "| agent | policy | avg JCT (h) | vs lookahead | wins | vs random | wins | vs greedy | wins | "
                      "vs agent alone | wins | CPU ms / decision |", "|---" * 12 + "|"]
            for name, d in (("lookahead", look), ("random", rnd), ("contention-greedy", grd)):
                m, h = ci95([r["avg_jct_h"] for r in d.values()])
                cpu = (f"{1000 * sum(r['cpu_s'] for r in d.values()) / sum(r['decisions'] for r in d.values()):.1f}"
                       if name == "lookahead" else "")
                lines.append(f"| | {name} | {m:.3f} ± {h:.3f} |" + " |" * 8 + f" {cpu} |")
            pool: dict[str, list[tuple[float, ...]]] = {}
            for label in big:
                for policy in ("base", "sampled", "planner"):
                    d = res[label][policy]
                    jct = [d[s]["avg_jct_h"] for s in look]
                    vs = [[d[s]["avg_jct_h"] / ref[s]["avg_jct_h"] - 1 for s in look]
                          for ref in (look, rnd, grd, res[label]["base"])]
                    cells = []
                    for k, v in enumerate(vs):
                        if k == 3 and policy == "base":
                            cells.append(" | ")
                            continue
                        m, h = ci95(v)
                        cells.append(f"{pct(m, h)} | {sum(x < 0 for x in v)} / {len(v)}")
                    cpu = ("" if policy == "sampled" else
                           f"{1000 * sum(d[s]['cpu_s'] for s in look) / sum(d[s]['decisions'] for s in look):.1f}")
                    m, h = ci95(jct)
                    lines.append(f"| {label} | {'argmax' if policy == 'base' else policy} | {m:.3f} ± {h:.3f} | "
                                 + " | ".join(cells) + f" | {cpu} |")
                    print(lines[-1], flush=True)
                    if (grp := _seed_group(label)) is not None:
                        pool.setdefault(f"{grp}*|{policy}", []).extend(zip(*vs))
            for k, tuples in pool.items():
                if len(tuples) > len(look):
                    grp, policy = k.split("|")
                    n_sets = len(look)
                    pairs = [[t[c] for t in tuples] for c in range(4)]  # every seed x set pair, per column
                    # by set: each set's mean over the seeds (the seeds share the sets, so the every-pair row is
                    # narrower than the evidence)
                    by_set = [[float(np.mean(col[i::n_sets])) for i in range(n_sets)] for col in pairs]
                    for name, bold, cols in ((f"{grp} (all seeds)", True, pairs),
                                             (f"{grp} (all seeds, by set)", False, by_set)):
                        cells = []
                        for c, v in enumerate(cols):
                            if c == 3 and policy == "base":
                                cells.append(" | ")
                                continue
                            txt = pct(*ci95(v))
                            cells.append(f"{f'**{txt}**' if bold else txt} | {sum(x < 0 for x in v)} / {len(v)}")
                        lines.append(f"| {name} | {'argmax' if policy == 'base' else policy} | | "
                                     + " | ".join(cells) + " | |")
            lines.append("")
            if plain and mix in plain_mixes:
                lines += _plain_tables(plain, big, res, look, rnd, grd, hz, tp, eg, dp, plain_stp)
    wall = time.perf_counter() - t0
    cmd = shlex.join([".venv/bin/python", "benchmarks/rl_planner.py", *(argv if argv is not None else sys.argv[1:])])
    lines[2:2] = [f"Command: `{cmd}` ({wall / 60:.1f} min on the shared 2-core machine"
                  + ("; rows of `--reuse` kept, not run again" if args.reuse else "") + ").", ""]
    with atomic_open(out / "rl_planner.md") as fh:
        fh.write("\n".join(lines) + "\n")
    with atomic_open(out / "rl_planner.csv", newline="") as fh:
        pd.DataFrame(rows).to_csv(fh, index=False)
    print(f"wrote {out / 'rl_planner.md'} ({wall / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
