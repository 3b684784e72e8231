"""``optsched rl train | evaluate | export``: paper 004's agent (MaskablePPO) and its evaluation.

* ``optsched rl train [--recipe imitation|mixed|paper] --mix normal --timesteps N --seed S -o policy.zip``: train on
  ``--sets`` job sets (seeds ``1000 x S + i``) with a progress bar; writes the SB3 zip and its numpy export
  ``policy.npz`` beside it. The default recipe (issue 24) clones the one-step lookahead with DAgger
  (``--imitation`` iterations) on 64-job windows with the average-JCT reward, work-conserving actions and the richer
  observation, then runs MaskablePPO; ``--recipe mixed`` adds DAgger with the rollout teacher on 4-8-job windows;
  ``--recipe paper`` is the repository's set-up. Needs the ``[rl]`` extra.
* ``optsched rl evaluate [--policy policy.npz|policy.zip|shipped|shipped-wc] --mix normal --sets 5``: the agent
  (the paper's agents as rl-base and rl-hybrid; issue 24's as rl-agent, argmax and sampled) and the baselines on
  held-out job sets (seeds from 1,000,000 on), in our simulator with the repository's round semantics; prints the
  mean of each metric per policy and the agent's change against LAS and SRTF; ``-o`` writes one row per
  (policy, job set) as CSV. An ``.npz`` or a shipped policy needs no extra. ``--planner`` adds the shipped
  learned scheduler, ``rl-planner``: issue 24's agent (default ``shipped-wc``) plus decision-time search
  ([`optsched.rl.planner`][]: where the network is unsure, its ``--top`` best actions are each followed by the
  network for ``--horizon`` rounds), and the CPU milliseconds per decision of the planner, the agent alone and
  the lookahead; it needs gymnasium (not torch).
* ``optsched rl export policy.zip -o policy.npz``: the numpy weights of a trained policy.

```pycon
>>> from optsched.cli import main
>>> main(["rl", "evaluate", "--sets", "1", "--jobs", "8", "--hours", "0.25", "--baselines", "contention-srtf"])
... # doctest: +ELLIPSIS
|    policy | avg JCT (h) | ...
...
0

```
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import InstanceError, SolverError
from ..io import check_output
from ..sim.contention.lookahead import GATES, TIEBREAKS
from ..sim.contention.lookahead import SHIPPED_PLANNER as PLANNER
from ._args import non_negative_int, output_file, positive_float, positive_int, seed

# these doctests read the shared DeepShare tables: skipped when they are absent (conftest.py at the root)
__doctest_requires__ = {"*": "deepshare-contention"}

MIXES = ("normal", "heavy", "medium", "low")
# a job set lives in memory with its per-job state, and training/evaluation run it round by round: far beyond any
# study of paper 004 (256 jobs per set), small enough to refuse a typo's extra zeros before the work starts
MAX_JOBS = 100_000
MAX_SETS = 10_000
MAX_TIMESTEPS = 10**9
MAX_IMITATION = 100
# the shipped agents: the paper's (rl/data/normal.npz, run as rl-base / rl-hybrid) and issue 24's
# (rl/data/normal-wc.npz, work-conserving actions and the richer observation, run as rl-agent)
SHIPPED = {"shipped": "normal", "shipped-wc": "normal-wc"}
# isolated job-hours simulated in 5-minute rounds: the paper's evaluation is 5 sets x 256 jobs x ~1 h (1,280); a
# million (12 million job-rounds) is far beyond any study, and what '--hours 1e6' (a typo's zeros) would ask for
MAX_JOB_HOURS = 10**6


def _unit_float(name: str):
    """A number in [0, 1] (W1 of the reward)."""
    def conv(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number in [0, 1], got {text!r}") from None
        if not 0 <= v <= 1:  # nan fails both comparisons
            raise argparse.ArgumentTypeError(f"{name} must be a number in [0, 1], got {text!r}")
        return v
    return conv


def _model_file(name: str, suffixes: tuple[str, ...]):
    """An existing regular file whose name ends in one of ``suffixes``."""
    def conv(text: str) -> str:
        path = Path(text)
        if path.suffix not in suffixes:
            raise argparse.ArgumentTypeError(f"{name} must be a {' or '.join(suffixes)} file, got {text!r}")
        if not path.is_file():
            raise argparse.ArgumentTypeError(f"{name}: no such file {text!r}")
        return text
    return conv


def _policy_spec(text: str) -> str:
    """``shipped`` or an existing ``.npz``/``.zip`` policy file."""
    return text if text in SHIPPED else _model_file("--policy", (".npz", ".zip"))(text)


def _file_not_stdout(name: str, suffix: str):
    """A file path to write (checked like every output), not standard output, ending in ``suffix``."""
    check = output_file(name)

    def conv(text: str) -> str:
        if text == "-":
            raise argparse.ArgumentTypeError(f"{name} must be a file path (a binary {suffix} file), got '-'")
        if not text.endswith(suffix):
            raise argparse.ArgumentTypeError(f"{name} must end in {suffix}, got {text!r}")
        return check(text)
    return conv


def _baselines(text: str) -> list[str]:
    """A comma list of the contention family's baselines (the registry's: ``runner.baseline_names``)."""
    from ..sim.contention.runner import baseline_names

    known = baseline_names()
    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [n for n in names if n not in known]
    if bad:
        raise argparse.ArgumentTypeError(f"--baselines: unknown {bad[0]!r} (known: {', '.join(known)})")
    return names


def _horizon(text: str) -> int | None:
    """A positive integer or ``none`` (the planner's ``--horizon``, ``--top``, ``--endgame``, ``--deep`` and
    ``--stops``)."""
    if text.lower() in ("none", "all"):
        return None
    return positive_int("--horizon/--top/--endgame/--deep/--stops", 10_000)(text)


def _tiebreak(text: str) -> str | None:
    """The endgame search's tie-break: one of ``optsched.rl.planner.TIEBREAKS`` or ``none``."""
    if text.lower() == "none":
        return None
    if text not in TIEBREAKS:
        raise argparse.ArgumentTypeError(f"--tiebreak must be one of {', '.join(TIEBREAKS)} or 'none', got {text!r}")
    return text


