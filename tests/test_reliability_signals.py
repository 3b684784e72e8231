"""Issue 28, signals to every exact solver: ``optsched place`` maps an interrupted exact model to exit 130 (SIGINT) or
143 (SIGTERM) as ``solve`` does; a CBC or HiGHS run is stopped (its process ends with ours: no orphan) and reported
interrupted; the total-JCT branch and bound stops with its best schedule, labelled interrupted, and takes a
deterministic limit. Each signal is sent a second after the solver visibly runs (its progress line on stderr, CBC's
process); only the behaviour is asserted (exit code, status, file written, no process left), never a duration."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import pytest
from tests.cli import foreground

import optsched
from optsched.exact._cpsat import meets
from optsched.exact._stop import run_stoppable
from optsched.generators.total_jct import random_total_jct_instance
from optsched.result import SolveStatus

ROOT = Path(__file__).resolve().parent.parent
FREE = ",".join(f"s{i}=3" for i in range(16))  # 48 GPUs on 16 servers: a partition no solver proves quickly


def _job(tmp_path: Path) -> str:
    """A 12-stage job of 4 replicas each (48 GPUs): exact-cut runs for minutes with CP-SAT and with CBC."""
    stages = [{"replicas": 4, "forward_ms": 1.0 + i % 3, "backward_ms": 2.0 + i % 5, "d_out_mb": 3.0 + i % 4,
               "params_mb": 10.0 + i} for i in range(12)]
    del stages[-1]["d_out_mb"]
    p = tmp_path / "job.json"
    p.write_text(json.dumps({"format": "optsched/pipeline-job@1", "id": "big", "allreduce": "ring", "stages": stages}))
    return str(p)


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return out


def _alive(pid: int, name: str) -> bool:
    """Whether process ``pid`` still runs a program whose command line holds ``name`` (not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                return False
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return name.encode() in f.read()
    except OSError:
        return False


def _interrupt(argv: list[str], sig: int, line: str, started: Callable[[int], bool] = lambda pid: True
               ) -> tuple[subprocess.Popen, str, str]:
    """Run ``optsched ARGV``, wait (generously: the machine may be loaded) for a line on stderr starting with ``line``
    (the solver's progress line as it starts) and for ``started(pid)``, then a second, send ``sig`` and wait for the
    exit."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    p = subprocess.Popen([sys.executable, "-m", "optsched", *argv], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, preexec_fn=foreground)
    err: list[str] = []
    seen = threading.Event()

    def read() -> None:
        assert p.stderr is not None
        for ln in p.stderr:
            err.append(ln)
            if ln.startswith(line):
                seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 300
        while not (seen.is_set() and started(p.pid)) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen.is_set() and p.poll() is None, f"the solve did not start or ended early: {''.join(err)}"
        time.sleep(1.0)
        p.send_signal(sig)
        p.wait(timeout=180)  # without the stop, the limits below would take many minutes
        out = p.stdout.read() if p.stdout is not None else ""
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    reader.join(timeout=60)
    return p, out, "".join(err)


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_place_maps_an_interrupted_exact_model_to_130_or_143(tmp_path, sig, code):
    argv = ["place", _job(tmp_path), "--free", FREE, "-a", "exact-cut", "--deterministic-limit", "100000",
            "--progress"]
    p, out, err = _interrupt(argv, sig, "cp-sat: solving")
    assert p.returncode == code, err
    assert "Traceback" not in err and "terminate called" not in err
    assert "status=interrupted" in out  # the best placement found, never passed off as a finished run
    assert "status=time limit" not in out


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_cbc_and_leaves_no_process(tmp_path, sig, code):
    argv = ["place", _job(tmp_path), "--free", FREE, "-a", "exact-cut", "--solver", "cbc", "--time-limit", "3000",
            "--progress"]
    seen: list[int] = []

    def cbc_runs(pid: int) -> bool:
        seen[:] = [c for c in _children(pid) if _alive(c, "cbc")]
        return bool(seen)

    p, out, err = _interrupt(argv, sig, "cbc: solving", cbc_runs)
    assert seen, "CBC never started"
    assert p.returncode == code, err
    assert "Traceback" not in err
    assert "status=interrupted" in out
    assert not [c for c in seen if _alive(c, "cbc")], "an orphaned cbc process is still running"


def test_a_signal_stops_the_total_jct_branch_and_bound_with_its_best_schedule(tmp_path):
    inst, sched = tmp_path / "tjct.json", tmp_path / "out.json"
    optsched.save(random_total_jct_instance(16, 0), inst)
    argv = ["solve", str(inst), "-a", "total-jct-bnb", "--deterministic-limit", "100000", "-o", str(sched),
            "--progress"]
    p, out, err = _interrupt(argv, signal.SIGINT, "branch and bound: solving")
    assert p.returncode == 130, err
    assert "Traceback" not in err
    assert json.loads(sched.read_text())["status"] == "interrupted"  # the best schedule is kept and labelled
    assert "status=interrupted" in out


def test_the_branch_and_bound_takes_a_deterministic_limit_as_its_only_limit():
    inst = random_total_jct_instance(16, 0)
    runs = [optsched.solve(inst, "total-jct-bnb", deterministic_limit=0.3, num_workers=1) for _ in range(2)]
    for r in runs:
        assert r.info["limit"] == "deterministic" and r.info["time_limit_s"] is None, r.info
        assert r.status == SolveStatus.TIME_LIMIT  # too large to prove in 3,000 nodes
    # the search alone under a node budget does the same work on any machine, at any load
    assert runs[0].info["nodes"] == runs[1].info["nodes"] and runs[0].objective == runs[1].objective


def test_run_stoppable_returns_the_work_and_no_signal():
    assert run_stoppable(lambda: 42, stop=lambda: None) == (42, None)
    with pytest.raises(ZeroDivisionError):
        run_stoppable(lambda: 1 // 0, stop=lambda: None)


def _interrupted_first(monkeypatch, module) -> list[int]:
    """Make ``module``'s first CP-SAT call return as if Ctrl-C had stopped it (the real run, relabelled)."""
    import dataclasses

    from optsched.exact import _cpsat

    calls: list[int] = []
    real = _cpsat.solve

    def first_interrupted(*a, **kw):
        run = real(*a, **kw)
        calls.append(1)
        if len(calls) == 1:
            return dataclasses.replace(run, status=SolveStatus.INTERRUPTED, interrupted="SIGINT")
        return run

    monkeypatch.setattr(module._cpsat, "solve", first_interrupted)
    return calls


def test_exact_interval_makes_no_further_cpsat_call_after_a_signal(monkeypatch):
    from optsched.exact import rar_interval

    inst = optsched.generate("rar", jobs=8, servers=2, seed=3)
    calls = _interrupted_first(monkeypatch, rar_interval)
    res = optsched.solve(inst, "exact-interval", deterministic_limit=1.0, num_workers=1)
    # without the signal this instance takes 5 CP-SAT calls (probes, R, R1)
    assert len(calls) == 1, "a signal was ignored: exact-interval went on to its next model"
    assert res.info["interrupted"] == "SIGINT"
    assert res.status in (SolveStatus.INTERRUPTED, SolveStatus.OPTIMAL)  # optimal only when the bound meets it
    assert res.schedule is not None


def test_the_placement_result_keeps_the_signal_for_the_cli(monkeypatch):
    """`optsched solve placement.json -a exact-cut` exits 143 on SIGTERM: the signal's name reaches the Result."""
    from optsched import placement
    from optsched.generators.placement import random_placement_instance

    inst = random_placement_instance(seed=1)
    real = placement.place

    def stopped(*a, **kw):
        import dataclasses

        p = real(*a, **kw)
        return dataclasses.replace(p, status=SolveStatus.INTERRUPTED, info={**p.info, "interrupted": "SIGTERM"})

    monkeypatch.setattr(placement, "place", stopped)
    for alg in ("exact-time", "exact-cut"):
        res = optsched.solve(inst, alg)
        assert res.info["interrupted"] == "SIGTERM", (alg, res.info)
        # labelled interrupted, unless its objective meets its proven bound (then it is optimal, whatever stopped it)
        assert res.status == SolveStatus.INTERRUPTED or meets(res.objective, res.lower_bound), (alg, res)


def test_the_deadline_bound_takes_a_deterministic_limit():
    from optsched.exact.deadline import deadline_upper_bound

    wl = optsched.generate("deadline", lam=4, window_h=4, seed=1)
    b = deadline_upper_bound(wl, deterministic_limit=5)
    assert b.info["limit"] == "deterministic" and b.info["time_limit_s"] is None
