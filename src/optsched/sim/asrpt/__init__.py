"""A-SRPT (paper 001, Algorithm 1) and its baselines as online policies of the simulator.

Every policy here is a combined [`SchedulerPlacer`][optsched.sim.base.SchedulerPlacer] (it owns its queue and its server
selection), non-preemptive, and maps replicas to GPUs with Heavy-Edge ([`optsched.algorithms.heavy_edge`][]).
Their names, in the simulator's registry ([`optsched.sim.registry`][]; ``simulate(..., scheduler=NAME)``,
``optsched simulate --scheduler NAME``; ``scheduler_names("a-srpt")`` lists them):

==================  ==========================================================================================
``a-srpt``          Alg. 1: virtual single machine (preemptive SRPT on p~_i = (g_i/G) n~_i alpha~_i^min),
                    strict FIFO pending queue in virtual-completion order, COMM_HEAVY test, delay window
                    tau p~_i with early start on improvement, SelectMost / SelectLeast, Heavy-Edge
``a-srpt-perfect``  the same with n~_i = n_i (true iterations)
``spjf``            shortest predicted job (n~_i alpha~_i^min) first, strict order (MLaaS)
``spwf``            shortest predicted workload (g_i n~_i alpha~_i^min) first, strict order (Tiresias)
``wcs-duration``    work-conserving by predicted duration: start every job that fits, in that order
``wcs-workload``    work-conserving by predicted workload
``wcs-subtime``     work-conserving by submission time
==================  ==========================================================================================

Modules: [`.predicting`][optsched.sim.asrpt.predicting] (server selection, the alpha~_i^min cache, Heavy-Edge mapping,
the predicting base
policy), [`.algorithm`][optsched.sim.asrpt.algorithm] (A-SRPT), [`.baselines`][optsched.sim.asrpt.baselines] (SPJF,
SPWF, WCS-*), [`.offline`][optsched.sim.asrpt.offline] ([`run_policy`][optsched.sim.asrpt.offline.run_policy],
[`run_asrpt`][optsched.sim.asrpt.offline.run_asrpt]: tiny instances, the exact-optimum comparison). Every public name is
importable from here.

Performance model: use ``perf="mixed"`` ([`optsched.perf.mixed.MixedPerf`][], eq. 7) so that the engine's
iteration times are the ones the policy reasons with; the policies take their network from it when given.

Predictions [R10]: ``predictor="workload"`` (default) uses each job's ``predicted_iterations`` (absent -> 0,
an unseen job); ``"perfect"`` the true iterations; a fitted [`optsched.predict.IterationPredictor`][] is
asked once per admission batch, for the (group, user) pairs it has not answered yet.

```pycon
>>> from optsched.models import catalogue_job
>>> jobs = [("a", 0.0, catalogue_job("VGG19:dp4"), 1000, 1000),      # (id, release, spec, n, n~)
...         ("b", 0.0, catalogue_job("VGG19:1gpu"), 100, 100)]
>>> run = run_asrpt(jobs, (1, 4))
>>> run.start_order(), run.by_id("first_start_s")["a"] > run.by_id("completion_s")["b"]   # b first; a waits
(('b', 'a'), True)

```
"""

from __future__ import annotations

from .algorithm import ASRPT, COMM_HEAVY, DEFAULT_TAU, ASRPTPerfect
from .baselines import SPJF, SPWF, OrderedPolicy, WCSDuration, WCSSubTime, WCSWorkload
from .offline import offline_workload, run_asrpt, run_policy
from .predicting import AlphaMinCache, HeavyEdgeMapper, PredictingPolicy, select_servers

__all__ = ["ASRPT", "ASRPTPerfect", "AlphaMinCache", "COMM_HEAVY", "DEFAULT_TAU", "HeavyEdgeMapper", "OrderedPolicy",
           "PredictingPolicy", "SPJF", "SPWF", "WCSDuration", "WCSSubTime",
           "WCSWorkload", "offline_workload", "run_asrpt", "run_policy", "select_servers"]
