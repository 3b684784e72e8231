"""Issue 28: bad calls of the Python API, as a table. Each must raise the package's InstanceError (or its documented
subclass ScheduleError) whose message names the argument at fault, and never a bare TypeError, KeyError,
AttributeError or numpy's ValueError naming an internal function. Each case is also bounded in time by the test's
own timeout: a case that allocates before refusing would not come back.

Run ``python tests/test_api_bad_calls.py`` to print the count of cases by outcome (the issue's closing figures).
"""

from __future__ import annotations

import collections
import math
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

import optsched
from optsched.errors import InstanceError
from optsched.generators.rar import tiny_rar_example
from optsched.result import Schedule, ScheduledJob

NAN, INF = math.nan, math.inf


def _rar():
    return tiny_rar_example()


def _rar_sched():
    return optsched.solve(_rar(), "ff").schedule


def _tjct():
    try:
        return optsched.generate("total-jct", jobs=3, seed=0)
    except InstanceError:  # the API before issue 28 took n= only (so that the table runs against it too)
        return optsched.generate("total-jct", n=3, seed=0)


def _plc():
    return optsched.generate("placement", seed=0)


def _job():
    return optsched.models.catalogue_job("VGG19:dp4")


def _gantt(*a: Any, **k: Any):
    from optsched.plot import gantt

    return gantt(*a, **k)


def _segments(*a: Any):
    from optsched.plot import schedule_segments

    return schedule_segments(*a)


def _place(*a: Any, **k: Any):
    from optsched.placement import place

    return place(*a, **k)


def _workload():
    from optsched.generators.contention import random_contention_instance, to_workload

    return to_workload(random_contention_instance(jobs=2, seed=0))


def _huge_cluster():
    data = optsched.to_dict(_rar())
    data["cluster"]["servers"][0]["gpus"] = 10**9
    return optsched.from_dict(data)


def _sched(*jobs: tuple[str, float, dict]) -> Schedule:
    return Schedule(tuple(ScheduledJob(j, s, p) for j, s, p in jobs))


# (name, call, a word the message must hold: the argument's name)
CASES: list[tuple[str, Callable[[], Any], str]] = []


def case(name: str, word: str, call: Callable[[], Any]) -> None:
    CASES.append((name, call, word))


# -- load / save -------------------------------------------------------------------------------------------------
case("load-none", "path", lambda: optsched.load(None))
case("load-int", "path", lambda: optsched.load(123))
case("load-float", "path", lambda: optsched.load(1.5))
case("load-list", "path", lambda: optsched.load(["a.json"]))
case("load-dict", "path", lambda: optsched.load({"format": "x"}))
case("load-bytes", "path", lambda: optsched.load(b"a.json"))
case("load-empty", "path", lambda: optsched.load(""))
case("load-nul", "path", lambda: optsched.load("a\0b.json"))
case("load-missing", "no such file", lambda: optsched.load("/nonexistent/x.json"))
case("load-folder", "", lambda: optsched.load("/"))
case("load-bundled-missing", "bundled", lambda: optsched.load("bundled:rar/nope.json"))
case("load-expect-not-class", "expect", lambda: optsched.load("bundled:rar/rar-paper-j3-s2-seed0.json", "rar"))
case("load-expect-other", "format",
     lambda: optsched.load("bundled:rar/rar-paper-j3-s2-seed0.json", optsched.TotalJctInstance))
case("load-instance-none", "path", lambda: optsched.api.load_instance(None))
case("save-none-path", "path", lambda: optsched.save(_rar(), None))
case("save-int-path", "path", lambda: optsched.save(_rar(), 5))
case("save-empty-path", "path", lambda: optsched.save(_rar(), ""))
case("save-folder", "folder", lambda: optsched.save(_rar(), "/tmp"))
case("save-proc", "cannot write", lambda: optsched.save(_rar(), "/proc/optsched-x.json"))
case("save-none-obj", "instance", lambda: optsched.save(None, "/tmp/x.json"))
case("save-dict-obj", "instance", lambda: optsched.save({"a": 1}, "/tmp/x.json"))
case("save-schedule-obj", "instance", lambda: optsched.save(_rar_sched(), "/tmp/x.json"))
case("from-dict-none", "", lambda: optsched.from_dict(None))
case("from-dict-list", "", lambda: optsched.from_dict([]))
case("from-dict-no-format", "format", lambda: optsched.from_dict({"a": 1}))
case("from-dict-bad-format", "format", lambda: optsched.from_dict({"format": "optsched/nope@1"}))
case("to-dict-none", "instance", lambda: optsched.to_dict(None))
case("to-dict-str", "instance", lambda: optsched.to_dict("x"))

