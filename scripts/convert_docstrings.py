"""Rewrite every docstring under src/optsched into the one style the API reference renders (issue 27).

The site's renderer (mkdocstrings-python, ``docstring_style: google``) reads docstrings as Markdown. Two Sphinx
habits render badly there, and this script rewrites both mechanically:

* Sphinx roles (``:mod:``, ``:class:``, ``:func:``, ``:meth:``, ``:attr:``, ``:data:``, ``:exc:``, ``:obj:``)
  become Markdown cross-references that mkdocs-autorefs resolves to links:
  ``:class:`~optsched.errors.InstanceError``` -> ``[`InstanceError`][optsched.errors.InstanceError]``,
  ``:func:`optsched.solve``` -> ``[`optsched.solve`][optsched.solve]``. A name relative to the docstring's
  module or class (``:func:`solve```) is resolved with griffe the way Python resolves it there, and written
  fully qualified; a name that resolves to nothing stays a code span (``solve``) and is listed on stderr.
* A ``>>>`` example block at the docstring's own indentation is wrapped in a ```` ```pycon ```` fence, so it
  renders as one highlighted code block with its output instead of nested block quotes. The fence closes after
  a blank line, which ends the example's expected output for doctest: no line of code or expected output
  changes, and ``make test`` keeps running every example (``--doctest-modules``).

Only the text of docstrings (string statements, including attribute docstrings) is touched. The script is
idempotent: fenced examples and cross-references are left as they are.

    python scripts/convert_docstrings.py            # rewrite src/optsched in place
    python scripts/convert_docstrings.py --check    # exit 1 if a file would change (and name it)
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "optsched"
ROLE = re.compile(r":(?:py:)?(mod|class|func|meth|attr|data|exc|obj|const):`(~?)([^`<>]+?)(?:\s*<([^`>]+)>)?`")
CLOSING = re.compile(r"^(.*?)(\"{3}|'{3})\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def load_package():
    import griffe

    return griffe.load(PACKAGE, search_paths=[str(ROOT / "src")], resolve_aliases=False,
                       docstring_parser=None)


def _lookup(pkg, path: str):
    """The griffe object at a dotted path inside the package, or None."""
    if path == PACKAGE:
        return pkg
    if not path.startswith(PACKAGE + "."):
        return None
    try:
        return pkg[path[len(PACKAGE) + 1:]]
    except (KeyError, Exception):  # noqa: BLE001 - griffe raises several kinds for a missing member
        return None


def resolve(pkg, scope, name: str) -> str | None:
    """The fully qualified path that ``name`` names inside ``scope`` (a griffe object), or None."""
    name = name.strip().lstrip(".")
    if name.endswith("()"):
        name = name[:-2]
    head, _, rest = name.partition(".")
    # absolute: optsched.x.y
    if head == PACKAGE:
        return name if _lookup(pkg, name) is not None else None
    # relative to the scope and its parents, the way Python looks the first name up
    obj = scope
    while obj is not None:
        member = obj.members.get(head) if hasattr(obj, "members") else None
        if member is not None:
            target = member.target_path if getattr(member, "is_alias", False) else member.path
            full = f"{target}.{rest}" if rest else target
            if _lookup(pkg, full) is not None:
                return full
            return None
        obj = obj.parent
    # a unique object of the package whose path ends with the name (Sphinx's fallback search)
    hits = [p for p in _all_paths(pkg) if p.endswith("." + name)]
    return hits[0] if len(set(hits)) == 1 else None


_PATHS: list[str] = []


def _all_paths(pkg) -> list[str]:
    if not _PATHS:
        stack = [pkg]
        while stack:
            obj = stack.pop()
            _PATHS.append(obj.path)
            for member in obj.members.values():
                if not getattr(member, "is_alias", False):
                    stack.append(member)
    return _PATHS


def convert_roles(text: str, pkg, scope, unresolved: list[str]) -> str:
    def repl(m: re.Match[str]) -> str:
        role, tilde, shown, target = m.group(1), m.group(2), m.group(3).strip(), m.group(4)
        name = (target or shown).strip()
        full = resolve(pkg, scope, name)
        title = shown if target else (name.split(".")[-1] if tilde else name.lstrip("~"))
        if full is None:
            unresolved.append(f"{scope.path}: :{role}:`{m.group(2)}{m.group(3)}`")
            return f"`{title}`"
        if title == full:
            return f"[`{full}`][]"  # autorefs takes the identifier from the title (backticks dropped)
        return f"[`{title}`][{full}]"

    return ROLE.sub(repl, text)


MAX_LINE = 120  # ruff's line-length (pyproject.toml)
BLOCK_START = re.compile(r"^(\*|-|\+|#|>|\||\d+[.)]|```|~~~)(\s|$)")


def wrap(line: str, width: int = MAX_LINE) -> list[str]:
    """Split a prose line that a cross-reference made too long, at spaces outside code spans and links.

    Continuation lines keep the line's indentation (two more after a list marker), and none starts with a
    Markdown block marker, so the paragraph renders as before."""
    if len(line) <= width:
        return [line]
    indent = len(line) - len(line.lstrip())
    cont = " " * (indent + (2 if re.match(r"\s*[*+-] ", line) else 0))
    spaces, depth, tick = [], 0, False
    for i, ch in enumerate(line):
        if ch == "`":
            tick = not tick
        elif not tick and ch == "[":
            depth += 1
        elif not tick and ch == "]":
            depth = max(0, depth - 1)
        elif ch == " " and not tick and depth == 0 and i > indent:
            spaces.append(i)
    for i in reversed(spaces):
        rest = line[i + 1:]
        if i <= width and rest.strip() and not BLOCK_START.match(rest):
            return [line[:i].rstrip()] + wrap(cont + rest.lstrip(), width)
    return [line]


def fence_examples(lines: list[str], indent: int) -> list[str]:
    """Wrap each ``>>>`` block at ``indent`` in a pycon fence that closes after a blank line."""
    out: list[str] = []
    i, n, in_fence = 0, len(lines), False
    pad = " " * indent
    while i < n:
        line = lines[i]
        if FENCE.match(line):
            in_fence = not in_fence
        if in_fence or not line.startswith(pad + ">>>"):
            out.append(line)
            i += 1
            continue
        if out and out[-1].strip():
            out.append("")
        out.append(pad + "```pycon")
        while i < n and lines[i].strip():  # an example runs until its first blank line (doctest's rule too)
            out.append(lines[i])
            i += 1
        out.append("")  # ends the expected output for doctest; the fence closes after it
        out.append(pad + "```")
    return out


def _docstring_nodes(tree: ast.AST):
    """(node, scope names) of every string statement: module, class, function and attribute docstrings."""
    def walk(node, scope):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            return
        for child in body:
            if isinstance(child, ast.Expr) and isinstance(child.value, ast.Constant) \
                    and isinstance(child.value.value, str):
                yield child, scope
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from walk(child, scope + [child.name])
            elif isinstance(child, (ast.If, ast.Try, ast.With)):
                yield from walk(child, scope)
    yield from walk(tree, [])


def _scope_object(pkg, module_path: str, names: list[str]):
    obj = _lookup(pkg, module_path)
    for name in names:
        if obj is None:
            break
        nxt = obj.members.get(name) if hasattr(obj, "members") else None
        if nxt is None:
            break
        obj = nxt
    return obj if obj is not None else pkg


def _fence_body(seg: list[str], indent: int) -> list[str]:
    """Fence the examples of a docstring's lines (opening line first, closing quotes last)."""
    m = CLOSING.match(seg[-1])
    if m is None:
        return seg
    text, quotes = m.group(1), m.group(2)
    body = seg[1:-1] + ([text] if text.strip() else [])
    fenced = fence_examples(body, indent)
    if fenced == body:
        return seg
    while fenced and not fenced[-1].strip():
        fenced.pop()
    return [seg[0], *fenced, " " * indent + quotes]


