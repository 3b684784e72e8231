"""The bad-input suite of the CLI (issue 15) run as a new user runs it: each case in a fresh process, against any
source tree, classified by outcome. Prints the count per outcome (and lists the cases that are not clean).

Run: ``.venv/bin/python benchmarks/bad_inputs.py [--src OTHER/src] [--timeout 60]``. The cases live in
``tests/bad_inputs.py``; ``tests/test_bad_inputs.py`` asserts the same expectations in process.

Outcomes: ``clean`` (the expected exit code, one line on stderr, no traceback, nothing left behind), ``traceback``,
``accepted`` (exit 0 for a bad input), ``wrong code``, ``several lines``, ``file left behind``, ``timeout``.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import bad_inputs  # noqa: E402


def classify(code: int | None, err: str, expected: int, left: set[str]) -> str:
    if code is None:
        return "timeout"
    if "Traceback" in err:
        return "traceback"
    if expected != 0 and code == 0:
        return "accepted"
    if code != expected:
        return "wrong code"
    if expected != 0 and len([ln for ln in err.splitlines() if ln.strip()]) != 1:
        return "several lines"
    if expected != 0 and left:
        return "file left behind"
    return "clean"


def run_case(src: str, argv: list[str], expected: int, timeout: float) -> tuple[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        paths = bad_inputs.make_fixtures(Path(tmp) / "fixtures")
        work.mkdir()
        out = str(work / "out")
        before = bad_inputs.files_under(work)
        env = {**os.environ, "PYTHONPATH": src}
        try:
            p = subprocess.run([sys.executable, "-m", "optsched", *bad_inputs.expand(argv, paths, out)], cwd=work,
                               env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
            code, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            code, err = None, ""
        left = bad_inputs.files_under(work) - before
        return classify(code, err, expected, left), (err.strip().splitlines() or [""])[-1][:160]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default=str(ROOT / "src"), help="source tree to test (default: this checkout's)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per case (default 60)")
    args = ap.parse_args(argv)
    counts: collections.Counter[str] = collections.Counter()
    bad = []
    for name, av, expected in bad_inputs.CASES:
        outcome, last = run_case(args.src, av, expected, args.timeout)
        counts[outcome] += 1
        if outcome != "clean":
            bad.append((name, outcome, last))
        print(f"{outcome:>16}  {name}", flush=True)
    print(f"\n{len(bad_inputs.CASES)} cases against {args.src}:")
    for outcome, n in counts.most_common():
        print(f"  {outcome:>16}: {n}")
    for name, outcome, last in bad:
        print(f"  {name}: {outcome}: {last}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