# -- solve -------------------------------------------------------------------------------------------------------
case("solve-none", "instance", lambda: optsched.solve(None))
case("solve-path", "instance", lambda: optsched.solve("bundled:rar/rar-paper-j3-s2-seed0.json"))
case("solve-dict", "instance", lambda: optsched.solve({"format": "optsched/rar-ddls@1"}))
case("solve-schedule", "instance", lambda: optsched.solve(_rar_sched()))
case("solve-unknown-alg", "algorithm", lambda: optsched.solve(_rar(), "nope"))
case("solve-alg-int", "algorithm", lambda: optsched.solve(_rar(), 3))
case("solve-alg-list", "algorithm", lambda: optsched.solve(_rar(), ["ff"]))
case("solve-other-problem-alg", "algorithm", lambda: optsched.solve(_rar(), "total-jct-greedy"))
case("solve-tjct-with-rar-alg", "algorithm", lambda: optsched.solve(_tjct(), "ff"))
case("solve-ff-time-limit", "time_limit", lambda: optsched.solve(_rar(), "ff", time_limit=5))
case("solve-sjf-time-limit", "time_limit", lambda: optsched.solve(_rar(), "sjf-bco", time_limit=5))
case("solve-time-limit-0", "time_limit", lambda: optsched.solve(_rar(), "exact", time_limit=0))
case("solve-time-limit-neg", "time_limit", lambda: optsched.solve(_rar(), "exact", time_limit=-1))
case("solve-time-limit-nan", "time_limit", lambda: optsched.solve(_rar(), "exact", time_limit=NAN))
case("solve-time-limit-inf", "time_limit", lambda: optsched.solve(_rar(), "exact", time_limit=INF))
case("solve-time-limit-str", "time_limit", lambda: optsched.solve(_rar(), "exact", time_limit="5"))
case("solve-time-limit-bool", "time_limit", lambda: optsched.solve(_rar(), "exact", time_limit=True))
case("solve-seed-neg", "seed", lambda: optsched.solve(_rar(), "ff", seed=-1))
case("solve-seed-float", "seed", lambda: optsched.solve(_rar(), "ff", seed=1.5))
case("solve-seed-str", "seed", lambda: optsched.solve(_rar(), "ff", seed="0"))
case("solve-seed-bool", "seed", lambda: optsched.solve(_rar(), "ff", seed=True))
case("solve-seed-huge", "seed", lambda: optsched.solve(_rar(), "ff", seed=2**64))
case("solve-seed-neg-exact", "seed", lambda: optsched.solve(_rar(), "exact", seed=-5))
case("solve-unknown-option-ff", "foo", lambda: optsched.solve(_rar(), "ff", foo=1))
case("solve-unknown-option-sjf", "bar", lambda: optsched.solve(_rar(), "sjf-bco", bar=2))
case("solve-log-search-progress", "log_search_progress",
     lambda: optsched.solve(_rar(), "exact", log_search_progress=True))
case("solve-unknown-option-tjct", "colour", lambda: optsched.solve(_tjct(), "total-jct-greedy", colour="red"))
case("solve-unknown-option-exact-tjct", "nope", lambda: optsched.solve(_tjct(), "total-jct-cpsat", nope=1))
case("solve-num-workers-0", "num_workers", lambda: optsched.solve(_rar(), "exact", num_workers=0))
case("solve-num-workers-str", "num_workers", lambda: optsched.solve(_rar(), "exact", num_workers="2"))
case("solve-det-limit-0", "deterministic_limit", lambda: optsched.solve(_rar(), "exact", deterministic_limit=0))
case("solve-det-limit-nan", "deterministic_limit",
     lambda: optsched.solve(_rar(), "exact", deterministic_limit=NAN))
case("solve-det-limit-heuristic", "deterministic_limit",
     lambda: optsched.solve(_rar(), "ff", deterministic_limit=1))
# the total-JCT branch and bound takes a deterministic limit too (issue 28), checked like CP-SAT's
case("solve-bnb-det-limit-0", "deterministic_limit",
     lambda: optsched.solve(_tjct(), "total-jct-bnb", deterministic_limit=0))