def _gate(text: str) -> float | str | None:
    """The planner's gate: a probability in (0, 1], one of ``optsched.rl.planner.GATES`` or ``none``."""
    if text.lower() == "none":
        return None
    if text in GATES:
        return text
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not 0 < v <= 1:
        raise argparse.ArgumentTypeError(f"--gate must be a number in (0, 1], one of {', '.join(GATES)} or 'none', "
                                         f"got {text!r}")
    return v


def _need_rl() -> None:
    try:
        import gymnasium  # noqa: F401
        import sb3_contrib  # noqa: F401
        import stable_baselines3  # noqa: F401
        import torch  # noqa: F401
    except ImportError as exc:
        raise SolverError(f"training needs the [rl] extra ({exc.name} is missing): pip install 'optsched[rl]'") \
            from None


def register(sub) -> None:
    p = sub.add_parser("rl", help="paper 004's RL agent: train, evaluate, export",
                       description="Train paper 004's agent with MaskablePPO, evaluate it against the baselines "
                                   "on held-out job sets, or export its network to numpy.")
    cmds = p.add_subparsers(dest="rl_command", metavar="SUBCOMMAND")
    cmds.required = True

    t = cmds.add_parser("train", help="train an agent (needs the [rl] extra)")
    t.add_argument("--mix", choices=MIXES, default="normal", help="job-set mix (default normal)")
    t.add_argument("--w1", type=_unit_float("--w1"), default=0.4,
                   help="W1 of the reward (W2 = 1 - W1; default 0.4, branch B)")
    t.add_argument("--recipe", choices=["imitation", "mixed", "paper"], default="imitation",
                   help="imitation (default, issue 24): average-JCT reward, work-conserving actions, the richer "
                        "observation, 64-job windows, DAgger from the one-step lookahead, then MaskablePPO; "
                        "mixed: imitation, then DAgger with the rollout teacher on 4-8-job windows; "
                        "paper: the repository's set-up (eq. 2 reward, the paper's tensor, 10 sets of 256 jobs)")
    t.add_argument("--reward", choices=["paper", "repo", "jct", "avg-jct"], default=None,
                   help="paper eq. 2 (CS), the repository's degradation form, minus jobs in the system (jct), or "
                        "minus jobs in the system / jobs in the set x round hours (avg-jct: the return is minus "
                        "the average JCT); default: the recipe's")
    t.add_argument("--observation", choices=["paper", "rich", "plan"], default=None,
                   help="the paper's (nodes, 16) tensor, the richer vector, or the richer vector with a look at the "
                        "filled round and the next (about 8 CPU ms per decision); default: the recipe's")
    t.add_argument("--action-space", choices=["work-conserving", "paper"], default=None,
                   help="work-conserving: 'nothing' masked while a placement is valid; paper: always allowed; "
                        "default: the recipe's")
    t.add_argument("--imitation", type=non_negative_int("--imitation", MAX_IMITATION), default=None,
                   help="DAgger iterations from the lookahead before PPO (0: none); default: the recipe's")
    t.add_argument("--teacher", choices=["lookahead", "lookahead-small", "rollout"], default="lookahead",
                   help="the imitation teacher: the one-step lookahead (default), its small-demand-first variant, or "
                        "the rollout over the lookahead (one episode per valid action and state: slow, for short "
                        "windows)")
    t.add_argument("--imitation-episodes", type=positive_int("--imitation-episodes", MAX_SETS), default=None,
                   help="episodes per DAgger iteration (default: the recipe's, 24)")
    t.add_argument("--timesteps", type=non_negative_int("--timesteps", MAX_TIMESTEPS), default=None,
                   help="MaskablePPO environment steps after imitation (default: the recipe's: 0 after imitation, "
                        "100,000 for the paper's)")
    t.add_argument("--seed", type=seed(), default=0, help="training seed; job sets 1000 x seed + i (default 0)")
    t.add_argument("--sets", type=positive_int("--sets", MAX_SETS), default=None,
                   help="training job sets (default: the recipe's, 1000 or 10)")
    t.add_argument("--jobs", type=positive_int("--jobs", MAX_JOBS), default=None,
                   help="jobs per set (default: the recipe's, 64 or 256)")
    t.add_argument("--hours", type=positive_float("--hours"), default=1.0, help="isolated hours per job")
    t.add_argument("--learning-rate", type=positive_float("--learning-rate"), default=None)
    t.add_argument("--n-steps", type=positive_int("--n-steps"), default=None)
    t.add_argument("--batch-size", type=positive_int("--batch-size"), default=None)
    t.add_argument("--no-progress", action="store_true", help="no progress bar")
    t.add_argument("-o", "--output", required=True, type=_file_not_stdout("-o", ".zip"),
                   help="the model zip to write (its .npz beside it)")
    t.set_defaults(func=run_train)

    e = cmds.add_parser("evaluate", help="the agent and the baselines on held-out job sets")
    e.add_argument("--policy", type=_policy_spec, default=None,
                   help="an .npz or .zip policy, 'shipped' (the paper's agent, default) or 'shipped-wc' (issue 24's; "
                        "the default with --planner)")
    e.add_argument("--mix", choices=MIXES, default="normal", help="job-set mix (default normal)")
    e.add_argument("--sets", type=positive_int("--sets", MAX_SETS), default=5, help="held-out job sets (default 5)")
    e.add_argument("--jobs", type=positive_int("--jobs", MAX_JOBS), default=256, help="jobs per set (default 256)")
    e.add_argument("--hours", type=positive_float("--hours"), default=1.0, help="isolated hours per job")
    e.add_argument("--baselines", type=_baselines, default=None,
                   help="comma-separated (default: every non-learned policy of the contention family, "
                        "optsched list schedulers)")
    e.add_argument("--sample", action="store_true", help="sample the paper agent's actions (the repository) "
                                                         "instead of the argmax (issue 24's agents always show both)")
    e.add_argument("--planner", action="store_true",
                   help="also the shipped learned scheduler: the agent plus decision-time search (rl-planner, "
                        "optsched.rl.planner; needs gymnasium, not torch; tens of CPU ms per decision)")
    e.add_argument("--horizon", type=_horizon, default=PLANNER["horizon"],
                   help=f"rounds of each planner rollout, then a fluid estimate ('none': to the end; default "
                        f"{PLANNER['horizon']})")
    e.add_argument("--top", type=_horizon, default=PLANNER["top"],
                   help=f"the agent's best actions the planner tries ('none': all; default {PLANNER['top']})")
    e.add_argument("--gate", type=_gate, default=PLANNER["gate"],
                   help="plan only where the agent is unsure: a probability p (its action's below p), 'disagree' "
                        "(its action is not the lookahead's), 'disagree-any' (not either lookahead's), 'experts' (the "
                        f"two lookaheads' actions differ) or 'none' (always; default {PLANNER['gate']})")
    e.add_argument("--endgame", type=_horizon, default=PLANNER["endgame"],
                   help="where at most this many jobs are unfinished, the planner tries every valid action "
                        "followed to the end by the agent and both lookaheads ('none': never; default "
                        f"{PLANNER['endgame']})")
    e.add_argument("--deep", type=_horizon, default=PLANNER["deep"],
                   help="where at most this many jobs are unfinished, that search looks two decisions deep "
                        f"('none': never; default {PLANNER['deep']})")
    e.add_argument("--no-fortify", dest="fortify", action="store_false", default=bool(PLANNER["fortify"]),
                   help="the endgame search re-plans at every decision instead of keeping the best trajectory it "
                        "has scored (default: fortified)")
    e.add_argument("--tiebreak", type=_tiebreak, default=PLANNER.get("tiebreak"),
                   help="the endgame search's choice among trajectories of tied (round-accounted) scores: "
                        "'exact-jct' (the earliest exact completions), 'makespan' (the earliest exact end) or 'none' "
                        f"(the agent's action; default {PLANNER.get('tiebreak') or 'none'})")
    e.add_argument("--stops", type=_horizon, default=argparse.SUPPRESS,
                   help="at each round's start of the endgame, the planner also tries stopping every set of at most "
                        "this many running jobs, a move the agent's actions do not have ('none': never; default "
                        f"{PLANNER.get('stops') or 'none'})")
    e.add_argument("-o", "--output", type=output_file("-o"),
                   help="CSV of every (policy, job set) row ('-': standard output)")
    e.set_defaults(func=run_evaluate)

    x = cmds.add_parser("export", help="numpy weights of a trained policy (needs the [rl] extra)")
    x.add_argument("model", type=_model_file("model", (".zip",)), help="the SB3 zip written by 'optsched rl train'")
    x.add_argument("-o", "--output", required=True, type=_file_not_stdout("-o", ".npz"), help="the .npz to write")
    x.set_defaults(func=run_export)


