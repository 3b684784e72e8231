"""The contention family's comparison tables: every policy on every job set, the mean of each metric, and the
agents' change against LAS and SRTF (what ``optsched rl evaluate`` and ``make demo`` print).

Each run goes through the one door (``optsched.simulate(instance, scheduler=...)``), whose round accounting
([`ContentionMetrics`][optsched.sim.contention.runner.ContentionMetrics]) gives the repository's metrics.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..problems.contention import ContentionInstance
from ..sim import simulate

# these doctests read the shared DeepShare tables: skipped when they are absent (conftest.py at the root)
__doctest_requires__ = {"*": "deepshare-contention"}

__all__ = ["METRICS", "compare", "evaluation_table", "text_table"]

METRICS = (("avg_jct_s", "avg JCT (h)", 3600.0), ("p90_jct_s", "p90 JCT (h)", 3600.0),
           ("avg_runtime_jct_s", "avg run-time JCT (h)", 3600.0), ("p90_runtime_jct_s", "p90 run-time JCT (h)", 3600.0),
           ("utilisation", "utilisation", 1.0), ("avg_cs", "mean CS", 1.0), ("makespan_s", "makespan (h)", 3600.0))


def text_table(header: list[str], rows: list[list[Any]]) -> str:
    """A fixed-width markdown table; floats with 3 decimals.

    ```pycon
    >>> print(text_table(["a", "b"], [["x", 1.0]]))
    | a |     b |
    |---|-------|
    | x | 1.000 |

    ```
    """
    cells = [list(map(str, header))] + [[f"{c:.3f}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    w = [max(len(r[i]) for r in cells) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(c.rjust(x) for c, x in zip(r, w)) + " |"  # noqa: E731
    return "\n".join([line(cells[0]), "|" + "|".join("-" * (x + 2) for x in w) + "|", *map(line, cells[1:])])


def evaluation_table(df: pd.DataFrame) -> str:
    """Mean of each metric per policy (rows of [`compare`][optsched.rl.evaluation.compare]), and the agents' average-JCT
    change against
    LAS and SRTF (policies labelled ``LAS``, ``SRTF``, ``rl-base``, ``rl-hybrid``)."""
    means = df.groupby("policy", sort=False).mean(numeric_only=True)
    rows = [[pol, *[float(r[k]) / div for k, _, div in METRICS]] for pol, r in means.iterrows()]
    out = text_table(["policy", *[h for _, h, _ in METRICS]], rows)
    notes = []
    for ref in ("LAS", "SRTF"):
        for agent in ("rl-base", "rl-hybrid"):
            if ref in means.index and agent in means.index:
                d = means.loc[agent, "avg_jct_s"] / means.loc[ref, "avg_jct_s"] - 1
                notes.append(f"{agent} vs {ref}: {d:+.1%} average JCT")
    return out + ("\n" + "; ".join(notes) if notes else "")



def compare(instances: list[ContentionInstance], policies: dict[str, Any], *, seed: int | None = 0) -> pd.DataFrame:
    """Run every policy (label -> name, dict or object) on every instance; one row per (policy, instance) with
    the summary of [`contention_summary`][optsched.sim.contention.runner.contention_summary].

    ```pycon
    >>> from optsched.generators.contention import random_contention_instance
    >>> insts = [random_contention_instance(jobs=4, seed=s, hours=0.25) for s in (0, 1)]
    >>> df = compare(insts, {"LAS": "contention-las", "greedy": "contention-greedy"})
    >>> df.shape[0], sorted(df["policy"].unique())
    (4, ['LAS', 'greedy'])

    ```
    """
    rows = []
    for label, pol in policies.items():
        for inst in instances:
            res = simulate(inst, scheduler=pol, seed=seed)
            rows.append({"policy": label, "instance": inst.name, "instance_seed": inst.seed,
                         **res.custom["contention"]})
    return pd.DataFrame(rows)
