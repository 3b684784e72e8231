"""The bad-input suite of the command line (issue 15): files and arguments a new user or a hostile tester gives the
five commands, each with the exit code it must get. Used by ``tests/test_bad_inputs.py`` (in process) and by
``benchmarks/bad_inputs.py`` (subprocesses, any source tree: the before/after count by outcome).

Every case must end with one line on stderr naming what is wrong, the expected exit code, no traceback, and no
file left behind in the working folder. ``{name}`` in an argument is replaced by the path of fixture ``name``
(see :func:`make_fixtures`); ``{out}`` by a fresh path in the working folder that must not exist afterwards.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

INPUT = 2      # bad input: one line, exit 2
NO_SCHEDULE = 3  # solve: an exact model stopped before finding a schedule (documented)


def _rar() -> dict:
    return {"format": "optsched/rar-ddls@1", "name": "tiny",
            "cluster": {"servers": [{"id": "s0", "gpus": 4}, {"id": "s1", "gpus": 4}],
                        "intra_bandwidth": 50.0, "inter_bandwidth": 5.0, "reduce_speed": 100.0,
                        "contention_xi": 0.5, "overhead_xi": 0.002, "degradation_alpha": 0.2},
            "horizon": 60,
            "jobs": [{"id": "j0", "gpus": 4, "iterations": 120, "gradient_size": 0.05, "batch_size": 32,
                      "forward_time_per_sample": 0.0005, "backward_time": 0.02},
                     {"id": "j1", "gpus": 2, "iterations": 80, "gradient_size": 0.02, "batch_size": 16,
                      "forward_time_per_sample": 0.0005, "backward_time": 0.015}]}


def _tjct() -> dict:
    return {"format": "optsched/total-jct@1", "cluster": {"servers": [{"id": "s0", "gpus": 2}]},
            "jobs": [{"id": "a", "release": 0, "gpus": 2, "modes": [{"shape": [2], "duration": 3}]},
                     {"id": "b", "release": 1, "gpus": 1, "modes": [{"shape": [1], "duration": 2}]}]}


def _pjob() -> dict:
    return {"format": "optsched/pipeline-job@1", "id": "p", "allreduce": "ring",
            "stages": [{"replicas": 2, "forward_ms": 1.0, "backward_ms": 2.0, "d_out_mb": 3.0, "params_mb": 10.0},
                       {"replicas": 1, "forward_ms": 2.0, "backward_ms": 4.0, "params_mb": 5.0}]}


BIG_FREE = ",".join(f"s{i}=3" for i in range(16))


def _big_pjob() -> dict:
    """12 stages of 4 replicas (48 GPUs): on BIG_FREE's 16 servers, exact-cut runs for minutes with any solver."""
    stages = [{"replicas": 4, "forward_ms": 1.0 + i % 3, "backward_ms": 2.0 + i % 5, "d_out_mb": 3.0 + i % 4,
               "params_mb": 10.0 + i} for i in range(12)]
    del stages[-1]["d_out_mb"]
    return {"format": "optsched/pipeline-job@1", "id": "big", "allreduce": "ring", "stages": stages}


def _placement() -> dict:
    job = _pjob()
    job.pop("format")
    return {"format": "optsched/placement@1", "free": {"s0": 2, "s1": 2}, "job": job}


def _wl() -> dict:
    return {"format": "optsched/workload@1",
            "jobs": [{"id": "a", "arrival_s": 0, "gpus": 2, "iterations": 100, "iteration_time_s": 1.0},
                     {"id": "b", "arrival_s": 10, "gpus": 1, "iterations": 50, "iteration_time_s": 1.0}]}


def _sched(**over) -> dict:
    jobs = [{"id": "j0", "start": 0, "placement": {"s0": 4}}, {"id": "j1", "start": 0, "placement": {"s1": 2}}]
    return {"format": "optsched/schedule@1", "jobs": jobs, **over}


def _patched(base: dict, path: str, value) -> dict:
    """``base`` with the value at a dotted path (``jobs.0.gpus``) replaced; ``value=...`` deletes it."""
    data = json.loads(json.dumps(base))
    *head, last = path.split(".")
    node = data
    for k in head:
        node = node[int(k)] if isinstance(node, list) else node[k]
    key = int(last) if isinstance(node, list) else last
    if value is ...:
        del node[key]
    else:
        node[key] = value
    return data


def _zip_without_model() -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("readme.txt", "no model in here")
    return buf.getvalue()


