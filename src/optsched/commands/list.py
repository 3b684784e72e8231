"""``optsched list [WHAT] [--json]``: what the package offers, one line each (heuristic vs exact marked).

Sections: the problems, the algorithms (heuristics) and exact models of the offline problems, and the
simulator's schedulers, placements, admission policies and performance models. ``optsched solve --list`` and
``optsched simulate --list`` print the sections of their command.

```pycon
>>> first_sentence("Shortest predicted job first (MLaaS, paper l. 297). Orders jobs by prediction.")
'Shortest predicted job first (MLaaS, paper l. 297).'

```
"""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

WHAT = ("problems", "algorithms", "exact", "schedulers", "placements", "admissions", "perf")
TITLES = {"problems": "problems", "algorithms": "algorithms (heuristics)", "exact": "exact models",
          "schedulers": "simulator: schedulers", "placements": "simulator: placements",
          "admissions": "simulator: admission policies", "perf": "simulator: performance models"}


def register(sub) -> None:
    p = sub.add_parser("list", help="list problems, algorithms, exact models, simulator policies and "
                                    "performance models",
                       description="List what optsched offers, one line each with a one-line description: the "
                                   "problems (file format, default algorithm), the heuristics and the exact "
                                   "models of the offline problems, and the simulator's schedulers, placements, "
                                   "admission policies and performance models.")
    p.add_argument("what", nargs="?", choices=WHAT, default=None, help="one section only (default: all)")
    p.add_argument("--json", action="store_true", help="the same as JSON: {section: [{name, ...}, ...]}")
    p.set_defaults(func=run)


# a sentence ends at ". " before a capital letter, not after an abbreviation such as "l." or "e.g."
_END = re.compile(r"(?<![ (]l)(?<!e\.g)(?<!i\.e)(?<!cf)(?<!vs)(?<!Fig)(?<!eq)(?<!Eq)\.\s+(?=[A-Z(`])")


# the docstrings' markup, shown as plain text on a terminal: cross-references ``[`Name`][target]`` and
# ``[text][target]`` keep their text, literals lose their backquotes
_XREF = re.compile(r"\[([^\]]*)\]\[[^\]]*\]")
_LITERAL = re.compile(r"`{1,2}([^`]*)`{1,2}")


def plain_text(text: str) -> str:
    """``text`` without the docstrings' markdown markup.

    >>> plain_text("See [`Composed`][optsched.sim.base.Composed] and ``space``.")
    'See Composed and space.'
    """
    return _LITERAL.sub(r"\1", _XREF.sub(r"\1", text))


def first_sentence(doc: str | None) -> str:
    """The first sentence of a docstring's first paragraph, on one line, as plain text."""
    para = " ".join((doc or "").strip().split("\n\n")[0].split())
    m = _END.search(para)
    return plain_text(para[:m.start() + 1] if m else para)


def _rows(what: str) -> list[dict[str, Any]]:
    if what == "problems":
        from ..registry import problems

        return [{"name": p.name, "format": p.format, "default_algorithm": p.default_algorithm,
                 "description": p.title} for p in problems().values()]
    if what in ("algorithms", "exact"):
        from ..registry import list_algorithms

        return [{"name": n, "problem": a.problem.name, "kind": a.kind,
                 "default": a.problem.default_algorithm == n, "description": a.description}
                for n, a in list_algorithms().items() if a.exact == (what == "exact")]
    from ..sim import registry

    kind = {"schedulers": "scheduler", "placements": "placement", "admissions": "admission", "perf": "perf"}[what]
    out = []
    for name in registry.names(kind):
        obj = registry.lookup(kind, name)  # the class holds the description
        doc = first_sentence(obj.__doc__)
        out.append({"name": name, "description": doc or FALLBACK.get(name, "(no description)")})
    return out


# policies whose class has no docstring of its own
FALLBACK = {"accept-all": "Admit every job on arrival (Blox's default admission)."}


def _line(what: str, r: dict[str, Any]) -> str:
    if what == "problems":
        extra = f"default {r['default_algorithm']}" if r["default_algorithm"] else "no solvers"
        return f"{r['name']:<13} {r['format']:<26} {extra:<24} {r['description']}"
    if what in ("algorithms", "exact"):
        default = " (default)" if r["default"] else ""
        return f"{r['name']:<17} {r['problem']:<10} {r['kind']:<9} {r['description']}{default}"
    return f"{r['name']:<17} {r['description']}"


def print_sections(sections: list[str], as_json: bool = False) -> None:
    """Print the sections (plain lines under ``[title]`` headings, or one JSON object)."""
    if as_json:
        print(json.dumps({what: _rows(what) for what in sections}, indent=1))
        return
    for i, what in enumerate(sections):
        if len(sections) > 1:
            print(("\n" if i else "") + f"[{TITLES[what]}]")
        for r in _rows(what):
            print(_line(what, r))


def run(args: argparse.Namespace) -> int:
    print_sections([args.what] if args.what else list(WHAT), args.json)
    return 0
