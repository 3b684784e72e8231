"""Run every benchmark suite in turn: ``python -m benchmarks [--quick] [NAME ...]``."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def suites() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(HERE)]) if not m.name.startswith("_"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    ap.add_argument("names", nargs="*", help=f"suites to run (default all: {', '.join(suites())})")
    ap.add_argument("--quick", action="store_true", help="reduced sizes, for a smoke run")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE.parent))
    failed = []
    for name in args.names or suites():
        t0 = time.perf_counter()
        print(f"== benchmarks/{name}.py {'--quick' if args.quick else ''}", flush=True)
        mod = importlib.import_module(f"benchmarks.{name}")
        rc = mod.main(["--quick"] if args.quick else [])
        print(f"== {name}: exit {rc or 0} in {time.perf_counter() - t0:.1f} s", flush=True)
        if rc:
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