def make_fixtures(root: Path) -> dict[str, str]:
    """Write every fixture file under ``root``; returns name -> path."""
    root.mkdir(parents=True, exist_ok=True)
    files: dict[str, object] = {
        "rar": _rar(), "tjct": _tjct(), "pjob": _pjob(), "plc": _placement(), "wl": _wl(), "sched": _sched(),
        "tjct_sched": {"format": "optsched/schedule@1", "jobs": [{"id": "a", "start": 0, "placement": {"s0": 2}},
                                                                  {"id": "b", "start": 3, "placement": {"s0": 1}}]},
        "rar_lamda": _patched(_rar(), "jobs.0.lamda", 2.0),
        "rar_gpus0": _patched(_rar(), "jobs.0.gpus", 0),
        "rar_gpus_str": _patched(_rar(), "jobs.1.gpus", "two"),
        "rar_gpus_big": _patched(_rar(), "jobs.0.gpus", 100),
        "rar_iter_float": _patched(_rar(), "jobs.0.iterations", 1.5),
        "rar_no_jobs": _patched(_rar(), "jobs", []),
        "rar_dup": _patched(_rar(), "jobs.1.id", "j0"),
        "rar_no_horizon": _patched(_rar(), "horizon", ...),
        "rar_xi": _patched(_rar(), "cluster.contention_xi", 2.0),
        "rar_nan": _patched(_rar(), "cluster.intra_bandwidth", "NaN"),
        "rar_servers_obj": _patched(_rar(), "cluster.servers", {"s0": 4}),
        "rar_dup_server": _patched(_rar(), "cluster.servers.1.id", "s0"),
        "rar_server_1e9": _patched(_rar(), "cluster.servers.0.gpus", 10**9),
        "rar_slow": _patched(_rar(), "jobs.0.backward_time", 5.0),
        "rar_bool": _patched(_rar(), "horizon", True),
        "tjct_neg": _patched(_tjct(), "jobs.0.modes.0.duration", -2),
        "tjct_shape": _patched(_tjct(), "jobs.0.modes.0.shape", [3]),
        "tjct_release": _patched(_tjct(), "jobs.1.release", -1),
        "tjct_typo": _patched(_tjct(), "jobs.0.wieght", 2),
        "pjob_k0": _patched(_pjob(), "stages.0.replicas", 0),
        "pjob_ar": _patched(_pjob(), "allreduce", "star"),
        "pjob_neg": _patched(_pjob(), "stages.1.forward_ms", -1.0),
        "plc_big": _patched(_placement(), "free.s0", 100),
        "plc_small": _patched(_placement(), "free", {"s0": 1}),
        "plc_free_str": _patched(_placement(), "free.s1", "2"),
        "wl_gpus0": _patched(_wl(), "jobs.0.gpus", 0),
        "wl_unknown": _patched(_wl(), "jobs.0.colour", "red"),
        "wl_empty": _patched(_wl(), "jobs", []),
        "wl_neg_arrival": _patched(_wl(), "jobs.1.arrival_s", -5),
        "wl_big": _patched(_wl(), "jobs.0.gpus", 10_000),
        "sched_stage_str": _sched(jobs=[{"id": "j0", "start": 0, "placement": {"s0": 4},
                                         "stage_placement": {"s0": "x"}},
                                        {"id": "j1", "start": 0, "placement": {"s1": 2}}]),
        "sched_unknown_job": _sched(jobs=[{"id": "zz", "start": 0, "placement": {"s0": 4}},
                                          {"id": "j1", "start": 0, "placement": {"s1": 2}}]),
        "sched_missing_job": _sched(jobs=[{"id": "j0", "start": 0, "placement": {"s0": 4}}]),
        "sched_dup_job": _sched(jobs=[{"id": "j0", "start": 0, "placement": {"s0": 4}},
                                      {"id": "j0", "start": 5, "placement": {"s0": 4}},
                                      {"id": "j1", "start": 0, "placement": {"s1": 2}}]),
        "sched_over": _sched(jobs=[{"id": "j0", "start": 0, "placement": {"s0": 4}},
                                   {"id": "j1", "start": 0, "placement": {"s0": 2}}]),
        "sched_unknown_server": _sched(jobs=[{"id": "j0", "start": 0, "placement": {"s9": 4}},
                                             {"id": "j1", "start": 0, "placement": {"s1": 2}}]),
        "sched_neg_start": _sched(jobs=[{"id": "j0", "start": -3, "placement": {"s0": 4}},
                                        {"id": "j1", "start": 0, "placement": {"s1": 2}}]),
        "sched_frac_start": _sched(jobs=[{"id": "j0", "start": 0.5, "placement": {"s0": 4}},
                                         {"id": "j1", "start": 0, "placement": {"s1": 2}}]),
        "sched_wrong_gpus": _sched(jobs=[{"id": "j0", "start": 0, "placement": {"s0": 3}},
                                         {"id": "j1", "start": 0, "placement": {"s1": 2}}]),
        "sched_gpus_str": _sched(jobs=[{"id": "j0", "start": 0, "placement": {"s0": "4"}},
                                       {"id": "j1", "start": 0, "placement": {"s1": 2}}]),
        "sched_no_jobs": {"format": "optsched/schedule@1"},
        "sched_typo": _sched(jobz=[]),
        "sched_fmt": _sched(format="optsched/rar-ddls@1"),
        "sched_nan_start": _sched(jobs=[{"id": "j0", "start": float("nan"), "placement": {"s0": 4}},
                                        {"id": "j1", "start": 0, "placement": {"s1": 2}}]),
        "sched_over_done": _sched(jobs=[{"id": "j0", "start": 0, "completion": 50, "placement": {"s0": 4}},
                                        {"id": "j1", "start": 0, "completion": 40, "placement": {"s0": 2}}]),
        "nofmt": {"a": 1}, "unkfmt": {"format": "optsched/nope@1"}, "fmt_int": {"format": 3},
        "arr": [], "null": None, "str": "hello",
    }
    paths = {}
    for name, data in files.items():
        p = root / f"{name}.json"
        p.write_text(json.dumps(data))
        paths[name] = str(p)
    raw = {"bin": bytes(range(256)), "latin": "café, résumé".encode("latin-1"), "empty": b"",
           "notjson": b"hello world", "trunc": b'{"format": "optsched/rar-ddls@1", "jobs": [',
           "deep": b"[" * 100_000 + b"]" * 100_000, "bom": b"\xef\xbb\xbf" + json.dumps(_rar()).encode(),
           "hdr_csv": b"id,arrival_s,gpus,iterations,iteration_time_s\n",
           "bad_csv": b"id,arrival_s,gpus,iterations,iteration_time_s,colour\na,0,1,10,1.0,red\n",
           "csv_gpus": b"id,arrival_s,gpus,iterations,iteration_time_s\na,0,x,10,1.0\n",
           "ok_csv": b"id,arrival_s,gpus,iterations,iteration_time_s\na,0,1,10,1.0\nb,5,2,20,1.0\n",
           "pollux_like": b"name,time,application,num_replicas,batch_size\nj,0,cifar10,2,64\n",
           "pollux_bad_app": b"name,time,application,num_replicas,batch_size\nj,0,minecraft,2,64\n",
           "philly_bad_row": b"timestamp,duration,num_gpus\n2017-10-03 10:00:00,-5,1\n",
           "exist_file": b"keep me\n",
           "exist_png": b"\x89PNG\r\n\x1a\n an existing picture that a failed plot must not replace",
           "rar_bigint": json.dumps(_rar()).replace('"horizon": 60', '"horizon": 1' + "0" * 5000).encode(),
           "not_policy_npz": b"this is not a numpy archive",
           "nomodel_zip": _zip_without_model()}
    for name, data in raw.items():
        suffix = ".csv" if name.endswith("csv") or name.startswith(("pollux_", "philly_")) else \
            "." + name.rsplit("_", 1)[1] if name.endswith(("_png", "_npz", "_zip")) else ".json"
        p = root / f"{name}{suffix}"
        p.write_bytes(data)
        paths[name] = str(p)
    for link, target in (("rar_link", "rar"), ("png_link", "exist_png")):  # links to inputs and to outputs
        lp = root / f"{link}{Path(paths[target]).suffix}"
        if not lp.is_symlink():
            if lp.exists():
                lp.unlink()  # a command replaced the link by a file
            lp.symlink_to(paths[target])
        paths[link] = str(lp)
    big = root / "big.json"  # a RAR-DDLS instance whose exact solve takes far longer than the signal cases wait
    if not big.exists():
        import optsched

        optsched.save(optsched.generate("rar", jobs=12, servers=3, seed=1), big)
    paths["big"] = str(big)
    # the same for total JCT (branch and bound) and placement (a 48-replica partition, CP-SAT, CBC and HiGHS)
    big_tjct, big_pjob, big_plc = root / "big_tjct.json", root / "big_pjob.json", root / "big_plc.json"
    if not big_tjct.exists():
        import optsched
        from optsched.generators.total_jct import random_total_jct_instance

        optsched.save(random_total_jct_instance(16, 0), big_tjct)
    pjob = _big_pjob()
    big_pjob.write_text(json.dumps(pjob))
    pjob.pop("format")
    free = dict(part.split("=") for part in BIG_FREE.split(","))
    big_plc.write_text(json.dumps({"format": "optsched/placement@1", "free": {s: int(n) for s, n in free.items()},
                                   "job": pjob}))
    paths.update(big_tjct=str(big_tjct), big_pjob=str(big_pjob), big_plc=str(big_plc))
    d = root / "a_dir"
    d.mkdir(exist_ok=True)
    paths["dir"] = str(d)
    paths["missing"] = str(root / "no_such_file.json")
    paths["missing_dir_out"] = str(root / "no_such_dir" / "deeper" / "x.json")
    return paths


