"""The documentation site (issue 14): ``mkdocs build --strict`` passes (API pages from the docstrings, formulations
with rendered mathematics, every link resolved); every page under docs/algorithms and docs/formulations is in the
nav; the formulations live inside the site; every format's JSON Schema accepts the documented examples, the
bundled instances and what the package writes, and refuses what the readers refuse."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import optsched
from bad_inputs import make_fixtures
from optsched.io import schema

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("rar-ddls", "schedule", "pipeline-job", "workload", "placement", "total-jct", "deadline-workload",
           "contention")
jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is part of the [test] extra")


def test_mkdocs_build_strict(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs, "mkdocs is missing: pip install -e '.[docs]' (make test installs it)"
    p = subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    warnings = [ln for ln in p.stderr.splitlines() if "WARNING" in ln or "ERROR" in ln]
    assert p.returncode == 0, "\n".join(warnings) or p.stderr[-3000:]
    assert (tmp_path / "site" / "api" / "experiments" / "index.html").is_file()
    page = (tmp_path / "site" / "formulations" / "placement-min-time" / "index.html").read_text()
    assert 'class="arithmatex"' in page          # mathematics handed to MathJax, not left as raw dollars
    assert "sweep" in (tmp_path / "site" / "api" / "experiments" / "index.html").read_text()


def _nav_files() -> set[str]:
    return set(re.findall(r":\s*([\w./-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M))


@pytest.mark.parametrize("folder", ["algorithms", "formulations"])
def test_every_page_of_a_folder_is_in_the_nav(folder):
    nav = _nav_files()
    missing = sorted(f"{folder}/{p.name}" for p in (ROOT / "docs" / folder).glob("*.md")
                     if f"{folder}/{p.name}" not in nav)
    hint = "; ".join(f"add the line '      - {Path(m).stem.replace('-', ' ').title()}: {m}' under "
                     f"'{folder.title()}:' in mkdocs.yml" for m in missing)
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
