"""Compatibility alias: the workload data classes and file format moved to :mod:`optsched.problems.workload`.

Import them from ``optsched.sim`` or ``optsched.problems.workload``. This alias remains only while
``optsched.io.READERS`` / ``WRITERS`` still name ``optsched.sim.workloads``; it goes once they name the new module.

>>> from optsched.problems.workload import Workload as W
>>> Workload is W
True
"""

from __future__ import annotations

from ..problems.workload import (COLUMNS, FORMAT, REQUIRED, Workload, WorkloadJob, as_workload, read_workload,
                                 workload_from_csv_text, workload_from_dict, workload_to_csv_text, workload_to_dict,
                                 write_workload)

__all__ = ["COLUMNS", "FORMAT", "REQUIRED", "Workload", "WorkloadJob", "as_workload", "read_workload",
           "workload_from_csv_text", "workload_from_dict", "workload_to_csv_text", "workload_to_dict",
           "write_workload"]
