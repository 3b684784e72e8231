"""The CP-SAT back-end shared by every CP-SAT model in optsched, as [`optsched.exact._pulp`][] is for PuLP.

The solver's parameters are written in one place ([`Params`][optsched.exact._cpsat.Params]), CP-SAT's status is mapped
to
[`SolveStatus`][optsched.result.SolveStatus] in one place ([`status_of`][optsched.exact._cpsat.status_of]), and
[`solve`][optsched.exact._cpsat.solve] returns what every
model reads back ([`Run`][optsched.exact._cpsat.Run]: status, objective, proven bound, wall time, the values of a
solution).

Two limits, one at a time:

* ``time_limit`` (seconds of wall clock): what a user usually wants, but where the search stops depends on the
  machine and its load, so two runs with the same seed may return different schedules;
* ``deterministic_limit`` (CP-SAT's ``max_deterministic_time``): the search stops after a fixed amount of
  counted work, so a run is reproduced exactly by the same limit, seed and model. The unit is meant to be
  near a second but is not one: on the 40-job total-JCT model one unit took about 13 s of wall clock.
  It replaces the wall-clock limit (either one stopping the run first would make the run depend on the
  machine again), and with several workers it turns on CP-SAT's ``interleave_search``, whose schedule of the
  workers does not depend on the threads' timing.

``Run.info()`` says which limit was used; every exact model copies it into its result's ``info``.

```pycon
>>> from ortools.sat.python import cp_model
>>> m = cp_model.CpModel()
>>> x, y = m.new_int_var(0, 3, "x"), m.new_int_var(0, 3, "y")
>>> _ = m.add(x + y <= 4)
>>> m.maximize(x + 2 * y)
>>> run = solve(m, Params(time_limit=10, seed=0))
>>> run.status.value, run.objective, run.bound, run.value(y)
('optimal', 7.0, 7.0, 3)
>>> run.info()["limit"], run.info()["cpsat_status"]
('time', 'OPTIMAL')

```
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, TextIO

from ..errors import InstanceError, SolverError
from ..limits import MAX_SEED
from ..result import SolveStatus
from ._stop import run_stoppable

if TYPE_CHECKING:  # pragma: no cover - OR-Tools takes ~0.5 s to import: only the functions that solve load it
    from ortools.sat.python import cp_model

__all__ = ["Params", "Run", "beat", "heartbeat", "meets", "new_solver", "solve", "started", "status_of"]

# (seconds between lines, stream) while a heartbeat() block is active; None: quiet (the library default)
_HEARTBEAT: contextvars.ContextVar[tuple[float, TextIO] | None] = contextvars.ContextVar("heartbeat", default=None)


@contextlib.contextmanager
def heartbeat(every_s: float | None, stream: TextIO) -> Iterator[None]:
    """While the block runs, every CP-SAT solve prints a line to ``stream`` when it starts, one every ``every_s``
    seconds (elapsed time, best objective, proven bound) and one when it ends, so a long exact solve is never silent.
    ``every_s=None`` leaves solves quiet (the CLI turns it on for terminals and ``--progress``).

    ```pycon
    >>> import io
    >>> from ortools.sat.python import cp_model
    >>> m = cp_model.CpModel(); x = m.new_int_var(0, 5, "x"); m.minimize(x)
    >>> out = io.StringIO()
    >>> with heartbeat(30.0, out):
    ...     _ = solve(m, Params(time_limit=5))
    >>> [line.split(" (")[0].split(" in ")[0] for line in out.getvalue().splitlines()]
    ['cp-sat: solving', 'cp-sat: done']

    ```
    """
    token = _HEARTBEAT.set(None if every_s is None else (float(every_s), stream))
    try:
        yield
    finally:
        _HEARTBEAT.reset(token)


def beat() -> tuple[float, TextIO] | None:
    """(seconds between lines, stream) when a [`heartbeat`][optsched.exact._cpsat.heartbeat] block is active, else
    ``None``: for solvers
    other than CP-SAT that report the same way ([`_beat`][optsched.exact._cpsat._beat]'s ``who``)."""
    return _HEARTBEAT.get()


def started(stream: TextIO, who: str = "cp-sat") -> None:
    """The heartbeat's first line, printed as a solve starts: the search runs and a signal now stops it."""
    print(f"{who}: solving (Ctrl-C stops it and keeps the best solution found)", file=stream, flush=True)


def _beat(stream: TextIO, t0: float, best: list[float | None], final: str = "", who: str = "cp-sat") -> None:
    obj, bound = best
    figures = (f", best {obj:g}" if obj is not None else ", no solution yet") + \
              (f", bound {bound:g}" if bound is not None else "")
    head = f"done in {time.perf_counter() - t0:.1f} s ({final})" if final else \
        f"still solving after {time.perf_counter() - t0:.0f} s"
    print(f"{who}: {head}{figures}", file=stream, flush=True)



@functools.cache
def _status_table() -> dict[cp_model.CpSolverStatus, SolveStatus]:
    """What each CP-SAT status proves (MODEL_INVALID is an error, not an outcome: see
    [`status_of`][optsched.exact._cpsat.status_of])."""
    from ortools.sat.python import cp_model

    return {
        cp_model.OPTIMAL: SolveStatus.OPTIMAL,
        cp_model.FEASIBLE: SolveStatus.TIME_LIMIT,  # a solution, stopped by a limit before the proof
        cp_model.INFEASIBLE: SolveStatus.INFEASIBLE,
        cp_model.UNKNOWN: SolveStatus.UNKNOWN,  # stopped by a limit before any solution or proof
    }


def _positive(value: float | None, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InstanceError(f"must be a number, got {value!r}", field=name)
    if not math.isfinite(value) or value <= 0:
        raise InstanceError(f"must be positive and finite, got {value!r}", field=name)
    return float(value)


@dataclass(frozen=True)
class Params:
    """CP-SAT's parameters as optsched sets them, checked when built (an
    [`InstanceError`][optsched.errors.InstanceError] names the
    field).

    ``time_limit``: wall-clock seconds; ``deterministic_limit``: CP-SAT deterministic time (replaces the
    wall-clock limit, see the module docstring); ``num_workers``: search threads; ``seed``: CP-SAT's
    ``random_seed`` (``None`` leaves CP-SAT's default); ``log``: print CP-SAT's search log.

    ```pycon
    >>> Params(time_limit=5, deterministic_limit=2.0).limit
    'deterministic'
    >>> Params(num_workers=0)
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: num_workers: must be a positive integer, got 0

    ```
    """

    time_limit: float | None = None
    deterministic_limit: float | None = None
    num_workers: int = 1
    seed: int | None = None
    log: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "time_limit", _positive(self.time_limit, "time_limit"))
        object.__setattr__(self, "deterministic_limit", _positive(self.deterministic_limit, "deterministic_limit"))
        if isinstance(self.num_workers, bool) or not isinstance(self.num_workers, int) or self.num_workers < 1:
            raise InstanceError(f"must be a positive integer, got {self.num_workers!r}", field="num_workers")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)
                                      or not 0 <= self.seed <= MAX_SEED):
            raise InstanceError(f"must be an integer in 0..{MAX_SEED}, got {self.seed!r}", field="seed")

    @property
    def limit(self) -> str:
        """The limit that applies: ``"deterministic"``, ``"time"`` or ``"none"``."""
        if self.deterministic_limit is not None:
            return "deterministic"
        return "time" if self.time_limit is not None else "none"

    @property
    def interleave(self) -> bool:
        """Whether CP-SAT's deterministic interleaved search is on (a deterministic limit with >1 worker)."""
        return self.deterministic_limit is not None and self.num_workers > 1

    def apply(self, solver: cp_model.CpSolver) -> cp_model.CpSolver:
        """Write these parameters into ``solver.parameters``; return ``solver``."""
        prm = solver.parameters
        prm.num_workers = self.num_workers
        # CP-SAT's own SIGINT handler calls an empty std::function once the solve is over (the process aborts with
        # "terminate ... bad_function_call"); optsched stops the search itself (solve's _run_stoppable)
        prm.catch_sigint_signal = False
        if self.deterministic_limit is not None:
            prm.max_deterministic_time = self.deterministic_limit
            if self.interleave:
                prm.interleave_search = True
        elif self.time_limit is not None:
            prm.max_time_in_seconds = self.time_limit
        if self.seed is not None:
            prm.random_seed = self.seed
        if self.log:
            prm.log_search_progress = True
        return solver

    def info(self) -> dict[str, Any]:
        """The parameters as a result's ``info`` records them."""
        out: dict[str, Any] = {"limit": self.limit,
                               "time_limit_s": self.time_limit if self.limit == "time" else None,
                               "deterministic_limit": self.deterministic_limit,
                               "num_workers": self.num_workers, "random_seed": self.seed}
        if self.interleave:
            out["interleave_search"] = True
        return out


