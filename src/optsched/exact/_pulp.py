"""PuLP solver back-ends shared by every MILP in optsched: CBC and HiGHS, both run out of process.

HiGHS comes from the ``highsbox`` wheel (a HiGHS binary) through PuLP's ``HiGHS_CMD``. The in-process
``highspy`` bindings are deliberately not used: they and OR-Tools' bundled HiGHS export clashing symbols, so
whichever loads second fails to import (seen with ortools 9.15 and highspy 1.15).

```pycon
>>> import pulp
>>> p = pulp.LpProblem("t", pulp.LpMaximize); x = var(p, "x", 0, 3, cat="Integer")
>>> p += x
>>> solve(p, "highs"), solve(p, "cbc"), x.value()
('optimal', 'optimal', 3.0)

```
"""

from __future__ import annotations

import os
import warnings

import pulp

from ..errors import SolverError

SOLVERS = ("cbc", "highs")


def solver(name: str, time_limit: float | None = None, msg: bool = False, threads: int | None = None,
           gap_rel: float | None = None):
    """A PuLP solver object for ``"cbc"`` or ``"highs"``; ``gap_rel=0.0`` asks for a proof of optimality
    (HiGHS stops at a 1e-4 relative gap by default)."""
    kw: dict = {"msg": msg}
    if gap_rel is not None:
        kw["gapRel"] = float(gap_rel)
    if time_limit is not None:
        kw["timeLimit"] = float(time_limit)
    if threads is not None:
        kw["threads"] = int(threads)
    if name == "cbc":
        return pulp.PULP_CBC_CMD(**kw)
    if name == "highs":
        try:
            import highsbox
        except ImportError as exc:  # pragma: no cover - it is a declared dependency
            raise SolverError("HiGHS needs the 'highsbox' package (pip install highsbox)") from exc
        # the binary is not linked with an rpath to its own libhighs.so; the child process inherits this
        lib = highsbox.highs_lib_dir()
        if lib not in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
            os.environ["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [lib, os.environ.get("LD_LIBRARY_PATH")]))
        kw.pop("threads", None)
        return pulp.HiGHS_CMD(path=highsbox.highs_bin_path(), **kw)
    raise SolverError(f"unknown MILP solver {name!r} (known: {', '.join(SOLVERS)})")


def var(prob: pulp.LpProblem, name: str, lo: float | None = None, hi: float | None = None,
        cat: str = "Continuous") -> pulp.LpVariable:
    """A variable created by (and attached to) ``prob``: PuLP 3.3 deprecates the free ``LpVariable(...)``."""
    if hasattr(prob, "add_variable"):
        return prob.add_variable(name, lo, hi, cat=cat)
    return pulp.LpVariable(name, lo, hi, cat=cat)  # pragma: no cover - PuLP < 3.3


def solve(prob: pulp.LpProblem, name: str = "cbc", time_limit: float | None = None, **kw) -> str:
    """Solve ``prob`` in place; return ``"optimal"``, ``"infeasible"``, ``"unbounded"``, ``"time limit"``
    (a feasible solution without proof) or ``"unknown"``."""
    with warnings.catch_warnings():  # PuLP 3.x announces its 4.0 API on every solver object
        warnings.simplefilter("ignore", DeprecationWarning)
        prob.solve(solver(name, time_limit, **kw))
    status = pulp.LpStatus[prob.status]
    if status == "Optimal":
        # PuLP reports a time-limited CBC run with a solution as Optimal; sol_status tells them apart
        return "time limit" if prob.sol_status == pulp.LpSolutionIntegerFeasible else "optimal"
    return {"Infeasible": "infeasible", "Unbounded": "unbounded"}.get(status, "unknown")