def convert_source(src: str, module_path: str, pkg, unresolved: list[str]) -> str:
    lines = src.split("\n")
    edits = []
    for node, names in _docstring_nodes(ast.parse(src)):
        scope = _scope_object(pkg, module_path, names)
        first, last = node.lineno - 1, node.end_lineno - 1
        seg = lines[first:last + 1]
        new = []
        for line in seg:
            converted = convert_roles(line, pkg, scope, unresolved)
            new.extend(wrap(converted) if converted != line else [converted])
        if len(new) > 1:
            new = _fence_body(new, node.col_offset)
        if new != seg:
            edits.append((first, last, new))
    for first, last, new in reversed(edits):
        lines[first:last + 1] = new
    return "\n".join(lines)


def module_path_of(path: Path) -> str:
    rel = path.relative_to(ROOT / "src").with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    args = ap.parse_args(argv)
    pkg = load_package()
    unresolved: list[str] = []
    changed = []
    for path in sorted((ROOT / "src" / PACKAGE).rglob("*.py")):
        src = path.read_text()
        new = convert_source(src, module_path_of(path), pkg, unresolved)
        if new != src:
            changed.append(path.relative_to(ROOT))
            if not args.check:
                path.write_text(new)
    for item in unresolved:
        print(f"unresolved (left as a code span): {item}", file=sys.stderr)
    verb = "would change" if args.check else "changed"
    print(f"{verb} {len(changed)} files" + "".join(f"\n  {p}" for p in changed))
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
