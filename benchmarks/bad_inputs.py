"""The bad-input suite of the CLI (issue 15) run as a new user runs it: each case in a fresh process, against any
source tree, classified by outcome. Prints the count per outcome (and lists the cases that are not clean).

Run: ``.venv/bin/python benchmarks/bad_inputs.py [--src OTHER/src] [--timeout 60] [--only SUBSTRING]``. The cases
live in ``tests/bad_inputs.py``; ``tests/test_bad_inputs.py`` asserts the same expectations in process. Standard
output is read through a pipe, so ``-o /dev/stdout`` cases are the pipe cases; the signal cases send SIGINT or
SIGTERM to an exact solve (CP-SAT, CBC, HiGHS, the total-JCT branch and bound; ``solve`` and ``place``) once its
``--progress`` line says it is solving, and wait at most 5 s for it to end.

Outcomes: ``clean`` (the expected exit code, one line on stderr, no traceback, nothing left behind, every input as it
was), ``traceback``, ``hang`` (no exit within the timeout, or 5 s after the signal), ``accepted`` (exit 0 for a bad
input), ``wrong exit code``, ``destroyed`` (an input file, a link or an existing output was replaced),
``several lines``, ``file left behind``, ``process left behind`` (a solver process still running after a signal case
ended).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import bad_inputs  # noqa: E402
from optsched.data import find_data_root  # noqa: E402

DATA = find_data_root()


def classify(code: int | None, err: str, expected: int, left: set[str], destroyed: bool = False,
             lines_expected: bool = False) -> str:
    if code is None:
        return "hang"
    if "Traceback" in err:
        return "traceback"
    if destroyed:
        return "destroyed"
    if expected != 0 and code == 0:
        return "accepted"
    if code != expected:
        return "wrong exit code"
    if expected != 0 and not lines_expected and len([ln for ln in err.splitlines() if ln.strip()]) != 1:
        return "several lines"
    if expected != 0 and left:
        return "file left behind"
    return "clean"


def _as_a_foreground_job() -> None:
    """Ctrl-C's default in the child, as a shell gives a command it runs in the foreground (a shell's background
    job, such as this benchmark started with '&', has SIGINT ignored, and its children would inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _children(pid: int) -> set[int]:
    """The processes ``pid``'s threads started (Linux's /proc/PID/task/TID/children)."""
    out: set[int] = set()
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out |= {int(c) for c in f.read().split()}
    except OSError:
        pass
    return out


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def run_case(src: str, argv: list[str], expected: int, timeout: float, fixtures: Path,
             sig: str | None = None, delay: float = 0.0) -> tuple[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        paths = bad_inputs.make_fixtures(fixtures)
        inputs = bad_inputs.snapshot(paths)
        work.mkdir()
        out = str(work / "out")
        before = bad_inputs.files_under(work)
        env = {**os.environ, "PYTHONPATH": src}
        if DATA is not None:  # the shared data as this checkout finds it (the cases run in a temporary folder)
            env.setdefault("OPTSCHED_DATA", str(DATA))
        cmd = [sys.executable, "-m", "optsched", *bad_inputs.expand(argv, paths, out)]
        p = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL,  # bytes: a case may write a PNG to standard output
                             preexec_fn=_as_a_foreground_job)
        lines: list[bytes] = []
        solving = threading.Event()

        def read_stderr() -> None:  # stderr read as it comes: the signal cases wait for the "...: solving" line
            assert p.stderr is not None
            for ln in p.stderr:
                lines.append(ln)
                if b": solving (" in ln:
                    solving.set()

        def read_stdout() -> None:
            assert p.stdout is not None
            p.stdout.read()

        readers = [threading.Thread(target=f, daemon=True) for f in (read_stderr, read_stdout)]
        for r in readers:
            r.start()
        children: set[int] = set()
        try:
            if sig is not None:
                # the signal must reach the solve itself: wait for the solver's progress line (a loaded machine may
                # take long to import and build the model), then the case's delay
                deadline = time.monotonic() + 300
                while not solving.is_set() and p.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.05)
                time.sleep(delay)
                children = _children(p.pid)
                p.send_signal(getattr(signal, sig))
                timeout = 5.0
            p.wait(timeout=timeout)
            code: int | None = p.returncode
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            code = None
        for r in readers:
            r.join(timeout=30)
        err = b"".join(lines).decode("utf-8", errors="replace")
        destroyed = bad_inputs.snapshot(paths) != inputs
        left = bad_inputs.files_under(work) - before
        if sig is not None:  # a summary and the schedule written are expected: the exit code decides
            left = set()
        orphans = [c for c in children if _running(c)]
        for c in orphans:  # the case's verdict is taken; the machine is not left with its solver running
            with contextlib.suppress(OSError):
                os.kill(c, signal.SIGKILL)
        last = (err.strip().splitlines() or [""])[-1][:160]
        if orphans and code is not None and "Traceback" not in err:
            return "process left behind", last
        return classify(code, err, expected, left, destroyed, lines_expected=sig is not None), last


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default=str(ROOT / "src"), help="source tree to test (default: this checkout's)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per case (default 60)")
    ap.add_argument("--only", default="", help="run only the cases whose name contains this")
    ap.add_argument("--since", default="", help="run only the cases from this one on (in the suite's order)")
    args = ap.parse_args(argv)
    counts: collections.Counter[str] = collections.Counter()
    bad = []
    cases = [(n, av, e, None, 0.0) for n, av, e in bad_inputs.CASES] + \
        [(n, av, e, sig, delay) for n, av, sig, delay, e in bad_inputs.SIGNAL_CASES]
    if args.since:
        cases = cases[[c[0] for c in cases].index(args.since):]
    cases = [c for c in cases if args.only in c[0]]
    with tempfile.TemporaryDirectory() as fx:
        for name, av, expected, sig, delay in cases:
            # fixtures are rewritten before each case (make_fixtures), so a destroyed input never leaks into the next
            fixtures = Path(fx) / "fixtures"
            outcome, last = run_case(args.src, av, expected, args.timeout, fixtures, sig, delay)
            counts[outcome] += 1
            if outcome != "clean":
                bad.append((name, outcome, last))
            print(f"{outcome:>16}  {name}", flush=True)
    print(f"\n{len(cases)} cases against {args.src}:")
    for outcome, n in counts.most_common():
        print(f"  {outcome:>16}: {n}")
    for name, outcome, last in bad:
        print(f"  {name}: {outcome}: {last}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
