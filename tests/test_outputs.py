"""Issue 28: outputs. An output that is an input of the same command is refused before any work; a failed command
replaces nothing; standard output given by path (``-o /dev/stdout``) works through a pipe; a device that cannot be
written (``/dev/full``) is an error naming it; ``save()`` names the user's path, never its temporary file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import optsched
from optsched.errors import InstanceError
from optsched.generators.rar import tiny_rar_example
from optsched.io import check_output

ROOT = Path(__file__).resolve().parent.parent


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "optsched", *args], cwd=cwd, env=env, capture_output=True,
                          timeout=300, stdin=subprocess.DEVNULL)


def test_check_output_refuses_the_inputs_under_any_name(tmp_path):
    src = tmp_path / "in.json"
    src.write_text("{}")
    (tmp_path / "link.json").symlink_to(src)
    os.link(src, tmp_path / "hard.json")
    for alias in (src, tmp_path / "link.json", tmp_path / "hard.json", tmp_path / "sub" / ".." / "in.json"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        with pytest.raises(InstanceError, match="is the input file"):
            check_output(alias, "-o", inputs=[src])
    check_output(tmp_path / "other.json", "-o", inputs=[src])
    check_output("/dev/null", "-o", inputs=[src])  # a device is written straight into
    with pytest.raises(InstanceError, match="folder"):
        check_output(tmp_path, "-o")
    with pytest.raises(InstanceError, match="cannot write"):
        check_output("/proc/optsched-test.zip", "-o")
    assert sorted(os.listdir(tmp_path)) == ["hard.json", "in.json", "link.json", "sub"]  # the probe is removed


def test_save_names_the_users_path_not_its_temporary_file():
    with pytest.raises(OSError) as err:
        optsched.save(tiny_rar_example(), "/dev/full")
    assert err.value.filename == "/dev/full"


def test_solve_and_plot_refuse_to_overwrite_their_inputs(tmp_path):
    inst = tmp_path / "i.json"
    optsched.save(tiny_rar_example(), inst)
    before = inst.read_bytes()
    p = _run(["solve", str(inst), "-a", "ff", "-o", str(inst)], tmp_path)
    assert p.returncode == 2 and b"is the input file" in p.stderr and inst.read_bytes() == before
    sched = tmp_path / "s.json"
    assert _run(["solve", str(inst), "-a", "ff", "-o", str(sched)], tmp_path).returncode == 0
    text = sched.read_bytes()
    p = _run(["plot", str(inst), str(sched), "-o", str(sched)], tmp_path)
    assert p.returncode == 2 and sched.read_bytes() == text


@pytest.mark.parametrize("args,check", [
    (["solve", "{inst}", "-a", "ff", "-o", "/dev/stdout"], lambda out: json.loads(out)["format"]),
    (["plot", "{inst}", "{sched}", "-o", "/dev/stdout"], lambda out: out.startswith(b"\x89PNG")),
    (["plot", "{inst}", "{sched}", "--trace", "/dev/stdout"], lambda out: json.loads(out)),
])
def test_standard_output_by_path_through_a_pipe(tmp_path, args, check):
    inst, sched = tmp_path / "i.json", tmp_path / "s.json"
    optsched.save(tiny_rar_example(), inst)
    assert _run(["solve", str(inst), "-a", "ff", "-o", str(sched)], tmp_path).returncode == 0
    p = _run([a.format(inst=inst, sched=sched) for a in args], tmp_path)  # stdout is a pipe here
    assert p.returncode == 0, p.stderr
    assert check(p.stdout)


def test_a_full_device_is_an_error_naming_it(tmp_path):
    inst = tmp_path / "i.json"
    optsched.save(tiny_rar_example(), inst)
    p = _run(["solve", str(inst), "-a", "ff", "-o", "/dev/full"], tmp_path)
    assert p.returncode == 2 and b"/dev/full" in p.stderr and b"Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