# (name, argv, expected exit code); argv items may hold {fixture} and {out}
CASES: list[tuple[str, list[str], int]] = []


def case(name: str, argv: str, code: int = INPUT) -> None:
    CASES.append((name, argv.split(), code))


# -- files any command reads: solve and evaluate see every broken file --------------------------------------------
for f in ("bin", "latin", "empty", "notjson", "trunc", "deep", "nofmt", "unkfmt", "fmt_int", "arr", "null", "str",
          "dir", "missing", "hdr_csv", "bom"):
    case(f"solve-{f}", f"solve {{{f}}}")
    case(f"evaluate-instance-{f}", f"evaluate {{{f}}} {{sched}}")
    case(f"evaluate-schedule-{f}", f"evaluate {{rar}} {{{f}}}")
for f in ("rar_lamda", "rar_gpus0", "rar_gpus_str", "rar_gpus_big", "rar_iter_float", "rar_no_jobs", "rar_dup",
          "rar_no_horizon", "rar_xi", "rar_nan", "rar_servers_obj", "rar_dup_server", "rar_slow", "rar_bool",
          "tjct_neg", "tjct_shape", "tjct_release", "tjct_typo", "plc_big", "plc_small", "plc_free_str"):
    case(f"solve-{f}", f"solve {{{f}}}")