def _check_job_hours(sets: int, jobs: int, hours: float, what: str) -> None:
    """Refuse ``--hours`` when ``sets`` x ``jobs`` x ``hours`` exceeds MAX_JOB_HOURS, before any work."""
    max_hours = MAX_JOB_HOURS / jobs / sets
    if hours > max_hours:
        raise InstanceError(f"{sets} sets x {jobs} jobs x {hours:g} h is more than {MAX_JOB_HOURS:,} job-hours {what} "
                            f"(at most {max_hours:g} h here)", field="--hours")


def run_train(args: argparse.Namespace) -> int:
    _need_rl()
    # the numpy export is written beside the zip: both are checked before the training starts
    check_output(str(Path(args.output).with_suffix(".npz")), "-o")
    from ..rl.train import RECIPES, train

    recipe = RECIPES.get(args.recipe, {})  # an unknown recipe is train()'s error to report
    jobs = args.jobs if args.jobs is not None else int(recipe.get("jobs", 256))
    sets = args.sets if args.sets is not None else int(recipe.get("n_sets", 10))
    _check_job_hours(sets, jobs, args.hours, "per pass over the sets")

    hyper = {k: v for k, v in (("learning_rate", args.learning_rate), ("n_steps", args.n_steps),
                               ("batch_size", args.batch_size)) if v is not None}
    if args.timesteps == 0 and (args.imitation == 0 or (args.imitation is None and args.recipe == "paper")):
        raise InstanceError("nothing to train: --timesteps 0 and --imitation 0", field="--timesteps")
    wc = None if args.action_space is None else args.action_space == "work-conserving"
    _, info = train(mix=args.mix, w1=args.w1, reward=args.reward, timesteps=args.timesteps, seed=args.seed,
                    n_sets=args.sets, jobs=args.jobs, hours=args.hours, progress=not args.no_progress,
                    output=args.output, recipe=args.recipe, observation=args.observation, work_conserving=wc,
                    imitation=args.imitation, imitation_episodes=args.imitation_episodes, teacher=args.teacher,
                    **hyper)
    npz = Path(args.output).with_suffix(".npz")
    print(f"trained {info['name']} ({info['algorithm']}, {info['timesteps']} PPO steps) in {info['wall_s']} s; "
          f"wrote {args.output} and {npz}")
    return 0


