"""Bad input to ``optsched rl ...`` and ``optsched generate contention``: one line on stderr naming the flag, exit
code 2, no traceback, nothing written, and the check happens before any training or simulation starts."""

from __future__ import annotations

import pytest
from tests.sim.shared_data import DEEPSHARE, needs_data

from bad_inputs import files_under
from cli import exit_code

CASES = [
    ("train-w1-big", "rl train --w1 1.5 -o {out}/p.zip", "--w1"),
    ("train-w1-nan", "rl train --w1 nan -o {out}/p.zip", "--w1"),
    ("train-w1-word", "rl train --w1 high -o {out}/p.zip", "--w1"),
    ("train-seed-neg", "rl train --seed -1 -o {out}/p.zip", "--seed"),
    ("train-seed-huge", "rl train --seed 99999999999 -o {out}/p.zip", "--seed"),
    ("train-seed-float", "rl train --seed 1.5 -o {out}/p.zip", "--seed"),
    ("train-timesteps-neg", "rl train --timesteps -1 -o {out}/p.zip", "--timesteps"),
    ("train-nothing", "rl train --timesteps 0 --imitation 0 -o {out}/p.zip", "--timesteps"),
    ("train-imitation-neg", "rl train --imitation -1 -o {out}/p.zip", "--imitation"),
    ("train-imitation-huge", "rl train --imitation 1000 -o {out}/p.zip", "--imitation"),
    ("train-imitation-episodes-0", "rl train --imitation-episodes 0 -o {out}/p.zip", "--imitation-episodes"),
    ("train-recipe", "rl train --recipe fast -o {out}/p.zip", "--recipe"),
    ("train-observation", "rl train --observation pixels -o {out}/p.zip", "--observation"),
    ("train-action-space", "rl train --action-space lazy -o {out}/p.zip", "--action-space"),
    ("train-reward", "rl train --reward speed -o {out}/p.zip", "--reward"),
    ("train-jobs-huge", "rl train --jobs 100000000 -o {out}/p.zip", "--jobs"),
    ("train-sets-0", "rl train --sets 0 -o {out}/p.zip", "--sets"),
    ("train-hours-inf", "rl train --hours inf -o {out}/p.zip", "--hours"),
    ("train-mix", "rl train --mix huge -o {out}/p.zip", "--mix"),
    ("train-lr-neg", "rl train --learning-rate -0.1 -o {out}/p.zip", "--learning-rate"),
    ("train-out-stdout", "rl train -o -", "-o"),
    ("train-out-not-zip", "rl train -o {out}/p.npz", "-o"),
    ("train-out-folder", "rl train -o {tmp}", "-o"),
    ("train-out-under-file", "rl train -o {file}/p.zip", "-o"),
    ("evaluate-policy-missing", "rl evaluate --policy {out}/none.npz", "--policy"),
    ("evaluate-policy-kind", "rl evaluate --policy {file}", "--policy"),
    ("evaluate-sets-0", "rl evaluate --sets 0", "--sets"),
    ("evaluate-jobs-word", "rl evaluate --jobs many", "--jobs"),
    ("evaluate-baseline", "rl evaluate --baselines contention-las,fifo", "--baselines"),
    ("evaluate-mix", "rl evaluate --mix Normal", "--mix"),
    ("evaluate-out-folder", "rl evaluate -o {tmp}", "-o"),
    ("evaluate-gate-big", "rl evaluate --planner --gate 2", "--gate"),
    ("evaluate-gate-word", "rl evaluate --planner --gate often", "--gate"),
    ("evaluate-horizon-0", "rl evaluate --planner --horizon 0", "--horizon"),
    ("evaluate-endgame-0", "rl evaluate --planner --endgame 0", "--endgame"),
    ("evaluate-deep-word", "rl evaluate --planner --deep some", "--deep"),
    ("evaluate-tiebreak-word", "rl evaluate --planner --tiebreak exact", "--tiebreak"),
    ("evaluate-stops-0", "rl evaluate --planner --stops 0", "--stops"),
    ("evaluate-stops-no-endgame", "rl evaluate --planner --endgame none --deep none --stops 1", "--stops"),
    ("evaluate-planner-paper-agent", "rl evaluate --planner --policy shipped --sets 1 --jobs 4 --hours 0.25 "
                                     "--baselines contention-srtf", "--planner"),
    ("export-missing", "rl export {out}/m.zip -o {out}/x.npz", "model"),
    ("export-out-kind", "rl export {file} -o {out}/x.npz", "model"),
    ("generate-seed-neg", "generate contention --seed -3 -o {out}/s.json", "--seed"),
    ("generate-jobs-huge", "generate contention --jobs 10000000000 -o {out}/s.json", "--jobs"),
    ("generate-out-folder", "generate contention -o {tmp}", "-o"),
    ("generate-mix", "generate contention --mix odd -o {out}/s.json", "--mix"),
]