case("solve-bnb-det-limit-str", "deterministic_limit",
     lambda: optsched.solve(_tjct(), "total-jct-bnb", deterministic_limit="5"))
case("solve-bnb-det-limit-inf", "deterministic_limit",
     lambda: optsched.solve(_tjct(), "total-jct-bnb", deterministic_limit=INF))
case("place-det-limit-cbc", "deterministic_limit",
     lambda: _place(_job(), {"s0": 4}, "exact-time", solver="cbc", deterministic_limit=5))
case("solve-workload", "instance", lambda: optsched.solve(_workload()))
case("evaluate-workload", "", lambda: optsched.evaluate(_workload(), _rar_sched()))

case("solve-server-of-1e9-gpus", "gpus", lambda: optsched.solve(_huge_cluster(), "ff"))

# -- evaluate ----------------------------------------------------------------------------------------------------
case("evaluate-none-schedule", "schedule", lambda: optsched.evaluate(_rar(), None))
case("evaluate-dict-schedule", "schedule", lambda: optsched.evaluate(_rar(), {"jobs": []}))
case("evaluate-list-schedule", "schedule", lambda: optsched.evaluate(_rar(), []))
case("evaluate-result", "schedule", lambda: optsched.evaluate(_rar(), optsched.solve(_rar(), "ff")))
case("evaluate-none-instance", "instance", lambda: optsched.evaluate(None, _rar_sched()))
case("evaluate-path-instance", "instance", lambda: optsched.evaluate("x.json", _rar_sched()))
case("evaluate-rar-sched-on-tjct", "job", lambda: optsched.evaluate(_tjct(), _rar_sched()))
case("evaluate-server-of-1e9-gpus", "gpus", lambda: optsched.evaluate(_huge_cluster(), _rar_sched()))
case("evaluate-empty-schedule", "job", lambda: optsched.evaluate(_rar(), Schedule(())))
case("evaluate-unknown-server", "s9", lambda: optsched.evaluate(_rar(), _sched(*[
    (j.id, 0, {"s9": j.gpus}) for j in _rar().jobs])))
case("evaluate-nan-start", "start", lambda: optsched.evaluate(_rar(), _sched(*[
    (j.id, NAN if i == 0 else 0, dict(_rar_sched()[j.id].placement)) for i, j in enumerate(_rar().jobs)])))
case("evaluate-neg-start", "start", lambda: optsched.evaluate(_rar(), _sched(*[
    (j.id, -1, dict(_rar_sched()[j.id].placement)) for j in _rar().jobs])))

# -- generate ----------------------------------------------------------------------------------------------------
case("generate-unknown", "problem", lambda: optsched.generate("nope"))
case("generate-none", "problem", lambda: optsched.generate(None))
case("generate-int", "problem", lambda: optsched.generate(3))
case("generate-workload", "problem", lambda: optsched.generate("pipeline-job"))
case("generate-rar-missing", "jobs", lambda: optsched.generate("rar"))
case("generate-rar-unknown-param", "colour", lambda: optsched.generate("rar", jobs=3, servers=2, seed=0, colour=1))
case("generate-rar-jobs-0", "jobs", lambda: optsched.generate("rar", jobs=0, servers=2, seed=0))
case("generate-rar-jobs-neg", "jobs", lambda: optsched.generate("rar", jobs=-3, servers=2, seed=0))
case("generate-rar-jobs-float", "jobs", lambda: optsched.generate("rar", jobs=2.5, servers=2, seed=0))
case("generate-rar-jobs-str", "jobs", lambda: optsched.generate("rar", jobs="3", servers=2, seed=0))
case("generate-rar-jobs-huge", "jobs", lambda: optsched.generate("rar", jobs=10**9, servers=2, seed=0))
case("generate-rar-servers-0", "servers", lambda: optsched.generate("rar", jobs=3, servers=0, seed=0))
case("generate-rar-servers-huge", "servers", lambda: optsched.generate("rar", jobs=3, servers=10**9, seed=0))
case("generate-rar-seed-neg", "seed", lambda: optsched.generate("rar", jobs=3, servers=2, seed=-1))
case("generate-rar-seed-float", "seed", lambda: optsched.generate("rar", jobs=3, servers=2, seed=0.5))
case("generate-rar-max-gpus-0", "max_gpus", lambda: optsched.generate("rar", jobs=3, servers=2, seed=0, max_gpus=0))
case("generate-rar-load-0", "load", lambda: optsched.generate("rar", jobs=3, servers=2, seed=0, load=0))
case("generate-rar-load-nan", "load", lambda: optsched.generate("rar", jobs=3, servers=2, seed=0, load=NAN))
case("generate-rar-iterations-reversed", "iterations",
     lambda: optsched.generate("rar", jobs=3, servers=2, seed=0, iterations=(5, 1)))
