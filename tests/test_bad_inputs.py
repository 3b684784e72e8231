"""Issue 15: every bad input of the command line is one line on stderr with the documented exit code, no
traceback, and nothing left behind (the cases and fixtures are in ``tests/bad_inputs.py``; the same cases run as
a new user runs them, in fresh processes, with ``benchmarks/bad_inputs.py``)."""

from __future__ import annotations

import pytest

from bad_inputs import CASES, SUBPROCESS_ONLY, expand, files_under, make_fixtures, snapshot
from cli import exit_code


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    return make_fixtures(tmp_path_factory.mktemp("fixtures"))


def test_the_suite_is_large_enough():
    assert len(CASES) >= 150
    assert {argv[0] for _, argv, _ in CASES if argv} >= {"generate", "solve", "evaluate", "place", "simulate"}


@pytest.mark.parametrize("name,argv,expected", CASES, ids=[c[0] for c in CASES])
def test_bad_input(name, argv, expected, fixtures, tmp_path, monkeypatch, capsys):
    if name in SUBPROCESS_ONLY:
        pytest.skip("writes to a device by path: run by benchmarks/bad_inputs.py and tests/test_outputs.py")
    monkeypatch.chdir(tmp_path)
    inputs = snapshot(fixtures)
    out = str(tmp_path / "out")
    before = files_under(tmp_path)
    code = exit_code(expand(argv, fixtures, out))
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert code == expected, (code, err)
    if expected:
        assert len(err) == 1 and "error" in err[0], err
        assert files_under(tmp_path) == before, "a failed command left files behind"
    assert snapshot(fixtures) == inputs, "the command replaced one of the suite's input files"