def _policy(spec: str):
    from ..sim.contention.agent import load_policy

    if spec in SHIPPED:
        return load_policy(SHIPPED[spec])
    if spec.endswith(".zip"):
        _need_rl()
        from ..rl.export import numpy_policy

        if not Path(spec).exists():
            raise InstanceError(f"no such file {spec!r}", field="--policy")
        return numpy_policy(_load_model(spec, "--policy"))
    return load_policy(spec)


def _load_model(path: str, flag: str):
    """The SB3 model in ``path``; a zip that holds none (or not a MaskablePPO) is an input error naming the file."""
    import zipfile

    from ..rl.train import load_model

    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
    except (zipfile.BadZipFile, OSError) as exc:
        raise InstanceError(f"{path} is not a model zip written by 'optsched rl train' ({exc})", field=flag) from None
    if not {"data", "policy.pth"} <= names:
        raise InstanceError(f"{path} holds no Stable-Baselines3 model (no 'data' and 'policy.pth' inside; it has: "
                            f"{', '.join(sorted(names)[:5]) or 'nothing'})", field=flag)
    try:
        return load_model(path)
    except Exception as exc:  # SB3 raises AssertionError, KeyError, ValueError, RuntimeError on foreign zips
        raise InstanceError(f"cannot load the model in {path}: {type(exc).__name__}: {exc}", field=flag) from None


