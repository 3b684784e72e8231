"""Deadline-aware policies of the simulator (paper 003, DRS) and their baselines.

Their names, in the simulator's registry ([`optsched.sim.registry`][]; ``simulate(..., scheduler=NAME)``;
``scheduler_names("deadline")`` lists them), beside the ``ring`` performance model
([`optsched.perf.ring.RingPerf`][]):

========================  ==========================================================================================
``drs``                   DRS: plan decision (section 3.1), least-slack job choice, best-fit allocation (3.2),
                          migration when more than half the nodes are migratable (3.3);
                          [`.drs`][optsched.sim.deadline.drs]
``norm``                  DRS without migration (the paper's NoRM)
``edf``                   earliest deadline first on all of the cluster's GPUs (paper 003's EDF);
                          [`.baselines`][optsched.sim.deadline.baselines]
``deadline-fifo``         arrival order on all of the cluster's GPUs (paper 003's FIFO)
``themis``                Themis simplified: finish-time-fair split of the GPUs, batches started together;
                          [`.themis`][optsched.sim.deadline.themis] (its core,
                          [`ftf_allocate`][optsched.sim.deadline.themis.ftf_allocate], serves any policy set)
``elasticflow``           ElasticFlow as its paper describes it (scheduler and admission of that name): every
                          admitted job re-planned from its remaining work at each arrival, minimum satisfactory
                          shares that change over time, leftovers to the largest gain;
                          [`.elasticflow`][optsched.sim.deadline.elasticflow]
``elasticflow-fixed``     the fixed-reservation variant (one reservation per admitted job, never re-planned);
                          [`.elasticflow_fixed`][optsched.sim.deadline.elasticflow_fixed]
``elasticflow-noadmit``   ElasticFlow's baseline: its planning with every job admitted
``edf-elastic``           ElasticFlow's EDF baseline: elastic, preemptive, re-planned at every event
``edf-admission``         ElasticFlow's EDF with admission control
``gandiva-ts``            Gandiva-style time slicing on the requested GPU counts
========================  ==========================================================================================

Every policy here chooses GPU counts (``elastic = True``) and plans with the run's performance model: the ring
model of paper 003 (``perf="ring"``, the default for a deadline workload), or any model whose time depends on
the GPU count and on one node vs several ([`.common`][optsched.sim.deadline.common]).
``optsched.simulate(deadline_workload,
scheduler=NAME)`` runs a [`DeadlineWorkload`][optsched.problems.deadline.DeadlineWorkload] under any of them (or under
the
simulator's LAS and Tiresias) and adds the deadline metrics ([`.metrics`][optsched.sim.deadline.metrics]) to the result.
The rules and every
reading of the paper: ``docs/algorithms/drs.md``.

```pycon
>>> from optsched.generators.deadline import deadline_workload
>>> from optsched.sim import simulate
>>> wl = deadline_workload(lam=2, window_h=4, seed=0)
>>> m = simulate(wl, scheduler="drs").custom["deadline"]
>>> 0 <= m["r_trace"] <= 1, m["jobs"] == len(wl)
(True, True)

```
"""

from __future__ import annotations

from .baselines import EDF, DeadlineFIFO, WholeCluster
from .drs import DRS, Choice, MigrationEvent, NoRM, migratable_nodes, migration_plan, plan_decision
from .elasticflow import (
    EDFAdmission,
    EDFElastic,
    EDFWithAdmission,
    ElasticFlow,
    ElasticFlowAdmission,
    ElasticFlowNoAdmission,
    GandivaTimeSlicing,
    RescaleOverhead,
    plan_jobs,
)
from .elasticflow_fixed import ElasticFlowFixed, ElasticFlowFixedAdmission, Reservation, reserve
from .metrics import DeadlineMetrics, deadline_metrics, met_mask, plot_utilisation, utilisation_series
from .run import request_gpus, to_workload
from .themis import ThemisFTF, ftf_allocate, rho

__all__ = ["Choice", "DRS", "DeadlineFIFO", "DeadlineMetrics", "EDF", "EDFAdmission", "EDFElastic", "EDFWithAdmission",
           "ElasticFlow", "ElasticFlowAdmission", "ElasticFlowFixed", "ElasticFlowFixedAdmission",
           "ElasticFlowNoAdmission", "GandivaTimeSlicing", "MigrationEvent", "NoRM", "RescaleOverhead", "Reservation",
           "ThemisFTF", "WholeCluster", "deadline_metrics", "ftf_allocate", "met_mask", "migratable_nodes",
           "migration_plan", "plan_decision", "plan_jobs", "plot_utilisation", "request_gpus",
           "reserve", "rho", "to_workload", "utilisation_series"]
