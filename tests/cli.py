"""Run the command line in process the way a shell sees it: the exit code whether the command returned it or
argparse raised ``SystemExit`` for a bad flag."""

from __future__ import annotations

from optsched.cli import main


def exit_code(argv: list[str]) -> int:
    try:
        return int(main(argv) or 0)
    except SystemExit as stop:
        return int(stop.code or 0) if not isinstance(stop.code, str) else 1
