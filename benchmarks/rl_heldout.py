"""Issue 24: the learned scheduler against the one-step lookahead on MORE held-out Normal sets than the other RL
pages' five, in OUR simulator (never the paper's numbers).

Run: ``.venv/bin/python benchmarks/rl_heldout.py [--sets 20] [--first-set 0] [--agent LABEL=NPZ ...]
[--planner-agents LABELS] [--planner-set KEY=VALUE ...] [--name rl_heldout] [--workers 2] [--reuse CSV] [--out DIR]
[--quick]`` -> ``docs/results/NAME.md`` and ``.csv``.

The pages of the other RL benchmarks pair each agent with the lookahead on five held-out sets and pool every seed x
set pair into one interval; the seeds share those five sets, so that interval treats 25 correlated pairs as
independent. Here each policy runs on ``--sets`` held-out sets of 256 Normal jobs (seeds 1,000,000 + i, the first
five being the other pages'): the lookahead, random valid actions, contention-greedy, each agent of ``--agent``
alone (argmax and sampled) and the shipped planner (``SHIPPED_PLANNER``, or with the settings of ``--planner-set``,
e.g. ``horizon=6 endgame=none``) over each agent of ``--planner-agents``. ``--first-set K``: the sets from seed
1,000,000 + K on (sets never run before, for a test decided in advance); the first-five split is then left out. Per
row: the paired change of the average JCT against the lookahead (mean ± 95 % t-interval over the sets, wins), on the
first five sets and on the rest; for agents labelled ``... sN`` (seeds of one recipe) two pooled rows: **by set**
(each set's mean over the seeds, the interval over the sets: the honest one) and over every seed x set pair (as the
other pages pool). ``--workers``: episodes run in that many processes. ``--reuse``: rows of an earlier CSV (same
policy, label, set, jobs and, for the planner, the same settings in full) kept, not run again. ``--quick``: 2 sets of
32 jobs, written to a temporary folder (or ``--out``).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import re
import shlex
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT / "src", ROOT):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import pandas as pd  # noqa: E402

from benchmarks.rl import ci95  # noqa: E402  (one 95 % interval for the RL tables)
from benchmarks.rl_planner import SHIPPED, _fmt, _opt, _seed_group  # noqa: E402
from optsched.errors import InstanceError  # noqa: E402
from optsched.io import atomic_open  # noqa: E402
from optsched.rl.planner import check_settings  # noqa: E402
from optsched.sim.contention.lookahead import SHIPPED_PLANNER  # noqa: E402

# the planner's settings --planner-set may change (the others are the shipped search's own)
PLANNER_KEYS = ("horizon", "top", "endgame", "deep", "stops")
OTHER_PAGES_SETS = 5  # the held-out sets of rl_planner.md, rl_learned.md and rl_expert.md: 1,000,000-1,000,004
# the rows run by the simulator's registered policies: random valid actions and contention-greedy (no agent); each
# agent's sampled actions ("sampled") go through its rl-agent (its softmax, seed 0)
SIMULATED = {"random": "contention-random", "greedy": "contention-greedy"}
ROW_NAMES = {"agent": "network alone (argmax)", "sampled": "network alone (sampled)",
             "random": "random valid actions", "greedy": "contention-greedy"}


def episode(task: tuple[str, str, str, int, int, tuple]) -> dict:
    """One episode: (policy, label, agent .npz or "", set seed, jobs, the planner's settings over
    ``SHIPPED_PLANNER``: (key, value) pairs) -> its row."""
    from optsched.generators.contention import random_contention_instance
    from optsched.rl.planner import SHIPPED_PLANNER, plan_episode
    from optsched.sim import simulate
    from optsched.sim.contention.agent import NumpyPolicy

    policy, label, npz, seed, jobs, settings = task
    inst = random_contention_instance(jobs=jobs, mix="normal", seed=seed)
    c0 = time.process_time()
    if policy in SIMULATED or policy == "sampled":  # through the simulator (the one door), the same round accounting
        res = simulate(inst, scheduler=SIMULATED.get(policy)
                       or {"name": "rl-agent", "policy": npz, "deterministic": False, "seed": 0})
        return {"policy": policy, "label": label, "instance_seed": seed, "jobs": jobs,
                "avg_jct_h": float(res.jobs["round_jct_s"].mean()) / 3600.0, "decisions": float("nan"),
                "cpu_s": time.process_time() - c0, "search": ""}
    if policy == "lookahead":
        r = plan_episode(inst, "lookahead", plan=False)
    elif policy == "agent":
        r = plan_episode(inst, NumpyPolicy.load(npz), plan=False)
    else:
        r = plan_episode(inst, NumpyPolicy.load(npz), **{**SHIPPED_PLANNER, **dict(settings)})
    return {"policy": policy, "label": label, "instance_seed": seed, "jobs": jobs, "avg_jct_h": r["avg_jct_h"],
            "decisions": r["decisions"], "cpu_s": time.process_time() - c0,
            "search": search_key(settings) if policy == "planner" else ""}


def reused(old: pd.DataFrame, tasks: list[tuple]) -> tuple[list[dict], list[tuple]]:
    """``--reuse``: the rows of ``old`` that are tasks of this run (same policy, label, set, jobs and, for the
    planner, the same full settings: [`search_key`][]) and the tasks left to run, in their order."""
    if "search" not in old:
        old = old.assign(search="")

    def key(r: dict) -> tuple:
        return r["policy"], str(r["label"]), int(r["instance_seed"]), int(r["jobs"]), str(r["search"])

    want = {(t[0], t[1], t[3], t[4], search_key(t[5]) if t[0] == "planner" else ""): t for t in tasks}
    rows = [r for r in old.to_dict("records") if key(r) in want]
    done = {key(r) for r in rows}
    return rows, [t for k, t in want.items() if k not in done]


def search_key(settings) -> str:
    """A planner row's settings in full (``SHIPPED_PLANNER`` with ``settings`` over it), as the CSV records them:
    ``--reuse`` keeps a planner row only when they are the run's (a CSV without them, or another default, reruns)."""
    return " ".join(f"{k}={v}" for k, v in sorted({**SHIPPED_PLANNER, **dict(settings)}.items()))