def run_evaluate(args: argparse.Namespace) -> int:
    from ..generators.contention import random_contention_instance
    from ..rl.evaluation import compare, evaluation_table

    if args.policy is None:
        args.policy = "shipped-wc" if args.planner else "shipped"
    if args.output is not None:
        check_output(args.output, "-o", inputs=[] if args.policy in SHIPPED else [args.policy])
    _check_job_hours(args.sets, args.jobs, args.hours, "to simulate")
    # stops are the endgame search's: without --endgame and --deep the default is dropped, a given --stops refused
    if args.planner and not (args.endgame or args.deep) and getattr(args, "stops", None) is not None:
        raise InstanceError("stops are searched by the endgame search: give --endgame or --deep too, or "
                            "--stops none", field="--stops")
    args.stops = getattr(args, "stops", PLANNER.get("stops")) if args.endgame or args.deep else None
    agent = _policy(args.policy)
    names = {"contention-las": "LAS", "contention-srtf": "SRTF"}
    if agent.meta.get("observation", "paper") != "paper" or agent.meta.get("work_conserving"):
        # issue 24's agents: their own observation and action space, argmax and sampled side by side
        pols: dict = {"rl-agent": {"name": "rl-agent", "policy": agent},
                      "rl-agent sampled": {"name": "rl-agent", "policy": agent, "deterministic": False}}
    else:
        pols = {"rl-base": {"name": "rl-base", "policy": agent, "deterministic": not args.sample},
                "rl-hybrid": {"name": "rl-hybrid", "policy": agent, "deterministic": not args.sample}}
    from ..sim.contention.runner import baseline_names

    for b in args.baselines if args.baselines is not None else baseline_names():
        pols[names.get(b, b)] = b
    seeds = [1_000_000 + i for i in range(args.sets)]
    insts = [random_contention_instance(jobs=args.jobs, mix=args.mix, seed=s, hours=args.hours) for s in seeds]
    df = compare(insts, pols)
    cpu_note = ""
    if args.planner:
        df, cpu_note = _with_planner(df, insts, agent, args)
    # with '-o -' the CSV owns standard output (for pipes); the table then goes to standard error
    print(evaluation_table(df), file=sys.stderr if args.output == "-" else sys.stdout)
    if cpu_note:
        print(cpu_note, file=sys.stderr if args.output == "-" else sys.stdout)
    print(f"(our simulator, repository round semantics; {args.sets} held-out {args.mix} job sets of {args.jobs} jobs, "
          f"seeds {seeds[0]}..{seeds[-1]}; policy {agent.meta.get('name', args.policy)})", file=sys.stderr)
    if args.output:
        from ..io import atomic_open

        with atomic_open(args.output, newline="") as fh:
            df.to_csv(fh, index=False)
    return 0


