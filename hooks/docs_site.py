"""MkDocs hook of the documentation site (mkdocs.yml ``hooks:``), for a site that works offline (issue 27).

* MathJax is served by the site itself: its files come from the ``django-static-mathjax`` package on PyPI (the
  ``[docs]`` extra; MathJax 3's official build, importable as ``mathjax``, no Django needed) and are added to
  the site under ``javascripts/mathjax/`` at build time (also by ``mkdocs serve``), never committed. Code is
  highlighted by Pygments at build time, so no script is fetched for it either.
* A cross-reference in a docstring to an optsched object that exists but is not rendered in the API reference
  shows as code with its full path as a tooltip instead of failing the build; a reference to a name that does
  not exist in optsched still fails ``mkdocs build --strict``.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File, Files

MATHJAX_URI = "javascripts/mathjax"
# tex-chtml.js, plus what it loads on demand: TeX extensions (autoload), the CHTML fonts, the menu and its
# accessibility modules; the speech rule engine (sre/, 4 MB) and the other combined builds are left out
MATHJAX_PARTS = ("tex-chtml.js", "input", "output/chtml", "ui", "a11y", "adaptors")
_AUTOREF = re.compile(r'<autoref\b(?P<attrs>[^>]*?)\bidentifier="(?P<id>optsched(?:\.\w+)*)"')
_objects: set[str] = set()


def mathjax_root() -> Path:
    try:
        import mathjax  # django-static-mathjax
    except ImportError as exc:  # pragma: no cover - the [docs] extra installs it
        raise SystemExit("MathJax is missing: pip install -e '.[docs]' (django-static-mathjax)") from exc
    return Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"


def on_config(config, **kwargs):
    import griffe

    root = Path(config["config_file_path"]).parent
    pkg = griffe.load("optsched", search_paths=[str(root / "src")], resolve_aliases=False)
    stack = [pkg]
    while stack:
        obj = stack.pop()
        _objects.add(obj.path)
        stack.extend(m for m in obj.members.values() if not m.is_alias)
    return config


def on_files(files: Files, config, **kwargs) -> Files:
    es5 = mathjax_root()
    for part in MATHJAX_PARTS:
        src = es5 / part
        for path in [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file()):
            uri = f"{MATHJAX_URI}/{path.relative_to(es5).as_posix()}"
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def on_page_content(html: str, page, **kwargs) -> str:
    def optional(m: re.Match[str]) -> str:
        if m["id"] not in _objects or "optional" in m["attrs"]:
            return m[0]
        return f'<autoref optional{m["attrs"]}identifier="{m["id"]}"'

    return _AUTOREF.sub(optional, html)