case("generate-rar-iterations-zero", "iterations",
     lambda: optsched.generate("rar", jobs=3, servers=2, seed=0, iterations=(0, 5)))
case("generate-rar-iterations-one", "iterations",
     lambda: optsched.generate("rar", jobs=3, servers=2, seed=0, iterations=5))
case("generate-rar-tau-reversed", "tau_range",
     lambda: optsched.generate("rar", jobs=3, servers=2, seed=0, tau_range=(0.05, 0.01)))
case("generate-rar-horizon-0", "horizon", lambda: optsched.generate("rar", jobs=3, servers=2, seed=0, horizon=0))
case("generate-rar-extra-1", "extra", lambda: optsched.generate("rar", jobs=3, servers=2, seed=0, extra=1.0))
case("generate-tjct-jobs-huge", "jobs", lambda: optsched.generate("total-jct", jobs=10**7))
case("generate-tjct-n-huge", "jobs", lambda: optsched.generate("total-jct", n=10**7))
case("generate-tjct-jobs-and-n", "n", lambda: optsched.generate("total-jct", jobs=3, n=3))
case("generate-tjct-no-jobs", "jobs", lambda: optsched.generate("total-jct"))
case("generate-tjct-jobs-0", "jobs", lambda: optsched.generate("total-jct", jobs=0))
case("generate-tjct-seed-neg", "seed", lambda: optsched.generate("total-jct", jobs=3, seed=-2))
case("generate-tjct-servers-0", "servers", lambda: optsched.generate("total-jct", jobs=3, servers=0))
case("generate-tjct-gpus-huge", "servers", lambda: optsched.generate("total-jct", jobs=3, gpus_per_server=10**12))
case("generate-placement-slack-neg", "slack", lambda: optsched.generate("placement", slack=-1))
case("generate-placement-slack-nan", "slack", lambda: optsched.generate("placement", slack=NAN))
case("generate-placement-servers-0", "servers", lambda: optsched.generate("placement", servers=0))
case("generate-placement-gpus-0", "gpus_per_server", lambda: optsched.generate("placement", gpus_per_server=0))
case("generate-placement-gpus-huge", "servers", lambda: optsched.generate("placement", gpus_per_server=10**12))
case("generate-placement-seed-neg", "seed", lambda: optsched.generate("placement", seed=-1))
case("generate-placement-job-unknown", "", lambda: optsched.generate("placement", job="Nope:1gpu"))
case("generate-deadline-lam-huge", "lam", lambda: optsched.generate("deadline", lam=1e9))
case("generate-deadline-window-huge", "window_h", lambda: optsched.generate("deadline", window_h=1e12))
case("generate-deadline-lam-0", "lam", lambda: optsched.generate("deadline", lam=0))
case("generate-deadline-lam-nan", "lam", lambda: optsched.generate("deadline", lam=NAN))
case("generate-deadline-nodes-0", "nodes", lambda: optsched.generate("deadline", nodes=0))
case("generate-deadline-nodes-huge", "nodes", lambda: optsched.generate("deadline", nodes=10**12))
case("generate-deadline-seed-neg", "seed", lambda: optsched.generate("deadline", seed=-1))
case("generate-deadline-heavy-2", "heavy_share", lambda: optsched.generate("deadline", heavy_share=2))
case("generate-contention-jobs-0", "jobs", lambda: optsched.generate("contention", jobs=0))
case("generate-contention-hours-huge", "hours", lambda: optsched.generate("contention", jobs=8, hours=1e6))
case("generate-contention-hours-inf", "hours", lambda: optsched.generate("contention", jobs=8, hours=INF))
case("generate-contention-seed-neg", "seed", lambda: optsched.generate("contention", seed=-1))
case("generate-contention-max-gpus", "max_gpus", lambda: optsched.generate("contention", max_gpus=4))

