"""optsched: exact and approximation algorithms for scheduling distributed deep-learning jobs on GPU clusters.

One door per task, the same for every problem (RAR-DDLS, total JCT, pipeline placement, ...):

```pycon
>>> import optsched
>>> inst = optsched.generate("rar", jobs=6, servers=2, seed=1)      # or optsched.load("file.json")
>>> res = optsched.solve(inst, algorithm="sjf-bco")                 # default: the problem's own algorithm
>>> optsched.evaluate(inst, res.schedule).objective == res.objective
True
>>> sorted(optsched.list_algorithms("rar"))
['brute-force', 'exact', 'exact-interval', 'ff', 'ls', 'rand', 'sjf-bco']

```

Online policies run in the simulator: ``optsched.simulate(workload, scheduler="las", ...)``. Heavy modules
(solvers, the simulator, pandas) are imported on first use; ``optsched.algorithms``, ``optsched.exact`` and
``optsched.sim`` are the subpackages.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .api import evaluate, from_dict, generate, load, save, solve, to_dict
from .cluster import Cluster, Server
from .errors import InstanceError, OptschedError, ScheduleError, SolverError
from .io import load_schedule, save_schedule
from .registry import get_problem, list_algorithms, problems
from .result import Result, Schedule, ScheduledJob, SolveStatus

if TYPE_CHECKING:  # what the lazy names below resolve to (redundant aliases: re-exported)
    from . import bounds as bounds
    from . import predict as predict
    from .placement import place as place
    from .problems.pipeline import PipelineJob as PipelineJob
    from .problems.placement import PlacementInstance as PlacementInstance
    from .problems.rar import RarInstance as RarInstance
    from .problems.rar import RarJob as RarJob
    from .problems.total_jct import TotalJctInstance as TotalJctInstance
    from .problems.workload import Workload as Workload
    from .problems.workload import WorkloadJob as WorkloadJob
    from .sim import simulate as simulate

__version__ = "0.1.0"

# name -> module, imported on first attribute access
_LAZY = {
    "bounds": "optsched.bounds",
    "predict": "optsched.predict",
    "place": "optsched.placement",
    "simulate": "optsched.sim",
    "RarInstance": "optsched.problems.rar",
    "RarJob": "optsched.problems.rar",
    "TotalJctInstance": "optsched.problems.total_jct",
    "PlacementInstance": "optsched.problems.placement",
    "PipelineJob": "optsched.problems.pipeline",
    "Workload": "optsched.problems.workload",
    "WorkloadJob": "optsched.problems.workload",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module = importlib.import_module(_LAZY[name])
        value = module if module.__name__.endswith("." + name) else getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'optsched' has no attribute {name!r}")


__all__ = [
    "Cluster", "InstanceError", "OptschedError", "Result", "Schedule", "ScheduleError", "ScheduledJob", "Server",
    "SolveStatus", "SolverError", "evaluate", "from_dict", "generate", "get_problem", "list_algorithms", "load",
    "load_schedule", "problems", "save", "save_schedule", "solve", "to_dict", *_LAZY,
]
