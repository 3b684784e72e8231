"""The ``optsched`` command: ``optsched generate | solve | evaluate | place | simulate | bench``.

Each subcommand lives in its own module in :mod:`optsched.commands` with ``register(subparsers)``; this
module only assembles them and turns input errors into one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from .errors import InstanceError, OptschedError

EXIT_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line (the usage itself is one ``--help`` away), exit code 2."""

    def error(self, message: str):
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given ``argv``, only the subcommand it names is imported (start-up time: ``simulate``
    imports the experiments layer, pandas and matplotlib, which ``solve`` never needs)."""
    from . import __version__, commands

    parser = _Parser(
        prog="optsched",
        description="Schedule distributed deep-learning jobs on GPU clusters, with exact optimisation "
                    "(CP-SAT, MILP) beside the papers' approximation algorithms.",
        epilog="Run 'optsched COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"optsched {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    names = sorted(m.name for m in pkgutil.iter_modules(commands.__path__) if not m.name.startswith("_"))
    first = next((a for a in (argv or []) if not a.startswith("-")), None)  # top-level options take no value
    for name in names if first not in names else [first]:
        importlib.import_module(f"{commands.__name__}.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except InstanceError as exc:
        print(f"optsched {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except OptschedError as exc:
        print(f"optsched {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