# files that are not offline instances
for f in ("pjob", "wl", "sched", "pjob_k0", "wl_gpus0"):
    case(f"solve-not-instance-{f}", f"solve {{{f}}}")
    case(f"evaluate-not-instance-{f}", f"evaluate {{{f}}} {{sched}}")
# schedules that do not fit their instance
for f in ("sched_stage_str", "sched_unknown_job", "sched_missing_job", "sched_dup_job", "sched_over",
          "sched_unknown_server", "sched_neg_start", "sched_frac_start", "sched_wrong_gpus", "sched_gpus_str",
          "sched_no_jobs", "sched_typo", "sched_fmt"):
    case(f"evaluate-{f}", f"evaluate {{rar}} {{{f}}}")
case("evaluate-sched-of-other-problem", "evaluate {tjct} {sched}")
case("evaluate-too-few-args", "evaluate {rar}")

# -- solve's own arguments -----------------------------------------------------------------------------------------
case("solve-no-instance", "solve")
case("solve-unknown-algorithm", "solve {rar} -a nope")
case("solve-wrong-problem-algorithm", "solve {rar} -a total-jct-cpsat")
case("solve-placement-algorithm-on-rar", "solve {rar} -a heavy-edge")
for v in ("0", "-1", "nan", "inf", "abc", "1e400"):
    case(f"solve-time-limit-{v}", f"solve {{rar}} -a exact --time-limit {v}")
case("solve-time-limit-on-heuristic", "solve {rar} -a sjf-bco --time-limit 5")
for v in ("-1", "x", "1.5", "99999999999999999999"):
    case(f"solve-seed-{v}", f"solve {{rar}} --seed {v}")
case("solve-out-is-dir", "solve {rar} -o {dir}")
case("solve-out-exists-as-dir-plots", "solve {rar} -o {dir}/")
case("solve-deterministic-and-time", "solve {rar} -a exact --time-limit 5 --deterministic-limit 1")
case("solve-deterministic-0", "solve {rar} -a exact --deterministic-limit 0")
case("solve-deterministic-on-heuristic", "solve {rar} -a ff --deterministic-limit 1")
case("solve-ok-to-stdout", "solve {rar} -a ff -o -", 0)
case("solve-ok-missing-parent", "solve {rar} -a ff -o {out}/deeper/s.json", 0)

# -- generate ------------------------------------------------------------------------------------------------------
case("generate-no-kind", "generate")
case("generate-unknown-kind", "generate nope -o {out}")
case("generate-rar-no-output", "generate rar --jobs 3")
for flag, v in (("--jobs", "0"), ("--jobs", "-3"), ("--jobs", "x"), ("--jobs", "1000000000"), ("--servers", "0"),
                ("--servers", "1000000000"), ("--horizon", "0"), ("--horizon", "-5"), ("--seed", "-1"),
                ("--seed", "abc"), ("--preset", "nope")):
    case(f"generate-rar{flag}-{v}", f"generate rar {flag} {v} -o {{out}}")