def _with_planner(df, insts, agent, args):
    """``df`` with the rl-planner's rows (the agent plus decision-time search) and a line of CPU ms per decision
    of the planner, the agent alone and the lookahead, measured in the same harness."""
    import pandas as pd

    try:
        import gymnasium  # noqa: F401
    except ImportError:
        raise SolverError("--planner needs gymnasium (the [rl] extra; torch is not needed): pip install "
                          "'optsched[rl]'") from None
    from ..rl.planner import agent_kind, plan_episode

    try:
        agent_kind(agent)
    except InstanceError as exc:
        raise InstanceError(f"needs an issue-24 agent (rich observation, work-conserving; e.g. "
                            f"--policy shipped-wc): {exc}", field="--planner") from None
    rows, cpu = [], {"rl-planner": [0.0, 0], "rl-agent": [0.0, 0], "lookahead": [0.0, 0]}
    for inst in insts:
        r = plan_episode(inst, agent, horizon=args.horizon, top=args.top, gate=args.gate, endgame=args.endgame,
                         deep=args.deep, fortify=args.fortify, tiebreak=args.tiebreak, stops=args.stops)
        rows.append({"policy": "rl-planner", "instance": inst.name, "instance_seed": inst.seed, **r["summary"]})
        for label, res in (("rl-planner", r), ("rl-agent", plan_episode(inst, agent, plan=False)),
                           ("lookahead", plan_episode(inst, "lookahead", plan=False))):
            cpu[label][0] += res["cpu_s"]
            cpu[label][1] += res["decisions"]
    note = (f"CPU ms per decision (horizon {args.horizon}, top {args.top}, gate {args.gate}, endgame "
            f"{args.endgame}, deep {args.deep}, fortify {'on' if args.fortify else 'off'}, tiebreak "
            f"{args.tiebreak or 'none'}, stops {args.stops or 'none'}): "
            + ", ".join(f"{k} {1000 * c / max(n, 1):.1f}" for k, (c, n) in cpu.items()))
    return pd.concat([df, pd.DataFrame(rows)], ignore_index=True), note


def run_export(args: argparse.Namespace) -> int:
    _need_rl()
    from ..rl.export import export_numpy

    if not Path(args.model).exists():
        raise InstanceError(f"no such file {args.model!r}", field="model")
    check_output(args.output, "-o", inputs=[args.model])
    p = export_numpy(_load_model(args.model, "model"), args.output, {"name": Path(args.model).stem})
    print(f"wrote {args.output}: {p.n_parameters} parameters, {p.n_actions} actions")
    return 0
