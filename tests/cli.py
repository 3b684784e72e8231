"""Run the command line in process the way a shell sees it: the exit code whether the command returned it or
argparse raised ``SystemExit`` for a bad flag; and Ctrl-C as a shell's foreground job has it."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

from optsched.cli import main


def foreground() -> None:
    """A child's ``preexec_fn``: Ctrl-C's default, as a shell gives its foreground job (a runner started in the
    background, e.g. with '&', has SIGINT ignored, and a child inherits that: it would never see a Ctrl-C)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def ctrl_c_raises() -> Iterator[None]:
    """Within the block, SIGINT raises KeyboardInterrupt in this (main) thread whatever the runner inherited
    (ignored in a background job, where ``_thread.interrupt_main`` does nothing); the previous handler after."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def exit_code(argv: list[str]) -> int:
    try:
        return int(main(argv) or 0)
    except SystemExit as stop:
        return int(stop.code or 0) if not isinstance(stop.code, str) else 1
