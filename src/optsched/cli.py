"""The ``optsched`` command: ``optsched generate | solve | evaluate | place | simulate | bench``.

Each subcommand lives in its own module in [`optsched.commands`][] with ``register(subparsers)``; this
module only assembles them and turns input errors into one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import pkgutil
import signal
import sys
import threading
from typing import Callable

from .errors import InstanceError, OptschedError

EXIT_INPUT = 2
EXIT_PIPE = 141


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


def _terminate(signum: int, frame: object) -> None:
    # SIGTERM unwinds like Ctrl-C, so atomic writes in progress remove their temporary files
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    """Run one command; input errors are one line on stderr and exit code 2, never a traceback.

    Exit codes: 0 done; 1 a solver or run failed; 2 bad input (files, flags, output paths); 3 ``solve`` (``place``): an
    exact model stopped before finding a schedule (a placement); 130 interrupted (Ctrl-C); 141 the output pipe closed;
    143 SIGTERM. A signal during an exact solve stops the solver within about a second (CP-SAT's search, the CBC or
    HiGHS process, the total-JCT branch and bound): ``solve`` and ``place`` then print the best result found, ``solve``
    writes it (``-o``), with status ``interrupted``, never as a finished run, and exit 130 or 143.
    """
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    previous = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    undo_logging = _log_to_stderr(args.command)
    try:
        return int(args.func(args) or 0)
    except InstanceError as exc:
        _error(args.command, str(exc))
        return EXIT_INPUT
    except OptschedError as exc:
        _error(args.command, str(exc))
        return 1
    except BrokenPipeError:
        # the reader of our output went away (optsched ... | head): stop quietly, as Unix tools do
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PIPE
    except OSError as exc:  # a path that cannot be read or written, caught by no earlier check
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        _error(args.command, f"{where}{exc.strerror or exc}")
        return EXIT_INPUT
    except MemoryError:
        _error(args.command, "out of memory (try a smaller instance or workload)")
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        undo_logging()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous)


def _log_to_stderr(command: str) -> Callable[[], None]:
    """While a command runs, the package's messages that are not its output (the ``optsched`` logger hierarchy,
    and warnings, which `logging.captureWarnings` routes to ``py.warnings``) are one line each on stderr:
    ``optsched COMMAND: warning: ...``. Returns what undoes it (``main`` may run many times in one process).
    A program that configured the ``optsched`` logger itself keeps its handlers."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine(f"optsched {command}: %(levelname)s: %(message)s"))
    loggers = [logging.getLogger("optsched"), logging.getLogger("py.warnings")]
    added = [lg for lg in loggers if not lg.handlers]
    for lg in added:
        lg.addHandler(handler)
        lg.propagate = False
    root = logging.getLogger("optsched")
    level = root.level
    if level == logging.NOTSET:
        root.setLevel(logging.INFO)
    logging.captureWarnings(True)

    def undo() -> None:
        logging.captureWarnings(False)
        root.setLevel(level)
        for lg in added:
            lg.removeHandler(handler)
            lg.propagate = True
    return undo


class _OneLine(logging.Formatter):
    """A record on one line, its level in lower case (warnings: their category and text, not the source line)."""

    def format(self, record: logging.LogRecord) -> str:
        record.levelname = record.levelname.lower()
        if record.name == "py.warnings":  # "FILE:LINE: Category: text\n  source line" -> "Category: text"
            text = record.getMessage()
            head = text.strip().splitlines()[0] if text.strip() else text
            parts = head.split(": ", 1)
            record.msg, record.args = (parts[1] if len(parts) == 2 and ":" in parts[0] else head), None
        return " ".join(super().format(record).split("\n"))


def _error(command: str, message: str) -> None:
    print(f"optsched {command}: error: " + " ".join(message.split("\n")), file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