case("generate-rar-out-is-dir", "generate rar --jobs 3 -o {dir}")
for flag, v in (("--jobs", "0"), ("--jobs", "100000"), ("--servers", "0"), ("--gpus-per-server", "0"),
                ("--gpus-per-server", "1"), ("--time-unit", "0"), ("--time-unit", "nan"), ("--nic-gbps", "-1"),
                ("--seed", "-1")):
    case(f"generate-total-jct{flag}-{v}", f"generate total-jct {flag} {v} -o {{out}}")
for flag, v in (("--job", "Nope:1gpu"), ("--job", "VGG19:nope"), ("--servers", "0"), ("--servers", "1000000000"),
                ("--gpus-per-server", "0"), ("--job GPT-175B:pp3x4 --gpus-per-server", "2"), ("--seed", "-4"),
                ("--nic-gbps", "0"),
                ("--intra-gbs", "inf")):
    case(f"generate-placement{flag}-{v}", f"generate placement {flag} {v} -o {{out}}")
case("generate-ok-stdout", "generate rar --jobs 3 -o -", 0)

# -- place ---------------------------------------------------------------------------------------------------------
case("place-no-job", "place --free s0=8")
case("place-no-free", "place model:VGG19:1gpu")
for v in ("s0", "s0=", "=3", "s0=x", "s0=-1", "s0=٣", "s0=3,s0=4", "s0=100", "s0=8,,s1=2", "s0=0"):
    case(f"place-free-{v}", f"place model:VGG19:dp4 --free {v}")
case("place-unknown-model", "place model:Nope --free s0=8")
case("place-unknown-config", "place model:VGG19:nope --free s0=8")
case("place-not-enough", "place model:VGG19:dp4 --free s0=2")
case("place-file-bin", "place {bin} --free s0=8")
case("place-file-rar", "place {rar} --free s0=8")
case("place-file-bad-job", "place {pjob_k0} --free s0=8")
case("place-file-bad-allreduce", "place {pjob_ar} --free s0=8")
case("place-file-neg", "place {pjob_neg} --free s0=8")
case("place-missing", "place {missing} --free s0=8")
for v in ("0", "-1", "nan"):
    case(f"place-time-limit-{v}", f"place model:VGG19:dp4 --free s0=8 -a exact-time --time-limit {v}")
case("place-time-limit-heuristic", "place model:VGG19:dp4 --free s0=8 --time-limit 3")
case("place-form-heuristic", "place model:VGG19:dp4 --free s0=8 --form mapping")
case("place-solver-heuristic", "place model:VGG19:dp4 --free s0=8 --solver cbc")
for flag, v in (("--gpus-per-server", "0"), ("--gpus-per-server", "x"), ("--nic-gbps", "0"), ("--nic-gbps", "nan"),
                ("--intra-gbs", "-3"), ("--seed", "-1"), ("-a", "nope"), ("--select", "middle")):
    case(f"place{flag}-{v}", f"place model:VGG19:dp4 --free s0=8 {flag} {v}")
case("place-job-id-missing", "place {pjob} --free s0=8 --job-id zz")
case("place-ok", "place model:VGG19:dp4 --free s0=3,s1=2", 0)

# -- simulate ------------------------------------------------------------------------------------------------------
SIM = "--no-progress --quiet"
case("simulate-no-workload", f"simulate {SIM}")
for f in ("bin", "latin", "empty", "notjson", "deep", "wl_gpus0", "wl_unknown", "wl_empty", "wl_neg_arrival",
          "wl_big", "hdr_csv", "bad_csv", "csv_gpus", "rar", "missing", "dir"):
    case(f"simulate-{f}", f"simulate {{{f}}} {SIM}")
for flag, v in (("--scheduler", "nope"), ("--placement", "nope"), ("--admission", "nope"), ("--admission", "accept-x"),
                ("--load", "0"), ("--load", "-1"), ("--load", "nan"), ("--round-s", "0"), ("--round-s", "inf"),
                ("--jobs", "0"), ("--jobs", "1000000000"), ("--servers", "0"), ("--servers", "1000000000"),
                ("--gpus-per-server", "0"), ("--seed", "-1"), ("--restore-s", "-1"), ("--restore-s", "inf"),
                ("--restore-s", "nan"), ("--perf", "nope"), ("--drain-h", "0"), ("--jobs-window", "5"),
                ("--jobs-window", "9:3"), ("--jobs-window", "a:b"), ("--jobs-window", "100:200"),
                ("--philly-filter", "x")):
    case(f"simulate{flag}-{v}", f"simulate {{ok_csv}} {SIM} {flag} {v}")
