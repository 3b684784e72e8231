"""Stopping an exact solve on Ctrl-C or SIGTERM: the one mechanism behind CP-SAT ([`optsched.exact._cpsat`][]),
the PuLP back-ends ([`optsched.exact._pulp`][]) and the total-JCT branch and bound.

Python runs signal handlers in the main thread only, between bytecodes; a solver busy in C++ (CP-SAT), in a
child process (CBC, HiGHS) or deep in a Python search would either not notice the signal or lose its best
solution to the exception. So [`run_stoppable`][optsched.exact._stop.run_stoppable] runs the work in a helper
thread while the main thread waits in Python, where ``KeyboardInterrupt`` (Ctrl-C) or the CLI's ``SystemExit``
(SIGTERM, [`optsched.cli.main`][]) arrive; it then asks the work to stop (``stop``), and if the work has not ended
``grace_s`` seconds later, forces it (``force``, e.g. killing a child process, again at every look until the work
ends: a child started just after the signal is killed too). The work returns what it has, and
the caller labels it ``interrupted`` with the signal's name.

```pycon
>>> run_stoppable(lambda: 6 * 7, stop=lambda: None)   # no signal arrived: the work's value, and None
(42, None)

```
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, TypeVar

__all__ = ["run_stoppable", "signal_name"]

T = TypeVar("T")


def signal_name(exc: BaseException) -> str:
    """The signal an exception stands for in the main thread: ``"SIGINT"`` for ``KeyboardInterrupt``,
    ``"SIGTERM"`` for the ``SystemExit`` the CLI's SIGTERM handler raises."""
    return "SIGINT" if isinstance(exc, KeyboardInterrupt) else "SIGTERM"


def run_stoppable(work: Callable[[], T], stop: Callable[[], None], *, force: Callable[[], None] | None = None,
                  grace_s: float = 0.8, name: str = "solver") -> tuple[T, str | None]:
    """``work()`` in a helper thread (named ``name``), stopped by Ctrl-C or SIGTERM: returns its value and the
    signal's name (``"SIGINT"``, ``"SIGTERM"``), or ``None`` when no signal arrived.

    On a signal, ``stop()`` is called (again on each further signal) and ``work`` is expected to return soon with
    what it has; if it has not ended ``grace_s`` seconds after the first signal, ``force()`` (when given) is called,
    and again every 50 ms until ``work`` ends. An exception of ``work`` is raised in the caller's thread. Off the
    main thread (where no signal arrives) ``work`` simply runs, and the signal is ``None``."""
    if threading.current_thread() is not threading.main_thread():
        return work(), None
    box: dict[str, Any] = {}
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=target, name=name, daemon=True).start()
    caught: str | None = None
    since = 0.0
    while True:
        try:
            while not done.wait(0.05):
                if force is not None and caught is not None and time.monotonic() - since > grace_s:
                    force()
            break
        except (KeyboardInterrupt, SystemExit) as exc:
            if caught is None:
                caught, since = signal_name(exc), time.monotonic()
            stop()
    if "error" in box:
        raise box["error"]
    return box["value"], caught
