"""Issue 15's classes that need a real process or a real stream: SIGTERM during a write, a closed output pipe,
the heartbeat of a long exact solve, progress written to a log, and '-o -'."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap

import optsched
from cli import exit_code
from optsched.io import progress


def _env() -> dict[str, str]:
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    return {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}


def test_sigterm_during_a_write_leaves_no_temporary_file(tmp_path):
    """The CLI's SIGTERM handler unwinds like Ctrl-C: the half-written temporary file beside the target goes."""
    code = textwrap.dedent(f"""
        import os, signal, sys
        from optsched.cli import _terminate
        from optsched.io import atomic_open
        signal.signal(signal.SIGTERM, _terminate)
        with atomic_open({str(tmp_path / 'big.json')!r}) as fh:
            fh.write("x" * 1_000_000)
            os.kill(os.getpid(), signal.SIGTERM)
            fh.write("never")
    """)
    p = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=60)
    assert p.returncode == 128 + signal.SIGTERM, p.stderr
    assert os.listdir(tmp_path) == []


def test_a_closed_output_pipe_ends_quietly(tmp_path):
    cmd = f"{sys.executable} -m optsched list | head -n 1"
    p = subprocess.run(cmd, shell=True, env=_env(), capture_output=True, text=True, timeout=120)
    assert p.stdout.strip() == "[problems]" and "Traceback" not in p.stderr and "Error" not in p.stderr


def test_solve_to_standard_output_and_the_limit_it_used(tmp_path, capsys):
    inst = tmp_path / "i.json"
    optsched.save(optsched.generate("rar", jobs=4, servers=2, seed=2), inst)
    assert exit_code(["solve", str(inst), "-a", "exact", "--deterministic-limit", "5", "--progress", "-o", "-"]) == 0
    cap = capsys.readouterr()
    sched = json.loads(cap.out)  # standard output holds the schedule file alone
    assert sched["format"] == "optsched/schedule@1" and len(sched["jobs"]) == 4
    assert "algorithm=exact status=optimal" in cap.err
    assert "limit=" not in cap.err  # issue 28: which limit applied is said only when a limit stopped the run


def test_the_heartbeat_of_an_exact_solve(tmp_path, capsys):
    inst = tmp_path / "t.json"
    optsched.save(optsched.generate("total-jct", jobs=4, seed=3), inst)
    assert exit_code(["solve", str(inst), "--progress", "--time-limit", "20"]) == 0   # the branch and bound
    err = capsys.readouterr().err.splitlines()
    assert any(line.startswith("branch and bound: done in") and "best" in line for line in err), err
    assert exit_code(["solve", str(inst), "-a", "total-jct-cpsat", "--progress", "--time-limit", "20"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert any(line.startswith("cp-sat: done in") and "best" in line for line in err), err


def test_progress_in_a_log_is_plain_lines_ending_at_100():
    out = io.StringIO()
    bar = progress(8, "simulate", "job", out)
    for _ in range(8):
        bar.update(1)
    bar.close()
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue() and lines[-1] == "simulate: 100% (8/8 job)"
    assert [ln.split()[1] for ln in lines] == ["25%", "50%", "75%", "100%"]


def test_a_simulation_stopped_at_the_tracked_window_shows_100_percent(capsys):
    from optsched.sim import Workload, WorkloadJob, simulate

    jobs = tuple(WorkloadJob(f"j{i}", float(i), 1, 10, 1.0) for i in range(40))
    wl = Workload(jobs).track_window(0, 8)
    simulate(wl, servers=1, gpus_per_server=1, stop_when_tracked_done=True, progress=True, mode="event")
    err = capsys.readouterr().err.splitlines()
    assert err[-1].endswith("100% (8/8 job)"), err
