"""ElasticFlow's files (pkusys/ElasticFlow, its simulator's inputs) read as a format-2 deadline workload.

* **Throughput folder**: one CSV per model, named ``<model>.csv``; a header ``global_batch_size,1,2,4,...``
  (GPU counts) and one row per global batch size with the measured iterations per second on each count (an
  empty or ``nan`` cell: the count is not measured). Rows need not grow with the count (a model may be fastest
  on one GPU).
  [`read_throughputs`][optsched.problems.deadline.read_throughputs] returns model -> batch -> count -> it/s.
* **Trace CSV**: ``job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu,duration`` (and optionally
  ``best_effort``; other columns are ignored): ``submit_time`` and ``ddl`` in seconds, ``ddl`` an *absolute*
  deadline, ``iteration`` the work in iterations of the global ``batch_size``, ``num_gpu`` the count the user
  asked for, ``duration`` the one-GPU time (not used: the table gives it). A job is best effort when its
  ``best_effort`` cell is 1. [`read_elasticflow_trace`][optsched.problems.elasticflow.read_elasticflow_trace]
  builds the [`DeadlineWorkload`][optsched.problems.deadline.DeadlineWorkload]: each job gets its model's row at
  its batch; its GPU counts are the row's counts.

Every bad cell raises one [`InstanceError`][optsched.errors.InstanceError] naming the file, the row (1 = the
first line after the header) and the column.

```pycon
>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> (d / "tp").mkdir(); _ = (d / "tp" / "bert.csv").write_text("global_batch_size,1,2,4\\n64,2.0,3.5,3.0\\n")
>>> _ = (d / "t.csv").write_text("job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu,duration\\n"
...                              "0,10,1000,bert,400,64,2,500\\n")
>>> wl = read_elasticflow_trace(d / "t.csv", d / "tp", nodes=1, gpus_per_node=4)
>>> j = wl.jobs[0]
>>> j.id, j.arrival_s, j.deadline_s, j.throughput, j.gpus, wl.total_gpus
('0', 10.0, 400.0, ((1, 2.0), (2, 3.5), (4, 3.0)), 2, 4)
>>> _ = (d / "bad.csv").write_text("job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu\\n"
...                                "0,10,x,bert,400,64,2\\n")
>>> read_elasticflow_trace(d / "bad.csv", d / "tp")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
optsched.errors.InstanceError: ...bad.csv row 1 column iteration (job '0'): must be a number, got 'x'

```
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

from ..cluster import Cluster, Server
from ..errors import InstanceError
from .deadline import PAPER_B_INTER, PAPER_B_INTRA, DeadlineJob, DeadlineWorkload, _number, read_throughputs

# read_throughputs: re-exported from the format module, where format 2 reads a folder by reference
__all__ = ["TRACE_COLUMNS", "is_elasticflow_trace", "read_elasticflow_trace", "read_throughputs"]

#: the columns an ElasticFlow trace must have
TRACE_COLUMNS = ("job_id", "submit_time", "iteration", "model_name", "ddl", "batch_size", "num_gpu")
#: ElasticFlow's Fig. 8a cluster (``cluster_specs/n16g4.csv``): 16 nodes of 4 GPUs
EF_NODES, EF_GPUS_PER_NODE = 16, 4


def is_elasticflow_trace(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a CSV whose header has ElasticFlow's trace columns."""
    p = Path(path)
    if p.suffix.lower() != ".csv" or not p.is_file():
        return False
    try:
        with open(p, encoding="utf-8-sig", errors="replace") as fh:
            header = {h.strip() for h in fh.readline().split(",")}
    except OSError:
        return False
    return set(TRACE_COLUMNS) <= header


def read_elasticflow_trace(path: str | os.PathLike, throughputs: str | os.PathLike | dict,
                           nodes: int = EF_NODES, gpus_per_node: int = EF_GPUS_PER_NODE,
                           name: str | None = None) -> DeadlineWorkload:
    """ElasticFlow's trace CSV with its throughput folder (or a table as
    [`read_throughputs`][optsched.problems.deadline.read_throughputs] returns) on ``nodes`` x
    ``gpus_per_node`` GPUs (default its Fig. 8a cluster, 16 x 4), as a format-2 deadline workload (module
    docstring)."""
    p = Path(path)
    table = throughputs if isinstance(throughputs, dict) else read_throughputs(throughputs)
    with open(p, encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        header = [h.strip() for h in (reader.fieldnames or [])]
        missing = [c for c in TRACE_COLUMNS if c not in header]
        if missing:
            raise InstanceError(f"missing column(s) {', '.join(missing)} (ElasticFlow's trace has "
                                f"{', '.join(TRACE_COLUMNS)})", field=f"{p} row 0")
        jobs = []
        seen: set[str] = set()
        for i, raw in enumerate(reader, start=1):
            row = {(k or "").strip(): (v or "").strip() for k, v in raw.items()}
            jid = row["job_id"]
            where = f"{p} row {i}"
            if not jid:
                raise InstanceError("must not be empty", field=f"{where} column job_id")
            if jid in seen:
                raise InstanceError("duplicate job id", field=f"{where} column job_id", job=jid)
            seen.add(jid)

            def num(col: str, integer: bool = False, row=row, where=where, jid=jid) -> float:
                return _number(row.get(col), f"{where} column {col}", jid, integer)

            model = row["model_name"]
            if model not in table:
                raise InstanceError(f"no throughput table for model {model!r} (have: {', '.join(sorted(table))})",
                                    field=f"{where} column model_name", job=jid)
            batch = int(num("batch_size", integer=True))
            if batch not in table[model]:
                raise InstanceError(f"the table of {model!r} has no row for batch {batch} (rows: "
                                    f"{', '.join(str(b) for b in sorted(table[model]))})",
                                    field=f"{where} column batch_size", job=jid)
            submit, ddl, iters = num("submit_time"), num("ddl"), num("iteration")
            gpus = int(num("num_gpu", integer=True))
            be = row.get("best_effort", "") not in ("", "0")
            for col, _v, ok in (("submit_time", submit, submit >= 0), ("iteration", iters, iters > 0),
                               ("num_gpu", gpus, gpus >= 1), ("ddl", ddl, be or ddl >= submit)):
                if not ok:
                    raise InstanceError(f"out of range, got {row[col]!r}" + (" (before submit_time)"
                                                                              if col == "ddl" else ""),
                                        field=f"{where} column {col}", job=jid)
            try:
                jobs.append(DeadlineJob(jid, model, submit, deadline_at_s=None if be else ddl, best_effort=be,
                                        iterations=iters, batch=batch, gpus=gpus,
                                        throughput=tuple(table[model][batch].items())))
            except InstanceError as exc:
                raise InstanceError(exc.reason, field=f"{where} column {exc.field}", job=jid) from None
    cluster = Cluster(tuple(Server(f"n{i}", gpus_per_node) for i in range(nodes)), intra_bandwidth=PAPER_B_INTRA,
                      inter_bandwidth=PAPER_B_INTER)
    return DeadlineWorkload(cluster, tuple(jobs), p.stem if name is None else name,
                            meta={"source": "elasticflow-trace"})