case("simulate-event-and-round", f"simulate {{ok_csv}} {SIM} --event --round-s 60")
case("simulate-pollux-9", f"simulate pollux:9 {SIM}")
case("simulate-pollux-x", f"simulate pollux:x {SIM}")
case("simulate-unknown-name", f"simulate nosuchworkload {SIM}")
case("simulate-plots-is-file", f"simulate {{ok_csv}} {SIM} -o {{out}} --plots {{exist_file}}")
case("simulate-out-is-dir", f"simulate {{ok_csv}} {SIM} -o {{dir}}")
case("simulate-sweep-with-output", f"simulate --sweep {{ok_csv}} {SIM} -o {{out}}")
case("simulate-sweep-with-plots", f"simulate --sweep {{ok_csv}} {SIM} --plots {{out}}")
case("simulate-sweep-loads-huge", f"simulate --sweep {{ok_csv}} {SIM} --loads 1-100000000 --out {{out}}")
case("simulate-sweep-loads-bad", f"simulate --sweep {{ok_csv}} {SIM} --loads 5-1 --out {{out}}")
case("simulate-sweep-empty-scheds", f"simulate --sweep {{ok_csv}} {SIM} --schedulers , --out {{out}}")
case("simulate-sweep-out-is-file", f"simulate --sweep {{ok_csv}} {SIM} --loads 1 --out {{exist_file}}")
case("simulate-ok", f"simulate {{ok_csv}} {SIM} --servers 1", 0)
case("simulate-ok-output", f"simulate {{ok_csv}} {SIM} --servers 1 -o {{out}}/run.json", 0)

# -- issue 14: seeds, Dask, JSON summaries, traces, batches, plot, list ------------------------------------------------
for v in ("x", "5-1", "1,1", "-3", "0-999999", "1.5", ""):
    case(f"simulate-sweep-seeds-{v or 'empty'}",
         f"simulate --sweep {{ok_csv}} {SIM} --loads 1 --out {{out}} --seeds={v}")
for v in ("nope", "tcp://host", "tcp://:8786", "http://h:1", "tcp://h:0", "tcp://h:99999"):
    case(f"simulate-sweep-dask-{v}", f"simulate --sweep {{ok_csv}} {SIM} --loads 1 --out {{out}} --dask {v}")
for v in ("0", "-2", "x"):
    case(f"simulate-sweep-workers-{v}", f"simulate --sweep {{ok_csv}} {SIM} --loads 1 --out {{out}} --workers {v}")
case("simulate-seeds-one-run", f"simulate {{ok_csv}} {SIM} --seeds 0-2")
case("simulate-dask-one-run", f"simulate {{ok_csv}} {SIM} --dask local")
case("simulate-workers-one-run", f"simulate {{ok_csv}} {SIM} --workers 2")
case("simulate-trace-is-dir", f"simulate {{ok_csv}} {SIM} --trace {{dir}}")
case("simulate-json-and-stdout", f"simulate {{ok_csv}} {SIM} --servers 1 --json -o -")
case("simulate-sweep-with-trace", f"simulate --sweep {{ok_csv}} {SIM} --loads 1 --out {{out}} --trace {{out}}.json")
case("simulate-sweep-workers-with-address",
     f"simulate --sweep {{ok_csv}} {SIM} --loads 1 --out {{out}} --dask tcp://h:8786 --workers 2")
case("simulate-pollux-like-bad-app", f"simulate {{pollux_bad_app}} {SIM}")
case("simulate-philly-like-bad-row", f"simulate {{philly_bad_row}} {SIM} --load 4")
case("simulate-ok-json", f"simulate {{ok_csv}} {SIM} --servers 1 --json", 0)
case("simulate-ok-pollux-like", f"simulate {{pollux_like}} {SIM} --servers 1", 0)
case("simulate-list", "simulate --list", 0)
case("solve-batch-no-match", "solve {out}/*.json")
case("solve-batch-with-output", "solve {rar} {tjct} -o {out}")
case("solve-batch-deterministic-0", "solve {rar} {tjct} --deterministic-limit 0")
case("solve-batch-unknown-algorithm", "solve {rar} {tjct} -a ff,nope")
case("solve-batch-algorithm-fits-none", "solve {rar} {rar_lamda} -a total-jct-greedy")
case("solve-batch-bad-file", "solve {rar} {rar_lamda} -a ff --workers 1 --no-progress")
case("solve-batch-empty-algorithms", "solve {rar} {tjct} -a ,")
case("solve-batch-table-is-dir", "solve {rar} {tjct} --table {dir}")
case("solve-batch-out-dir-is-file", "solve {rar} {tjct} --out-dir {exist_file}")
for flag, v in (("--threads", "0"), ("--workers", "0"), ("--seeds", "2-1"), ("--dask", "nowhere")):
    case(f"solve-batch{flag}-{v}", f"solve {{rar}} {{tjct}} {flag} {v}")
