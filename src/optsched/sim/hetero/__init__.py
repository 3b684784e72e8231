"""Heterogeneous GPU clusters in the simulator: Gavel's allocation LPs realised round by round, the placement
helpers of typed clusters, and the ``hetero`` performance model (our throughput table per model and GPU type,
[`optsched.perf.hetero`][]).

The registry ([`optsched.sim.registry`][]) names ``gavel`` (max-min fairness, Blox's "Gavel"),
``gavel-makespan`` and the performance model ``hetero``. Rules:
``docs/algorithms/gavel.md``; the LPs: ``docs/formulations/gavel.md``.
"""

from __future__ import annotations

from ...perf.hetero import HeteroPerf
from .fairness import finish_time_fairness, time_on_types
from .gavel import OBJECTIVES, Gavel, GavelMakespan
from .lp import Allocation, equal_share_throughput, max_min_fairness, min_makespan
from .placement import bound_perf_ok, place_on_type, probe_placement

__all__ = ["OBJECTIVES", "Allocation", "Gavel", "GavelMakespan", "HeteroPerf", "bound_perf_ok",
           "equal_share_throughput", "finish_time_fairness", "max_min_fairness", "min_makespan", "place_on_type",
           "probe_placement", "time_on_types"]
