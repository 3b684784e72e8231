"""Every example a reader will paste runs as written (issue 15): the ``python`` blocks of the README and of
``docs/`` are executed, and every ``optsched ...`` line of their ``sh`` blocks is run through the command line,
each block in a fresh folder. Blocks fenced ``text`` (usage synopses, pseudo-code) are documentation only;
``make`` and ``benchmarks/`` lines are the long runs the README points at, not examples."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from tests.sim.shared_data import missing_reason

from cli import exit_code

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def documents() -> list[Path]:
    return [p for p in DOCS if "results" not in p.parts and FENCE.search(p.read_text())]


def test_every_fenced_block_says_what_it_is():
    """A bare ``` fence hides whether a block is meant to run: every block names python, sh, json or text."""
    bare = [f"{p.relative_to(ROOT)}" for p in documents() for m in FENCE.finditer(p.read_text()) if not m.group(1)]
    assert not bare, bare


def _commands(code: str) -> list[list[str]]:
    lines, cur = [], ""
    for raw in code.splitlines():
        line = "" if raw.lstrip().startswith("#") else raw.split("  #")[0].rstrip()
        cur += line.rstrip("\\").strip() + " "
        if not line.endswith("\\"):
            if cur.strip():
                lines.append(cur.strip())
            cur = ""
    out = []
    for line in lines:
        for part in line.split("&&"):
            argv = shlex.split(part)
            if argv and argv[0] == "optsched":
                out.append(argv[1:])
    return out


@pytest.mark.parametrize("doc", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_run_as_written(doc, tmp_path, monkeypatch, capsys):
    """The document's python and sh blocks, in order, in one fresh folder and one Python namespace (a later block
    may use an earlier block's files and names, as a reader following the page, or a notebook, does)."""
    monkeypatch.chdir(tmp_path)
    text = doc.read_text()
    namespace = {"__name__": "__docs__"}
    for i, m in enumerate(FENCE.finditer(text)):
        lang, code = m.group(1), m.group(2)
        where = f"{doc.relative_to(ROOT)} block {i}"
        if ("philly" in code or "pollux" in code) and missing_reason("philly", "philly.csv"):
            continue  # the shared traces are not on this machine (the skip rule of tests/sim/shared_data.py)
        if lang == "python":
            exec(compile(code, where, "exec"), namespace)  # noqa: S102 - the docs' own code
        elif lang == "sh":
            for argv in _commands(code):
                assert exit_code(argv) == 0, (where, argv, capsys.readouterr().err)