def new_solver(params: Params) -> cp_model.CpSolver:
    """A fresh ``CpSolver`` with ``params`` written into it."""
    from ortools.sat.python import cp_model

    return params.apply(cp_model.CpSolver())


def status_of(code: cp_model.CpSolverStatus, model: cp_model.CpModel | None = None) -> SolveStatus:
    """CP-SAT's status as a [`SolveStatus`][optsched.result.SolveStatus]: OPTIMAL -> optimal, FEASIBLE -> time limit,
    INFEASIBLE ->
    infeasible, UNKNOWN -> unknown. MODEL_INVALID raises [`SolverError`][optsched.errors.SolverError] with CP-SAT's
    validation
    message for ``model`` (a model optsched builds is never invalid: that is a bug, not an outcome).

    ```pycon
    >>> from ortools.sat.python import cp_model
    >>> status_of(cp_model.FEASIBLE).value
    'time limit'

    ```
    """
    from ortools.sat.python import cp_model

    if code == cp_model.MODEL_INVALID:
        why = model.validate() if model is not None else ""
        raise SolverError(f"CP-SAT rejected the model as invalid: {why or 'no validation message'}")
    try:
        return _status_table()[code]
    except KeyError:
        raise SolverError(f"unexpected CP-SAT status {code!r}") from None