for flag, v in (("--seeds", "0-2"), ("--out-dir", "{out}"), ("--table", "{out}.csv"), ("--threads", "2"),
                ("--dask", "local"), ("--workers", "2")):
    case(f"solve-one{flag}", f"solve {{rar}} {flag} {v}")
case("solve-json-and-stdout", "solve {rar} -a ff --json -o -")
case("solve-ok-json", "solve {rar} -a ff --json", 0)
case("solve-ok-batch", "solve {rar} {tjct} --workers 1 --no-progress --json", 0)
case("solve-list-json", "solve --list --json", 0)
case("evaluate-json-bad-schedule", "evaluate {rar} {sched_over} --json")
case("evaluate-ok-json", "evaluate {tjct} {tjct_sched} --json", 0)
case("plot-no-output", "plot {rar} {sched}")
case("plot-both-stdout", "plot {rar} {sched} -o - --trace -")
case("plot-missing-instance", "plot {missing} {sched} -o {out}.png")
case("plot-bad-schedule", "plot {rar} {sched_over} -o {out}.png")
case("plot-schedule-other-problem", "plot {tjct} {sched} -o {out}.png")
case("plot-not-instance", "plot {wl} {sched} -o {out}.png")
case("plot-out-is-dir", "plot {rar} {sched} -o {dir}")
case("plot-trace-is-dir", "plot {rar} {sched} --trace {dir}")
for flag, v in (("--bound", "-1"), ("--bound", "nan"), ("--optimum", "x"), ("--time-unit", "0")):
    case(f"plot{flag}-{v}", f"plot {{rar}} {{sched}} -o {{out}}.png {flag} {v}")
case("plot-too-few-args", "plot {rar}")
case("list-json", "list --json", 0)
case("list-exact", "list exact", 0)

# -- issue 28: outputs that alias inputs, failed plots, pipes, /dev/full, caps, tracebacks ---------------------------
case("solve-out-is-the-instance", "solve {rar} -a ff -o {rar}")
case("solve-out-is-a-link-to-the-instance", "solve {rar_link} -a ff -o {rar}")
case("solve-out-links-to-the-instance", "solve {rar} -a ff -o {rar_link}")
case("solve-out-dev-full", "solve {rar} -a ff -o /dev/full")
case("plot-out-is-the-schedule", "plot {rar} {sched} -o {sched}")
case("plot-out-is-the-instance", "plot {rar} {sched} -o {rar}")
case("plot-trace-is-the-schedule", "plot {rar} {sched} --trace {sched}")
case("plot-out-and-trace-same-file", "plot {rar} {sched} -o {out}.x --trace {out}.x")
case("plot-over-capacity-keeps-png", "plot {rar} {sched_over} -o {exist_png}")
case("plot-over-capacity-keeps-link", "plot {rar} {sched_over} -o {png_link}")
case("plot-over-capacity-with-completions", "plot {rar} {sched_over_done} -o {out}.png")
case("plot-unknown-server", "plot {rar} {sched_unknown_server} -o {out}.png")
case("plot-unknown-server-trace", "plot {rar} {sched_unknown_server} --trace {out}.json")
case("plot-schedule-of-total-jct-on-rar", "plot {rar} {tjct_sched} -o {out}.png")
case("plot-nan-start", "plot {rar} {sched_nan_start} -o {out}.png")
case("plot-nan-start-trace", "plot {rar} {sched_nan_start} --trace {out}.json")
case("plot-out-dev-full", "plot {rar} {sched} --trace /dev/full")
case("simulate-out-is-the-workload", f"simulate {{wl}} {SIM} --servers 1 -o {{wl}}")
case("simulate-trace-is-the-workload", f"simulate {{ok_csv}} {SIM} --servers 1 --trace {{ok_csv}}")
case("solve-bigint-in-instance", "solve {rar_bigint} -a ff")
case("solve-server-of-1e9-gpus", "solve {rar_server_1e9} -a ff")
case("evaluate-server-of-1e9-gpus", "evaluate {rar_server_1e9} {sched}")
case("plot-server-of-1e9-gpus", "plot {rar_server_1e9} {sched} -o {out}.png")
case("evaluate-bigint-in-instance", "evaluate {rar_bigint} {sched}")
case("generate-deadline-lam-huge", "generate deadline --lam 1e9 -o {out}")
case("generate-deadline-window-huge", "generate deadline --window-h 1e12 -o {out}")
case("generate-total-jct-jobs-huge", "generate total-jct --jobs 10000000 -o {out}")
case("rl-evaluate-hours-huge", "rl evaluate --hours 1e6 --sets 1 --jobs 8 --baselines contention-srtf")
case("rl-evaluate-not-a-policy", "rl evaluate --policy {not_policy_npz} --sets 1 --jobs 8")
case("rl-evaluate-out-is-the-policy", "rl evaluate --policy {not_policy_npz} --sets 1 --jobs 8 -o {not_policy_npz}")
case("rl-export-zip-without-model", "rl export {nomodel_zip} -o {out}.npz")
case("rl-train-out-in-proc", "rl train --timesteps 64 --sets 1 --jobs 8 -o /proc/x.zip")
# standard output as a path, read through a pipe (the suite's runner reads stdout from a pipe): valid
case("solve-ok-dev-stdout", "solve {rar} -a ff -o /dev/stdout", 0)
case("plot-ok-dev-stdout", "plot {rar} {sched} -o /dev/stdout", 0)
case("plot-ok-trace-dev-stdout", "plot {rar} {sched} --trace /dev/stdout", 0)
case("simulate-ok-dev-stdout", f"simulate {{ok_csv}} {SIM} --servers 1 -o /dev/stdout", 0)

