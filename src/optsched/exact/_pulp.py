"""PuLP solver back-ends shared by every MILP in optsched: CBC and HiGHS, both run out of process.

HiGHS comes from the ``highsbox`` wheel (a HiGHS binary) through PuLP's ``HiGHS_CMD``. The in-process
``highspy`` bindings are deliberately not used: they and OR-Tools' bundled HiGHS export clashing symbols, so
whichever loads second fails to import (seen with ortools 9.15 and highspy 1.15).

Ctrl-C or SIGTERM (under the CLI) during a solve stops the solver's process within about a second, through the
mechanism CP-SAT uses ([`optsched.exact._stop`][]): the solver is sent SIGINT (CBC then stops and writes its best
solution), and killed if it has not ended 0.8 s later; [`run`][optsched.exact._pulp.run] then reports
``interrupted``, with the best solution when the solver wrote one. PuLP's files live in a temporary folder that
is removed even then, so no process and no file is left behind. Finding the solver's process needs Linux's
``/proc``; elsewhere the solve runs to its own limit.

```pycon
>>> import pulp
>>> p = pulp.LpProblem("t", pulp.LpMaximize); x = var(p, "x", 0, 3, cat="Integer")
>>> p += x
>>> solve(p, "highs"), solve(p, "cbc"), x.value()
('optimal', 'optimal', 3.0)
>>> run(p, "cbc")
Run(status='optimal', found=True, interrupted=None)

```
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
import warnings
from dataclasses import dataclass
from typing import Any

import pulp

from ..errors import SolverError
from . import _cpsat
from ._stop import run_stoppable

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


@dataclass(frozen=True)
class Run:
    """One PuLP solve: ``status`` (``"optimal"``, ``"infeasible"``, ``"unbounded"``, ``"time limit"``: a
    feasible solution without proof, ``"unknown"``, or ``"interrupted"``: stopped by Ctrl-C or SIGTERM),
    ``found`` (the problem's variables hold a feasible solution) and the signal that stopped it, if one did."""

    status: str
    found: bool
    interrupted: str | None = None

    def info(self) -> dict[str, Any]:
        """What a result's ``info`` records of this run (the signal, when one stopped it)."""
        return {} if self.interrupted is None else {"interrupted": self.interrupted}


def run(prob: pulp.LpProblem, name: str = "cbc", time_limit: float | None = None, **kw: Any) -> Run:
    """Solve ``prob`` in place with ``name`` (``"cbc"`` or ``"highs"``; ``kw`` as [`solver`][optsched.exact._pulp
    .solver]); Ctrl-C or SIGTERM stops the solver's process (module docstring)."""
    slv = solver(name, time_limit, **kw)
    child = _Child(slv.path)
    beat = _cpsat.beat()
    if beat is not None:  # the CLI's progress lines (optsched place --progress, or a terminal)
        _cpsat.started(beat[1], who=name)
    with tempfile.TemporaryDirectory(prefix="optsched-pulp-") as tmp, warnings.catch_warnings():
        # PuLP 3.x announces its 4.0 API on every solver object
        warnings.simplefilter("ignore", DeprecationWarning)
        slv.tmpDir = tmp  # PuLP's model, solution and log files: removed with the folder, even if the solver is killed

        def work() -> bool:
            child.tid = threading.get_native_id()
            try:
                prob.solve(slv)
            except pulp.PulpSolverError:
                if child.signalled:  # stopped or killed before it wrote a solution
                    return False
                raise
            return True

        solved, sig = run_stoppable(work, child.interrupt, force=child.kill, name=name)
    if not solved:
        return Run("interrupted", False, sig)
    status = pulp.LpStatus[prob.status]
    if status == "Optimal":
        # PuLP reports a time-limited CBC run with a solution as Optimal; sol_status tells them apart
        out = "time limit" if prob.sol_status == pulp.LpSolutionIntegerFeasible else "optimal"
    else:
        out = {"Infeasible": "infeasible", "Unbounded": "unbounded"}.get(status, "unknown")
    found = out in ("optimal", "time limit")
    if sig is not None and out in ("time limit", "unknown"):
        return Run("interrupted", found, sig)
    return Run(out, found, None)


def solve(prob: pulp.LpProblem, name: str = "cbc", time_limit: float | None = None, **kw: Any) -> str:
    """Solve ``prob`` in place; return ``"optimal"``, ``"infeasible"``, ``"unbounded"``, ``"time limit"``
    (a feasible solution without proof), ``"unknown"`` or ``"interrupted"`` ([`run`][optsched.exact._pulp.run]'s
    status)."""
    return run(prob, name, time_limit, **kw).status


class _Child:
    """The solver's process, started by PuLP in the thread ``tid``: found through Linux's
    ``/proc/<pid>/task/<tid>/children`` (or, without it, as a child of this process running ``path``)."""

    def __init__(self, path: str):
        self.path = os.path.realpath(path)
        self.tid: int | None = None
        self.signalled = False

    def pids(self) -> list[int]:
        if self.tid is not None:
            with contextlib.suppress(OSError, ValueError):
                with open(f"/proc/{os.getpid()}/task/{self.tid}/children") as f:
                    return [int(p) for p in f.read().split()]
        out = []
        with contextlib.suppress(OSError):
            for entry in os.listdir("/proc"):
                if not entry.isdigit():
                    continue
                with contextlib.suppress(OSError, ValueError, IndexError):
                    with open(f"/proc/{entry}/stat") as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                    if ppid == os.getpid() and os.path.realpath(f"/proc/{entry}/exe") == self.path:
                        out.append(int(entry))
        return out

    def _send(self, sig: int) -> None:
        self.signalled = True
        for pid in self.pids():
            with contextlib.suppress(OSError):
                os.kill(pid, sig)

    def interrupt(self) -> None:
        """Ask the solver to stop (CBC stops its search and writes the best solution it has)."""
        self._send(signal.SIGINT)

    def kill(self) -> None:
        """End the solver (it did not stop when asked); the run has no solution."""
        self._send(signal.SIGKILL)
