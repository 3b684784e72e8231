"""argparse ``type=`` converters shared by the subcommands: a bad value is an argparse error (one line, exit 2)
that names the flag, raised before any work starts (output paths included).

```pycon
>>> positive_int("--jobs")("3"), non_negative_int("--seed")("0"), positive_float("--load")("2.5")
(3, 0, 2.5)
>>> positive_float("--time-limit")("nan")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: --time-limit must be a positive number, got 'nan'

```
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import Callable

from ..limits import MAX_SEED


def _int(name: str, text: str, what: str) -> int:
    # ASCII digits only: int() also reads other scripts' digits ('٣'), which nobody types on purpose
    body = text[1:] if text[:1] in "+-" else text
    if not body.isascii() or not body.isdigit():
        raise argparse.ArgumentTypeError(f"{name} must be {what}, got {text!r}")
    return int(text)


def _bounded_int(name: str, minimum: int, maximum: int | None, what: str) -> Callable[[str], int]:
    def conv(text: str) -> int:
        v = _int(name, text, what)
        if v < minimum:
            raise argparse.ArgumentTypeError(f"{name} must be {what}, got {text!r}")
        if maximum is not None and v > maximum:
            raise argparse.ArgumentTypeError(f"{name} must be at most {maximum:,}, got {text!r}")
        return v
    return conv


def positive_int(name: str, maximum: int | None = None) -> Callable[[str], int]:
    """An integer >= 1 (and <= ``maximum`` when given)."""
    return _bounded_int(name, 1, maximum, "a positive integer")


def non_negative_int(name: str, maximum: int | None = None) -> Callable[[str], int]:
    """An integer >= 0 (and <= ``maximum`` when given)."""
    return _bounded_int(name, 0, maximum, "an integer >= 0")


def seed(name: str = "--seed") -> Callable[[str], int]:
    """A random seed: an integer in 0 .. 2**31 - 1."""
    return non_negative_int(name, MAX_SEED)


def positive_float(name: str) -> Callable[[str], float]:
    """A finite number > 0 (``nan``, ``inf`` and 0 refused)."""
    def conv(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a positive number, got {text!r}") from None
        if not (v > 0 and math.isfinite(v)):
            raise argparse.ArgumentTypeError(f"{name} must be a positive number, got {text!r}")
        return v
    return conv


def non_negative_float(name: str) -> Callable[[str], float]:
    """A finite number >= 0."""
    def conv(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number >= 0, got {text!r}") from None
        if not (v >= 0 and math.isfinite(v)):
            raise argparse.ArgumentTypeError(f"{name} must be a finite number >= 0, got {text!r}")
        return v
    return conv


def _writable_ancestor(path: Path, name: str) -> None:
    """The nearest existing ancestor of ``path`` must be a folder we may write in (missing folders are created)."""
    parent = path.parent
    while not parent.exists():
        if parent == parent.parent:
            break
        parent = parent.parent
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"{name}: {parent} is not a folder, so {path} cannot be written")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{name}: cannot write in {parent}")


def output_file(name: str) -> Callable[[str], str]:
    """A file to write: ``-`` (standard output), an existing file, link, FIFO or device, or a new path whose
    folder exists or can be created and takes a new file; never a folder ([`optsched.io.check_output`][];
    a command checks its outputs against its inputs with the same function once its arguments are parsed)."""
    def conv(text: str) -> str:
        from ..errors import InstanceError
        from ..io import check_output

        try:
            check_output(text, name)
        except InstanceError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text
    return conv


def output_dir(name: str) -> Callable[[str], str]:
    """A folder to write files in: an existing folder, or a path that can be created; never a file."""
    def conv(text: str) -> str:
        if not text:
            raise argparse.ArgumentTypeError(f"{name} must be a folder path, got ''")
        p = Path(text)
        if p.exists() and not p.is_dir():
            raise argparse.ArgumentTypeError(f"{name}: {text} is a file, give a folder")
        if p.is_dir():
            if not os.access(p, os.W_OK | os.X_OK):
                raise argparse.ArgumentTypeError(f"{name}: cannot write in {text}")
        else:
            _writable_ancestor(p / "x", name)
        return text
    return conv


def add_seed_and_output(p: argparse.ArgumentParser) -> None:
    """The two options every generator shares: ``--seed`` and the instance file ``-o``."""
    p.add_argument("--seed", type=seed(), default=0, help="random seed (default 0)")
    p.add_argument("-o", "--output", required=True, type=output_file("-o"),
                   help="instance JSON file to write ('-' for standard output)")


def seed_list(name: str = "--seeds") -> Callable[[str], list[int]]:
    """Seeds for replications: ``0-4`` (0, 1, 2, 3, 4) or ``0,3,7``; each in 0 .. 2**31-1, no duplicates, at most
    100,000.

    ```pycon
    >>> seed_list()("0-2"), seed_list()("5,1")
    ([0, 1, 2], [5, 1])

    ```
    """
    one = seed(name)

    def conv(text: str) -> list[int]:
        out: list[int] = []
        for part in (p.strip() for p in text.split(",")):
            a, dash, b = part.partition("-")
            if dash and a:
                lo, hi = one(a), one(b)
                if hi < lo:
                    raise argparse.ArgumentTypeError(f"{name} must be a range LOW-HIGH with LOW <= HIGH, got {part!r}")
                if hi - lo >= 100_000:
                    raise argparse.ArgumentTypeError(f"{name} must name at most 100,000 seeds, got {text!r}")
                out.extend(range(lo, hi + 1))
            else:
                out.append(one(part))
        if len(set(out)) != len(out):
            raise argparse.ArgumentTypeError(f"{name} lists a seed twice: {text!r}")
        if len(out) > 100_000:
            raise argparse.ArgumentTypeError(f"{name} must name at most 100,000 seeds, got {text!r}")
        return out
    return conv


def dask_address(name: str = "--dask") -> Callable[[str], str]:
    """``local`` (start a Dask LocalCluster) or a scheduler address ``tcp://HOST:PORT`` (also ``tls://``,
    ``ucx://``, ``inproc://``); checked for its shape here, reached when the command runs.

    ```pycon
    >>> dask_address()("local"), dask_address()("tcp://10.0.0.5:8786")
    ('local', 'tcp://10.0.0.5:8786')

    ```
    """
    def conv(text: str) -> str:
        if text == "local":
            return text
        scheme, sep, rest = text.partition("://")
        host, colon, port = rest.rpartition(":")
        if not sep or scheme not in ("tcp", "tls", "ucx", "inproc", "ws", "wss") or not rest or \
                (scheme != "inproc" and (not colon or not host or not port.isascii() or not port.isdigit()
                                         or not 0 < int(port) < 65536)):
            raise argparse.ArgumentTypeError(f"{name} must be 'local' or a scheduler address such as "
                                             f"tcp://HOST:8786, got {text!r}")
        return text
    return conv
