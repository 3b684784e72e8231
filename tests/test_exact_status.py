"""Issue 28: what an exact solve reports. A deterministic limit is the only limit when given; a result whose objective
meets its proven bound is optimal whatever stopped the search; Ctrl-C or SIGTERM stops CP-SAT and labels the result
"interrupted" (the CLI exits 130 or 143)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.cli import ctrl_c_raises, foreground

import optsched
from optsched.exact import _cpsat
from optsched.result import Result, SolveStatus

ROOT = Path(__file__).resolve().parent.parent


def test_a_deterministic_limit_is_the_only_limit():
    from ortools.sat.python import cp_model

    default = cp_model.CpSolver().parameters.max_time_in_seconds
    solver = _cpsat.new_solver(_cpsat.Params(time_limit=60, deterministic_limit=30))
    assert solver.parameters.max_deterministic_time == 30
    assert solver.parameters.max_time_in_seconds == default  # no wall clock: results do not depend on the load
    assert not solver.parameters.catch_sigint_signal  # optsched stops the search itself on a signal


@pytest.mark.parametrize("status", [SolveStatus.TIME_LIMIT, SolveStatus.INTERRUPTED, SolveStatus.FEASIBLE])
def test_a_result_meeting_its_bound_is_optimal(status):
    assert Result(279, status, 60.0, None, "exact", lower_bound=279).status == SolveStatus.OPTIMAL
    assert Result(104.6, status, 1.0, None, "exact", lower_bound=104.6 - 1e-12).status == SolveStatus.OPTIMAL
    assert Result(280, status, 60.0, None, "exact", lower_bound=279).status == status
    assert Result(280, status, 60.0, None, "exact").status == status


def test_the_tutorial_instance_is_optimal_under_a_deterministic_limit():
    inst = optsched.generate("rar", jobs=4, servers=2, seed=0)  # the docs' instance that once said "time limit"
    res = optsched.solve(inst, "exact", deterministic_limit=30, num_workers=1)
    assert res.status == SolveStatus.OPTIMAL and res.objective == res.lower_bound
    assert res.info["limit"] == "deterministic" and res.info["time_limit_s"] is None


def _threads(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_an_exact_solve_and_labels_it_interrupted(tmp_path, sig, code):
    inst, out = tmp_path / "big.json", tmp_path / "out.json"
    optsched.save(optsched.generate("rar", jobs=14, servers=3, seed=1), inst)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    p = subprocess.Popen([sys.executable, "-m", "optsched", "solve", str(inst), "-a", "exact", "--deterministic-limit",
                          "10000", "-o", str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=foreground)
    try:
        # wait until CP-SAT's workers run (the solving thread and its two workers beside the main thread)
        deadline = time.monotonic() + 120
        while _threads(p.pid) < 4 and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=120)  # without the stop, the limit would take many minutes
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == code, stderr
    assert "Traceback" not in stderr and "terminate called" not in stderr
    if out.exists():  # a schedule is written only when labelled so
        doc = json.loads(out.read_text())
        assert doc["status"] == "interrupted", doc["status"]
        assert "status=interrupted" in stdout


def test_solve_many_passes_the_deterministic_limit_to_the_cpsat_models():
    from optsched.experiments import SerialExecutor, solve_many

    insts = {"a": optsched.generate("rar", jobs=4, servers=2, seed=3),
             "d": optsched.generate("deadline", lam=0.5, window_h=2, seed=1),
             "t": optsched.generate("total-jct", jobs=5, seed=0), "p": optsched.generate("placement", seed=0)}
    runs = solve_many(insts, ["exact", "deadline-cpsat", "total-jct-bnb", "exact-time"], deterministic_limit=5,
                      threads=1,
                      executor=SerialExecutor(), keep_results=True, progress=False)
    for res in runs["result"]:
        assert res.info["limit"] == "deterministic", res.info  # dropped, the 60-s wall-clock default applied
        assert res.info["time_limit_s"] is None


def test_a_signal_before_the_search_has_started_still_stops_it():
    # a stop sent while CP-SAT is still setting up finds no search to stop; the waiting thread sends it again until
    # the solve returns (the race lost a Ctrl-C on a loaded machine: the solve ran to its limit)
    import _thread
    import threading

    from optsched.exact._cpsat import _run_stoppable

    class LateSolver:
        def __init__(self):
            self.started, self.stopped = threading.Event(), threading.Event()

        def solve(self, model, callback):
            time.sleep(0.3)  # setting up: a stop now is lost
            self.started.set()
            return "stopped" if self.stopped.wait(5) else "ran to its limit"

        def stop_search(self):
            if self.started.is_set():
                self.stopped.set()

    with ctrl_c_raises():
        threading.Timer(0.05, _thread.interrupt_main).start()
        assert _run_stoppable(LateSolver(), None, None) == ("stopped", "SIGINT")
