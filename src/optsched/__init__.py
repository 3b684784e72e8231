"""optsched: exact and approximation algorithms for scheduling distributed deep-learning jobs on GPU clusters.

>>> import optsched
>>> inst = optsched.generate.tiny_rar_example()
>>> res = optsched.solve(inst, algorithm="sjf-bco")
>>> optsched.evaluate(inst, res.schedule).makespan == res.objective
True

The public API is re-exported here; heavy modules (solvers, simulator) are imported on first use.
"""

from __future__ import annotations

import importlib

from . import generate
from .cluster import Cluster, Server
from .errors import InstanceError, OptschedError, ScheduleError, SolverError
from .evaluate import evaluate  # eager, so that ``optsched.evaluate`` is the function, not the module
from .io import load, load_schedule, save, save_schedule
from .problems.rar import RarInstance, RarJob
from .registry import algorithms, solve
from .result import Result, Schedule, ScheduledJob, SolveStatus

__version__ = "0.1.0"

# name -> module, imported on first attribute access (one line per name: later modules add theirs here)
_LAZY = {
    "bounds": "optsched.bounds",
    "predict": "optsched.predict",
    "place": "optsched.placement",
    "PipelineJob": "optsched.problems.pipeline",
    "simulate": "optsched.sim",
}


def __getattr__(name: str):
    if name in _LAZY:
        module = importlib.import_module(_LAZY[name])
        value = module if module.__name__.endswith("." + name) else getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'optsched' has no attribute {name!r}")


__all__ = [
    "Cluster", "InstanceError", "OptschedError", "RarInstance", "RarJob", "Result", "Schedule",
    "ScheduleError", "ScheduledJob", "Server", "SolveStatus", "SolverError", "algorithms", "evaluate",
    "generate", "load", "load_schedule", "save", "save_schedule", "solve", *_LAZY,
]