def table(df: pd.DataFrame, split: bool = True, planner: str = "rl-planner (shipped search)") -> list[str]:
    """The page's table: every (policy, label) against the lookahead, then the pooled rows of each seed group;
    ``split``: also on the first five sets (the other pages') and on the rest; ``planner``: the planner rows' name."""
    look = df[df["policy"] == "lookahead"].set_index("instance_seed")["avg_jct_h"]
    sets = sorted(look.index)
    head = sets[:OTHER_PAGES_SETS]
    if split:
        lines = ["| policy | agent | vs lookahead, all sets | wins | first 5 sets | wins | the other sets | wins | "
                 "CPU s / episode (median) |", "|---" * 9 + "|"]
    else:
        lines = ["| policy | agent | vs lookahead | wins | CPU s / episode (median) |", "|---" * 5 + "|"]

    def cells(v: pd.Series) -> str:
        out = []
        parts = (v, v.loc[[s for s in head if s in v.index]], v.loc[[s for s in v.index if s not in head]]) \
            if split else (v,)
        for part in parts:
            out.append(f"{_fmt(*ci95(part.values))} | {int((part < 0).sum())} / {len(part)}" if len(part) else " | ")
        return " | ".join(out)

    groups: dict[tuple[str, str], list[pd.Series]] = {}
    for (policy, label), d in df[df["policy"] != "lookahead"].groupby(["policy", "label"], sort=False):
        d = d.set_index("instance_seed")
        if sorted(d.index) != sets:
            raise SystemExit(f"{policy} {label}: sets {sorted(d.index)} differ from the lookahead's {sets}")
        v = (d["avg_jct_h"] / look - 1).loc[sets]
        lines.append(f"| {ROW_NAMES.get(policy, planner)} | "
                     f"{label} | {cells(v)} | {d['cpu_s'].median():.1f} |")
        if (grp := _seed_group(label)) is not None:
            groups.setdefault((policy, grp), []).append(v)
    for (policy, grp), vs in groups.items():
        if len(vs) < 2:
            continue
        name = ROW_NAMES.get(policy, planner)
        by_set = pd.concat(vs, axis=1).mean(axis=1)
        lines.append(f"| {name} | **{grp}* by set** ({len(vs)} seeds) | **{cells(by_set)}** | |")
        pairs = pd.concat(vs)
        m, h = ci95(pairs.values)
        lines.append(f"| {name} | {grp}* every pair ({len(pairs)}) | {_fmt(m, h)} | {int((pairs < 0).sum())} / "
                     f"{len(pairs)} |" + " |" * (4 if split else 0) + " |")
    lines.append("")
    lines.append(f"The lookahead: {look.mean():.3f} h, the mean over the {len(sets)} sets; "
                 f"{df[df['policy'] == 'lookahead']['cpu_s'].median():.1f} CPU s per episode (median).")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=20, help="held-out Normal sets (seeds 1,000,000 + i; default 20)")
    ap.add_argument("--first-set", type=int, default=0,
                    help="the first set's i (default 0): sets 1,000,000 + first-set on, e.g. never run before")
    ap.add_argument("--planner-set", nargs="*", default=[], metavar="KEY=VALUE",
                    help=f"the planner's settings over SHIPPED_PLANNER (keys {', '.join(PLANNER_KEYS)}; a positive "
                         "integer or none), e.g. horizon=6 endgame=none deep=none stops=none")
    ap.add_argument("--name", default="rl_heldout", help="the page's file name, without .md / .csv (default "
                                                         "rl_heldout)")
    ap.add_argument("--agent", nargs="*", default=None,
                    help="LABEL=NPZ (default: the shipped normal-wc, labelled shipped)")
    ap.add_argument("--planner-agents", default=None,
                    help="comma-separated labels whose shipped planner runs too (default: the first agent; none: no "
                         "planner)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--reuse", default=None, help="CSV of an earlier run: its rows are kept, not run again")
    ap.add_argument("--out", default=None, help="directory of the .md and .csv (default docs/results; --quick: a "
                                                "temporary folder)")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    if args.sets < 2 or args.workers < 1 or args.first_set < 0:
        ap.error("--sets must be at least 2, --workers at least 1 and --first-set at least 0")
    if not re.fullmatch(r"[A-Za-z0-9_-]+", args.name):
        ap.error(f"--name: {args.name!r} is not a file name of letters, digits, _ and -")
    settings: dict[str, int | None] = {}
    for spec in args.planner_set:
        key, sep, value = spec.partition("=")
        try:
            if not sep or key not in PLANNER_KEYS:
                raise ValueError
            settings[key] = _opt(value)
        except ValueError:
            ap.error(f"--planner-set: {spec!r} is not KEY=VALUE with KEY one of {', '.join(PLANNER_KEYS)} and VALUE a "
                     "positive integer or none")
    try:  # the settings plan_episode would refuse, refused before any run
        check_settings(**{**SHIPPED_PLANNER, **settings})
    except InstanceError as exc:
        ap.error(f"--planner-set: {exc}")
    kw = tuple(sorted(settings.items()))
    agents: dict[str, str] = {}
    for spec in args.agent or [f"shipped={SHIPPED}"]:
        label, sep, npz = spec.partition("=")
        if not sep or not label or not Path(npz).is_file():
            ap.error(f"--agent: {spec!r} is not LABEL=NPZ with an existing file")
        agents[label] = npz
    planners = list(agents)[:1] if args.planner_agents is None else \
        [x for x in args.planner_agents.split(",") if x and x != "none"]
    if set(planners) - set(agents):
        ap.error(f"--planner-agents: unknown label(s) {sorted(set(planners) - set(agents))}")
    n_sets, jobs = (2, 32) if args.quick else (args.sets, 256)
    out = Path(args.out) if args.out else (Path(tempfile.mkdtemp(prefix="rl_heldout_")) if args.quick
                                           else ROOT / "docs" / "results")
    out.mkdir(parents=True, exist_ok=True)
    planner_text = ", ".join(f"{k} {'none' if v is None else v}" for k, v in settings.items())
    first = args.first_set
    seeds = [1_000_000 + first + i for i in range(n_sets)]
    tasks: list[tuple[str, str, str, int, int, tuple]] = [("lookahead", "", "", s, jobs, ()) for s in seeds]
    tasks += [(p, "", "", s, jobs, ()) for p in ("random", "greedy") for s in seeds]
    tasks += [(p, lab, npz, s, jobs, ()) for p in ("agent", "sampled") for lab, npz in agents.items() for s in seeds]
    tasks += [("planner", lab, agents[lab], s, jobs, kw) for lab in planners for s in seeds]
    rows: list[dict] = []
    if args.reuse:
        rows, tasks = reused(pd.read_csv(args.reuse, keep_default_na=False), tasks)
    t0 = time.perf_counter()
    # the planner's episodes first (1-2 CPU min each on 256 jobs against seconds for the others)
    tasks.sort(key=lambda t: t[0] != "planner")
    with cf.ProcessPoolExecutor(max_workers=args.workers) as pool:
        for k, row in enumerate(pool.map(episode, tasks), 1):
            rows.append(row)
            print(f"[{k}/{len(tasks)}] {row['policy']} {row['label']} set {row['instance_seed']}: "
                  f"{row['avg_jct_h']:.3f} h ({row['cpu_s']:.1f} CPU s)", flush=True)
    df = pd.DataFrame(rows).sort_values(["policy", "label", "instance_seed"], kind="stable")
    wall = time.perf_counter() - t0
    cmd = shlex.join([".venv/bin/python", "benchmarks/rl_heldout.py", *(argv if argv is not None else sys.argv[1:])])
    lines = ["# Issue 24: the learned scheduler against the lookahead on more held-out sets (our simulator; not the "
             "paper's numbers)", "",
             f"Command: `{cmd}` ({wall / 60:.1f} min on the shared 2-core machine"
             + ("; rows of `--reuse` kept, not run again" if args.reuse else "") + ").", "",
             f"Held-out Normal sets of {jobs} jobs, seeds {seeds[0]:,} to {seeds[-1]:,} (never trained on; "
             + (f"the first {OTHER_PAGES_SETS} are the sets of `rl_planner.md`, `rl_learned.md` and `rl_expert.md`"
                if first == 0 else "the first-five split of the other pages is left out") + "). Paired "
             "change of the average JCT against the one-step lookahead (negative: better than it), mean ± 95 % "
             "t-interval over the sets, and the sets won. Pooled rows: **by set** takes each set's mean over the "
             "seeds and the interval over the sets (the seeds share the sets, so this is the interval to read); "
             "every pair treats each seed x set pair as independent, as the other RL pages pool (narrower, and "
             "optimistic). The network alone is the agent's argmax action at every decision (numpy), or its sampled "
             "action (its softmax, seed 0, through the simulator's `rl-agent`); random valid actions and "
             "contention-greedy are the simulator's `contention-random` and `contention-greedy`; rl-planner is "
             f"the shipped search (`SHIPPED_PLANNER`{', with ' + planner_text if settings else ''}) over it.", ""]
    split = first == 0
    name = f"rl-planner (shipped search{', ' + planner_text if settings else ''})"
    lines += table(df, split, name)
    with atomic_open(out / f"{args.name}.md") as fh:
        fh.write("\n".join(lines) + "\n")
    with atomic_open(out / f"{args.name}.csv", newline="") as fh:
        df.to_csv(fh, index=False)
    print("\n".join(table(df, split, name)))
    print(f"wrote {out / (args.name + '.md')} ({wall / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