@dataclass(frozen=True)
class Run:
    """One CP-SAT solve: the mapped ``status``, CP-SAT's own status name, the ``objective`` of the best
    solution (``None`` without one), the proven ``bound`` (lower when minimising, upper when maximising;
    ``None`` when the model is infeasible or CP-SAT proved none) and the solver's wall time."""

    status: SolveStatus
    cpsat_status: str
    objective: float | None
    bound: float | None
    wall_s: float
    params: Params
    solver: cp_model.CpSolver
    dropped_hint: bool = False  # the hint was dropped after OR-Tools crashed on it (google/or-tools#5288)
    interrupted: str | None = None  # the signal that stopped the search ("SIGINT", "SIGTERM"), if one did

    @property
    def found(self) -> bool:
        """True when CP-SAT returned a solution (optimal or stopped by a limit)."""
        return self.objective is not None

    def value(self, expr: cp_model.LinearExprT) -> int:
        """The value of a variable or linear expression in the solution found."""
        if not self.found:
            raise SolverError(f"CP-SAT found no solution (status {self.cpsat_status}): no value to read")
        return int(self.solver.value(expr))

    def info(self) -> dict[str, Any]:
        """What a result's ``info`` records of this run: its parameters, status, times and branches."""
        out = {**self.params.info(), "cpsat_status": self.cpsat_status, "cpsat_wall_s": self.wall_s,
               "cpsat_deterministic_time": self.solver.deterministic_time, "branches": self.solver.num_branches}
        if self.interrupted is not None:
            out["interrupted"] = self.interrupted  # optsched.solve labels the result "interrupted" from this
        if self.dropped_hint:
            out["hint_dropped"] = "OR-Tools crashed on the hint (google/or-tools#5288); solved without it"
        return out


def _run_stoppable(sol: cp_model.CpSolver, model: cp_model.CpModel, callback: Any) -> tuple[Any, str | None]:
    """``sol.solve(model, callback)`` through [`run_stoppable`][optsched.exact._stop.run_stoppable]: Ctrl-C or the
    CLI's SIGTERM calls ``stop_search`` within a fraction of a second. Returns CP-SAT's status code and the signal's
    name (``"SIGINT"``, ``"SIGTERM"``) or ``None``."""
    # stop_search again after the grace period, every 50 ms: a stop that came before CP-SAT had set up its search
    # (a signal in the first moments, or under load) finds nothing to stop and is lost
    return run_stoppable(lambda: sol.solve(model, callback), sol.stop_search, force=sol.stop_search, name="cp-sat")


