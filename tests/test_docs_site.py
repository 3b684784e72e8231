"""The documentation site (issues 14 and 27). The site is built once, strictly and without network access
(``mkdocs build --strict`` in a network namespace of its own), and its pages are checked as a browser gets
them: no Sphinx role or ``>>>`` example left as text, no TeX outside the math elements MathJax typesets, every
image present and every figure shown on some page, MathJax and highlighting served by the site (no CDN), every
page in the nav. Also: the formulations live inside the site, and every format's JSON Schema accepts the
documented examples, the bundled instances and what the package writes, and refuses what the readers refuse."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import optsched
from bad_inputs import make_fixtures
from optsched.io import schema

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("rar-ddls", "schedule", "pipeline-job", "workload", "placement", "total-jct", "deadline-workload",
           "contention")
jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is part of the [test] extra")


def _offline(cmd: list[str]) -> list[str]:
    """``cmd`` in a network namespace of its own (no network at all) where the machine allows it (root, as on
    CI); elsewhere the proxies point at a closed local port, so that any download fails just the same."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        return [unshare, "-n", *cmd]
    return cmd


OFFLINE_ENV = {"http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9", "NO_MKDOCS_2_WARNING": "1",
               "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "no_proxy": ""}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built once, strictly and without network access, into a temporary folder."""
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs, "mkdocs is missing: pip install -e '.[docs]' (make test installs it)"
    out = tmp_path_factory.mktemp("site") / "site"
    env = {**os.environ, **OFFLINE_ENV}
    p = subprocess.run(_offline([mkdocs, "build", "--strict", "--site-dir", str(out)]), cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600)
    warnings = [ln for ln in p.stderr.splitlines() if "WARNING" in ln or "ERROR" in ln]
    assert p.returncode == 0, "\n".join(warnings) or p.stderr[-3000:]
    return out


def _pages(site: Path) -> dict[str, str]:
    return {str(p.relative_to(site)): p.read_text() for p in sorted(site.rglob("*.html")) if p.name != "404.html"}


class _Walker(HTMLParser):
    """Text outside math and code, images, scripts, stylesheets and links of one built page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, bool]] = []   # (tag, inside math, inside code)
        self.text: list[str] = []                       # prose: outside math elements and code
        self.imgs: list[tuple[str, str]] = []
        self.urls: list[str] = []                       # <script src>, <link href>: what the browser loads
        self.prompts_outside_code = 0
        self.roles = 0
        self.nested_quotes = 0                          # '>>>' read as Markdown: block quotes in block quotes

    def _state(self) -> tuple[bool, bool]:
        return (self.stack[-1][1], self.stack[-1][2]) if self.stack else (False, False)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        math, code = self._state()
        math = math or "arithmatex" in (a.get("class") or "").split()
        code = code or tag in ("code", "pre", "script", "style")
        if tag == "img":
            self.imgs.append((a.get("src") or "", a.get("alt") or ""))
        if tag == "script" and a.get("src"):
            self.urls.append(a["src"])
        if tag == "link" and a.get("rel") in ("stylesheet", "preload", "modulepreload") and a.get("href"):
            self.urls.append(a["href"])
        if tag == "blockquote" and any(t == "blockquote" for t, _, _ in self.stack):
            self.nested_quotes += 1
        if tag not in VOID:
            self.stack.append((tag, math, code))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        math, code = self._state()
        if not math and not code:
            self.text.append(data)
            self.prompts_outside_code += data.count(">>>")
            self.roles += len(ROLE.findall(data))


TEX_COMMAND = re.compile(r"\\(?:math[a-z]+|text|frac|sum|le|ge|alpha|tau|rho|lceil|lfloor|tilde|hat|times|in)\b")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# a role as Markdown leaves it: the role's name as text, its target in a <code> element (or still in backticks)
ROLE = re.compile(r":(?:py:)?(?:mod|class|func|meth|attr|data|exc|obj|const):(?:`|$)")


def _walk(html: str) -> _Walker:
    w = _Walker()
    w.feed(html)
    return w


def test_the_site_builds_offline_with_math_and_api(site):
    assert (site / "api" / "experiments" / "index.html").is_file()
    page = (site / "formulations" / "placement-min-time" / "index.html").read_text()
    assert 'class="arithmatex"' in page          # mathematics handed to MathJax, not left as raw dollars
    assert "sweep" in (site / "api" / "experiments" / "index.html").read_text()


def test_no_unrendered_math_roles_or_prompts(site):
    bad = {}
    for name, html in _pages(site).items():
        w = _walk(html)
        text = "".join(w.text)
        problems = [f"{w.roles} Sphinx roles shown literally"] if w.roles else []
        # a TeX command in prose: math that arithmatex did not take (Markdown turns an unmatched \\[ into [)
        tex = TEX_COMMAND.findall(text)
        if tex:
            problems.append(f"TeX outside a math element: {sorted(set(tex))[:8]}")
        for delim in ("\\[", "\\]", "\\(", "\\)", "$$"):
            if delim in text:
                i = text.index(delim)
                problems.append(f"{delim!r} outside a math element: ...{text[max(0, i - 60):i + 60]!r}")
        if w.prompts_outside_code or w.nested_quotes:
            problems.append(f"{w.prompts_outside_code} '>>>' prompts outside code blocks, {w.nested_quotes} block "
                            "quotes nested in block quotes (an example read as Markdown)")
        if problems:
            bad[name] = problems
    assert not bad, bad


def test_every_image_exists_and_every_figure_is_shown(site):
    shown, missing, no_alt = set(), [], []
    for name, html in _pages(site).items():
        for src, alt in _walk(html).imgs:
            if src.startswith(("http:", "https:", "//", "data:")):
                missing.append(f"{name}: remote image {src}")
                continue
            target = (site / name).parent / src
            if not target.is_file():
                missing.append(f"{name}: {src}")
            shown.add(target.resolve())
            if not alt.strip():
                no_alt.append(f"{name}: {src}")
    assert not missing, missing
    assert not no_alt, f"images without alt text: {no_alt}"
    figures = [p for ext in ("png", "svg", "jpg", "jpeg", "gif") for p in (ROOT / "docs").rglob(f"*.{ext}")]
    unshown = sorted(str(p.relative_to(ROOT / "docs")) for p in figures
                     if (site / p.relative_to(ROOT / "docs")).resolve() not in shown)
    assert not unshown, f"figures on no page (show each on a page with a sentence saying what to look at): {unshown}"


def test_assets_are_served_by_the_site(site):
    assert (site / "javascripts" / "mathjax" / "tex-chtml.js").is_file()
    assert list((site / "javascripts" / "mathjax" / "output" / "chtml" / "fonts").rglob("*.woff"))
    remote, absent = [], []
    for name, html in _pages(site).items():
        w = _walk(html)
        for url in w.urls:
            if url.startswith(("http:", "https:", "//")):
                remote.append(f"{name}: {url}")
            elif not ((site / name).parent / url.split("?")[0].split("#")[0]).is_file():
                absent.append(f"{name}: {url}")
        if 'class="arithmatex"' in html:
            assert any(u.endswith("mathjax/tex-chtml.js") for u in w.urls), f"{name} has math but no MathJax"
    assert not remote, f"pages load from the network: {remote[:10]}"
    assert not absent, absent[:10]
    for css in site.rglob("*.css"):
        assert "fonts.googleapis" not in css.read_text(), css
    code = (site / "quickstart" / "index.html").read_text()
    assert '<div class="highlight">' in code and '<span class="' in code   # Pygments ran at build time


def test_api_reference_renders_examples_and_types(site):
    html = (site / "api" / "doors" / "index.html").read_text()
    assert 'class="language-pycon highlight"' in html or '<span class="gp">&gt;&gt;&gt; </span>' in html
    assert "doc-signature" in html and "PathLike" in html   # signatures show their annotations
    assert 'class="autorefs autorefs-internal"' in html      # cross-references resolved to links


def _nav_files() -> set[str]:
    return set(re.findall(r":\s*([\w./-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M))


@pytest.mark.parametrize("folder", ["algorithms", "formulations", "results", "api", "."])
def test_every_page_of_a_folder_is_in_the_nav(folder):
    nav = _nav_files()
    prefix = "" if folder == "." else f"{folder}/"
    missing = sorted(f"{prefix}{p.name}" for p in (ROOT / "docs" / folder).glob("*.md")
                     if f"{prefix}{p.name}" not in nav)
    hint = "; ".join(f"add the line '      - {Path(m).stem.replace('-', ' ').replace('_', ' ').title()}: {m}' "
                     f"under '{folder.title()}:' in mkdocs.yml" for m in missing)
    assert not missing, hint


def test_formulations_live_inside_the_site():
    stray = sorted(p.name for p in (ROOT / "formulations").glob("*.md")) if (ROOT / "formulations").exists() else []
    assert not stray, f"move {stray} from formulations/ to docs/formulations/ (git mv) and add them to the nav"
    linked = re.findall(r"\]\(([^)]*formulations/[^)]*)\)", (ROOT / "README.md").read_text())
    assert all(link.startswith("docs/formulations/") for link in linked), linked


def _examples() -> list[dict]:
    text = (ROOT / "docs" / "formats.md").read_text()
    out = []
    for m in re.finditer(r"^```json\n(.*?)^```", text, re.S | re.M):
        code = m.group(1)
        if code.startswith("--8<--") or '"..."' in code:
            continue  # a schema included from the package, or an abbreviated example
        out.append(json.loads(code))
    return out


def test_the_documented_examples_follow_their_schemas():
    seen = set()
    for doc in _examples():
        jsonschema.validate(doc, schema(doc["format"]))
        seen.add(doc["format"].removeprefix("optsched/").split("@")[0])
    assert seen == set(FORMATS)


def test_the_schemas_are_valid_and_shipped():
    for name in FORMATS:
        s = schema(name)
        jsonschema.Draft202012Validator.check_schema(s)
        assert s["properties"]["format"]["const"] if "properties" in s else s["oneOf"]
    with pytest.raises(optsched.InstanceError, match="no schema"):
        schema("optsched/nope@1")


def test_what_the_package_writes_follows_the_schemas(tmp_path):
    for path in sorted((ROOT / "src" / "optsched" / "instances").rglob("*.json")):
        data = json.loads(path.read_text())
        if "format" in data:
            jsonschema.validate(data, schema(data["format"]))
    made = {"rar": optsched.generate("rar", jobs=4, servers=2, seed=0),
            "total-jct": optsched.generate("total-jct", n=3, seed=0),
            "placement": optsched.generate("placement", seed=0)}
    for name, inst in made.items():
        doc = optsched.to_dict(inst)
        jsonschema.validate(doc, schema(doc["format"]))
        res = optsched.solve(inst)
        out = tmp_path / f"{name}.schedule.json"
        assert res.schedule is not None
        optsched.save_schedule(res.schedule, out, status=str(res.status), lower_bound=res.lower_bound,
                               runtime_s=res.runtime_s, seed=res.seed, objective=res.objective)
        jsonschema.validate(json.loads(out.read_text()), schema("optsched/schedule@1"))
    from optsched.generators.workload import synthetic_workload
    from optsched.problems.workload import workload_to_dict

    jsonschema.validate(workload_to_dict(synthetic_workload(5, seed=0)), schema("optsched/workload@1"))
    deadline = optsched.to_dict(optsched.generate("deadline", seed=0))
    jsonschema.validate(deadline, schema("optsched/deadline-workload@1"))


@pytest.mark.parametrize("name", ["rar_lamda", "rar_gpus0", "rar_gpus_str", "rar_no_horizon", "rar_xi", "rar_bool",
                                  "tjct_neg", "tjct_typo", "pjob_k0", "pjob_ar", "pjob_neg", "plc_free_str",
                                  "wl_gpus0", "wl_unknown", "wl_neg_arrival", "sched_stage_str", "sched_neg_start",
                                  "sched_gpus_str", "sched_no_jobs", "sched_typo"])
def test_the_schemas_refuse_what_the_readers_refuse(name, tmp_path):
    paths = make_fixtures(tmp_path)
    data = json.loads(Path(paths[name]).read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema(data["format"]))
    with pytest.raises(optsched.InstanceError):  # the reader (or, for a schedule, the evaluator) refuses it too
        if data["format"] == "optsched/schedule@1":
            optsched.evaluate(optsched.load(paths["rar"]), optsched.load_schedule(paths[name]))
        else:
            optsched.load(paths[name])


IMAGE_LINE = re.compile(r"^!\[[^\]]*\]\(([^)]+\.(?:png|svg|jpe?g|gif))\)\s*$")


def _blocks(text: str) -> list[list[str]]:
    """The page's paragraphs (runs of non-blank lines)."""
    blocks, cur = [], []
    for line in text.splitlines() + [""]:
        if line.strip():
            cur.append(line)
        elif cur:
            blocks.append(cur)
            cur = []
    return blocks


def test_every_figure_has_a_sentence_saying_what_to_look_at():
    """Each figure (or a run of figures shown together) has a paragraph of prose right before or after it, not
    a heading, a table or code: the sentence that tells a reader what to look at."""
    def is_image(b: list[str]) -> bool:
        return len(b) == 1 and bool(IMAGE_LINE.match(b[0]))

    def is_prose(b: list[str]) -> bool:
        return not b[0].startswith(("#", "|", "```", "![", "<")) and len(" ".join(b).split()) >= 15

    bare = []
    for md in sorted((ROOT / "docs").rglob("*.md")):
        blocks = _blocks(md.read_text(encoding="utf-8"))
        for i, b in enumerate(blocks):
            if not is_image(b):
                continue
            before, after = i - 1, i + 1
            while before >= 0 and is_image(blocks[before]):
                before -= 1
            while after < len(blocks) and is_image(blocks[after]):
                after += 1
            if not ((before >= 0 and is_prose(blocks[before])) or (after < len(blocks) and is_prose(blocks[after]))):
                bare.append(f"{md.relative_to(ROOT)}: {b[0]}")
    assert not bare, f"figures without a sentence beside them saying what to look at: {bare}"