# cases that write to this process's own standard output by path (/dev/...) or to /dev/full run in a subprocess only
SUBPROCESS_ONLY = {name for name, argv, _ in CASES if any(a.startswith(("/dev/", "/proc/")) for a in argv)}

# (name, argv, signal, seconds before it once the solver's "...: solving" progress line is on stderr, expected exit
# code): an exact solve stopped by a signal ends within a second with the best result labelled "interrupted", and
# leaves no solver process behind (benchmarks/bad_inputs.py runs them)
SIGNAL_CASES: list[tuple[str, list[str], str, float, int]] = [
    ("solve-exact-sigint", "solve {big} -a exact --time-limit 60 -o {out}.json --progress".split(), "SIGINT", 1.0,
     130),
    ("solve-exact-sigterm", "solve {big} -a exact --time-limit 60 -o {out}.json --progress".split(), "SIGTERM", 1.0,
     143),
    ("solve-exact-sigint-deterministic",
     "solve {big} -a exact --deterministic-limit 100 -o {out}.json --progress".split(), "SIGINT", 1.0, 130),
    ("solve-total-jct-bnb-sigint",
     "solve {big_tjct} -a total-jct-bnb --deterministic-limit 1000 -o {out}.json --progress".split(), "SIGINT", 1.0,
     130),
    ("solve-total-jct-bnb-sigterm",
     "solve {big_tjct} -a total-jct-bnb --time-limit 600 -o {out}.json --progress".split(), "SIGTERM", 1.0, 143),
    ("place-exact-cut-sigint", f"place {{big_pjob}} --free {BIG_FREE} -a exact-cut --deterministic-limit 1000 "
     "--progress".split(), "SIGINT", 1.0, 130),
    ("place-exact-cut-sigterm", f"place {{big_pjob}} --free {BIG_FREE} -a exact-cut --time-limit 600 "
     "--progress".split(), "SIGTERM", 1.0, 143),
    ("place-exact-cut-cbc-sigint", f"place {{big_pjob}} --free {BIG_FREE} -a exact-cut --solver cbc --time-limit 600 "
     "--progress".split(), "SIGINT", 1.0, 130),
    ("place-exact-cut-cbc-sigterm", f"place {{big_pjob}} --free {BIG_FREE} -a exact-cut --solver cbc "
     "--time-limit 600 --progress".split(), "SIGTERM", 1.0, 143),
    ("place-exact-cut-highs-sigterm", f"place {{big_pjob}} --free {BIG_FREE} -a exact-cut --solver highs "
     "--time-limit 600 --progress".split(), "SIGTERM", 1.0, 143),
]

# -- the top level -------------------------------------------------------------------------------------------------
case("no-command", "")
case("unknown-command", "frobnicate")
case("list-unknown-section", "list nope")


def expand(argv: list[str], paths: dict[str, str], out: str) -> list[str]:
    """Replace ``{fixture}`` and ``{out}`` in every argument."""
    return [a.format(out=out, **paths) for a in argv]


def files_under(root: Path) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs} | \
           {os.path.relpath(d, root) for d, _, _ in os.walk(root)}


def snapshot(paths: dict[str, str]) -> dict[str, object]:
    """What every fixture holds (bytes, or the target of a link): a command that replaced an input changes it."""
    out: dict[str, object] = {}
    for name, p in paths.items():
        path = Path(p)
        if path.is_symlink():
            out[name] = ("link", os.readlink(path), path.resolve().read_bytes() if path.resolve().is_file() else None)
        elif path.is_file():
            out[name] = path.read_bytes()
    return out