def solve(model: cp_model.CpModel, params: Params, *, solver: cp_model.CpSolver | None = None,
          on_solution: Callable[[Any], None] | None = None, scale: float = 1.0) -> Run:
    """Solve ``model`` with ``params``; ``solver`` (optional) is a ``CpSolver`` to use, e.g. one with a
    ``log_callback`` attached, or one another thread may stop (the parameters are written into it);
    ``on_solution`` (optional) is called with CP-SAT's solution callback (``objective_value``, ``value(...)``)
    at every improving solution. ``scale``: the model's objective is the problem's times ``scale`` (an integer
    model of a real objective); the heartbeat prints the problem's figures (the run keeps the model's).

    Ctrl-C or SIGTERM (under the CLI) stops the search within a fraction of a second: the run then has status
    ``interrupted`` with the best solution found. A run stopped by its limit whose solution meets its proven
    bound is ``optimal`` (what stopped it does not matter)."""
    sol = params.apply(solver) if solver is not None else new_solver(params)
    dropped_hint = False
    beat = _HEARTBEAT.get()
    stop = threading.Event()
    best: list[float | None] = [None, None]
    t0 = time.perf_counter()
    callback = _improvements(best if beat is not None else None, on_solution) \
        if beat is not None or on_solution is not None else None
    if beat is not None:
        started(beat[1])
        threading.Thread(target=_heartbeat_loop, args=(stop, beat, t0, best, scale), daemon=True).start()
    try:
        try:
            code, signal_name = _run_stoppable(sol, model, callback)
        except IndexError as exc:
            # OR-Tools 9.15's presolve can crash on a valid, feasible solution hint ("absl::btree_map::at" in
            # SolutionCrush, google/or-tools#5288): solve again without the hint, which only helps speed.
            if "btree_map" not in str(exc) or not model.proto.has_solution_hint():
                raise
            model.clear_hints()
            dropped_hint = True
            code, signal_name = _run_stoppable(sol, model, callback)
    finally:
        stop.set()
    status = status_of(code, model)
    objective = sol.objective_value if status in (SolveStatus.OPTIMAL, SolveStatus.TIME_LIMIT) else None
    bound = None
    if status != SolveStatus.INFEASIBLE and model.has_objective():
        b = sol.best_objective_bound
        bound = float(b) if math.isfinite(b) else None
    if status == SolveStatus.TIME_LIMIT and objective is not None and bound is not None and \
            meets(objective, bound):
        status = SolveStatus.OPTIMAL  # the bound proves it, whatever stopped the search
    elif status in (SolveStatus.TIME_LIMIT, SolveStatus.UNKNOWN) and signal_name is not None:
        status = SolveStatus.INTERRUPTED
    if beat is not None:
        _beat(beat[1], t0, _scaled([objective, bound], scale), final=status.value)
    return Run(status, code.name, objective, bound, sol.wall_time, params, sol, dropped_hint,
               signal_name if status == SolveStatus.INTERRUPTED else None)


def meets(objective: float, bound: float) -> bool:
    """Whether ``objective`` equals the proven ``bound`` up to rounding (then it is optimal).

    ```pycon
    >>> meets(279, 279.0), meets(104.6, 104.6000000001), meets(280, 279)
    (True, True, False)

    ```
    """
    return abs(objective - bound) <= 1e-9 * max(1.0, abs(objective), abs(bound))


def _heartbeat_loop(stop: threading.Event, beat: tuple[float, TextIO], t0: float, best: list[float | None],
                    scale: float = 1.0) -> None:
    every, stream = beat
    while not stop.wait(every):
        _beat(stream, t0, _scaled(best, scale))


def _scaled(figures: list[float | None], scale: float) -> list[float | None]:
    return [None if v is None else v / scale for v in figures]


def _improvements_class() -> type:
    from ortools.sat.python import cp_model

    class Improvements(cp_model.CpSolverSolutionCallback):
        """At each improving solution: records the best objective and bound (for the heartbeat, when ``best``
        is given) and calls ``also`` with itself (a caller's ``on_solution``)."""

        def __init__(self, best: list[float | None] | None, also: Callable[[Any], None] | None):
            super().__init__()
            self.best, self.also = best, also

        def on_solution_callback(self) -> None:
            if self.best is not None:
                self.best[0], self.best[1] = self.objective_value, self.best_objective_bound
            if self.also is not None:
                self.also(self)

    return Improvements


def _improvements(best: list[float | None] | None, also: Callable[[Any], None] | None = None) -> Any:
    """The solution callback of [`solve`][optsched.exact._cpsat.solve] (its OR-Tools class is built on first use)."""
    return _improvements_class_cached()(best, also)


_improvements_class_cached = functools.cache(_improvements_class)
