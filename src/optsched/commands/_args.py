"""argparse ``type=`` converters shared by the subcommands: a bad value is an argparse error (one line, exit 2)
that names the flag."""

from __future__ import annotations

import argparse
import math


def positive_int(name: str):
    def conv(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {text!r}") from None
        if v < 1:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got {text!r}")
        return v
    return conv


def positive_float(name: str):
    def conv(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a positive number, got {text!r}") from None
        if not (v > 0 and math.isfinite(v)):
            raise argparse.ArgumentTypeError(f"{name} must be a positive number, got {text!r}")
        return v
    return conv