# -- place -------------------------------------------------------------------------------------------------------
case("place-none", "job", lambda: _place(None, {"s0": 4}))
case("place-str", "job", lambda: _place("VGG19:dp4", {"s0": 4}))
case("place-free-none", "free", lambda: _place(_job(), None))
case("place-free-list", "free", lambda: _place(_job(), [4]))
case("place-free-neg", "free", lambda: _place(_job(), {"s0": -1}))
case("place-free-str", "free", lambda: _place(_job(), {"s0": "4"}))
case("place-too-few", "", lambda: _place(_job(), {"s0": 1}))
case("place-unknown-alg", "algorithm", lambda: _place(_job(), {"s0": 4}, "nope"))
case("place-select", "select", lambda: _place(_job(), {"s0": 8}, select="middle"))
case("place-time-limit-heuristic", "time_limit", lambda: _place(_job(), {"s0": 4}, time_limit=3))
case("place-solver-heuristic", "solver", lambda: _place(_job(), {"s0": 4}, solver="cbc"))
case("place-time-limit-0", "time_limit", lambda: _place(_job(), {"s0": 4}, "exact-time", time_limit=0))
case("place-seed-neg", "seed", lambda: _place(_job(), {"s0": 4}, seed=-1))
case("place-workers-0", "num_workers", lambda: _place(_job(), {"s0": 4}, "exact-time", num_workers=0))

# -- plot --------------------------------------------------------------------------------------------------------
case("gantt-none-schedule", "schedule", lambda: _gantt(_rar(), None))
case("gantt-dict-schedule", "schedule", lambda: _gantt(_rar(), {"jobs": []}))
case("gantt-none-instance", "instance", lambda: _gantt(None, _rar_sched()))
case("gantt-rar-sched-on-tjct", "job", lambda: _gantt(_tjct(), _rar_sched()))
case("gantt-tjct-sched-on-rar", "job", lambda: _gantt(_rar(), Schedule((ScheduledJob("a", 0, {"s0": 2}),))))
case("gantt-unknown-server", "server", lambda: _gantt(_rar(), _sched(*[
    (j.id, 0, {"s9": j.gpus}) for j in _rar().jobs])))
case("gantt-nan-start", "start", lambda: _gantt(_rar(), _sched(*[
    (j.id, NAN if i == 0 else 0, dict(_rar_sched()[j.id].placement)) for i, j in enumerate(_rar().jobs)])))
case("gantt-over-capacity-with-completions", "capacity", lambda: _gantt(_rar(), Schedule(tuple(
    ScheduledJob(j.id, 0, {"s0": j.gpus}, completion=10.0) for j in _rar().jobs))))
case("segments-none", "schedule", lambda: _segments(_rar(), None))
case("segments-rar-sched-on-tjct", "job", lambda: _segments(_tjct(), _rar_sched()))


def _call(call: Callable[[], Any]) -> tuple[str, BaseException | None]:
    try:
        call()
    except InstanceError as exc:
        return "instance error", exc
    except Exception as exc:  # the outcome this test exists to count
        return f"other: {type(exc).__name__}", exc
    return "accepted", None


def test_the_table_is_large():
    assert len(CASES) >= 100
    assert len({name for name, _, _ in CASES}) == len(CASES)


@pytest.mark.parametrize("name,call,word", CASES, ids=[c[0] for c in CASES])
def test_bad_call(name, call, word):
    outcome, exc = _call(call)
    assert outcome == "instance error", (outcome, exc)
    text = str(exc)
    assert word.lower() in text.lower(), text
    assert "()" not in text, f"names an internal function: {text}"
    assert "\n" not in text.strip()


class _Hang(BaseException):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Hang


def main(seconds: int = 20) -> int:
    """Every case once, ``seconds`` at most each (a case still running then is a hang), and the count by outcome."""
    import signal

    counts: collections.Counter[str] = collections.Counter()
    signal.signal(signal.SIGALRM, _alarm)
    for name, call, word in CASES:
        signal.alarm(seconds)
        try:
            outcome, exc = _call(call)
        except _Hang:
            outcome, exc = "hang", None
        except MemoryError as err:
            outcome, exc = "other: MemoryError", err
        finally:
            signal.alarm(0)
        if outcome == "instance error" and word.lower() not in str(exc).lower():
            outcome = "instance error not naming the argument"
        counts[outcome] += 1
        if outcome != "instance error":
            print(f"{name}: {outcome}: {str(exc)[:140]}")
    print(f"{len(CASES)} bad API calls:", dict(counts.most_common()))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    sys.exit(main())