@pytest.mark.parametrize("argv,flag", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_rl_input(argv, flag, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    file = tmp_path / "plain.txt"
    file.write_text("x")
    out = tmp_path / "out"
    before = files_under(tmp_path)
    code = exit_code(argv.format(out=out, tmp=tmp_path, file=file).split())
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert code == 2, (code, err)
    assert len(err) == 1 and "error" in err[0] and flag in err[0], err
    assert "Traceback" not in err[0]
    assert files_under(tmp_path) == before, "a refused command left files behind"


def test_the_gate_parser_accepts_every_named_gate_of_the_planner(capsys):
    """``--gate`` reads the planner's names from one place (``GATES``): each is accepted as is, ``none`` and a
    probability too; a bad name is refused on one line that names ``--gate`` and lists every name (exit code 2)."""
    from optsched.cli import build_parser
    from optsched.sim.contention.lookahead import GATES

    def gate(value: str):
        argv = ["rl", "evaluate", "--planner", "--gate", value]
        return build_parser(argv).parse_args(argv).gate

    assert len(GATES) >= 3 and {gate(name) for name in GATES} == set(GATES)
    assert gate("none") is None and gate("NONE") is None and gate("0.5") == 0.5
    try:
        from optsched.rl.planner import GATES as PLANNER_GATES
    except ImportError:  # the planner needs gymnasium; the parser does not
        PLANNER_GATES = GATES
    assert PLANNER_GATES is GATES
    for bad in ("disagree-all", "Experts", "0", "nan"):
        code = exit_code(["rl", "evaluate", "--planner", "--gate", bad])
        err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
        assert code == 2 and len(err) == 1 and "--gate" in err[0], (bad, code, err)
        assert all(name in err[0] for name in GATES) and "Traceback" not in err[0]


@needs_data(*DEEPSHARE)
def test_rl_evaluate_to_stdout_writes_only_the_csv_there(capsys):
    import csv
    import io

    from optsched.cli import main

    assert main(["rl", "evaluate", "--sets", "1", "--jobs", "16", "-o", "-"]) == 0
    out, err = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows and {r["policy"] for r in rows} >= {"rl-base", "rl-hybrid"}
    assert "rl-base" in err  # the table went to standard error


@needs_data(*DEEPSHARE)
def test_rl_evaluate_planner_adds_its_rows_and_its_cpu_beside_the_lookahead(capsys, tmp_path):
    """``--planner``: the shipped learned scheduler (agent + search) gets one row per set, beside the agent and the
    baselines, and the CPU milliseconds per decision of the planner, the agent and the lookahead are printed."""
    import csv

    pytest.importorskip("gymnasium")
    from optsched.cli import main

    out = tmp_path / "e.csv"
    assert main(["rl", "evaluate", "--planner", "--gate", "none", "--deep", "none", "--sets", "2", "--jobs", "6",
                 "--hours", "0.25", "--baselines", "contention-lookahead", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    rows = list(csv.DictReader(out.open()))
    planner = [r for r in rows if r["policy"] == "rl-planner"]
    assert len(planner) == 2 and {r["instance_seed"] for r in planner} == {"1000000", "1000001"}
    assert all(float(r["avg_jct_s"]) >= 900 for r in planner)
    assert "rl-planner" in text and "CPU ms per decision" in text and "lookahead" in text.split("CPU ms")[1]


@needs_data(*DEEPSHARE)
def test_rl_evaluate_planner_without_endgame_drops_the_default_stops(capsys):
    """Stops are the endgame search's move: with ``--endgame none --deep none`` the default ``--stops`` is dropped
    and the CPU line says so (a ``--stops`` given there is refused: ``evaluate-stops-no-endgame`` above)."""
    pytest.importorskip("gymnasium")
    from optsched.cli import main

    assert main(["rl", "evaluate", "--planner", "--endgame", "none", "--deep", "none", "--sets", "1", "--jobs", "4",
                 "--hours", "0.25", "--baselines", "contention-lookahead"]) == 0
    text = capsys.readouterr().out
    assert "endgame None, deep None" in text and "stops none" in text
