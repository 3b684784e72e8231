"""The machinery A-SRPT and its baselines share (paper 001): server selection, the alpha~_i^min cache,
Heavy-Edge mapping onto selected servers, and the predicting base policy.

* [`select_servers`][optsched.sim.asrpt.predicting.select_servers]: SelectMost / SelectLeast (Alg. 1 lines 9 and 27).
* [`AlphaMinCache`][optsched.sim.asrpt.predicting.AlphaMinCache]: alpha~_i^min (Heavy-Edge on the fewest-servers layout,
  [`optsched.algorithms.heavy_edge.alpha_tilde_min`][]) per configuration; it lives here, not in the
  performance model, because only these policies use it.
* [`HeavyEdgeMapper`][optsched.sim.asrpt.predicting.HeavyEdgeMapper]: Heavy-Edge on the servers a policy picked, cached
  per (structure, GPUs per server).
* [`PredictingPolicy`][optsched.sim.asrpt.predicting.PredictingPolicy]: predictions n~_i, alpha~_i^min and alpha_i^max
  per job, the network (from
  [`MixedPerf`][optsched.perf.mixed.MixedPerf] when the run uses it), and the launch bookkeeping.

```pycon
>>> from optsched.models import catalogue_job
>>> from optsched.perf.pipeline import Network, alpha_max
>>> c = AlphaMinCache(Network.paper_simulation())
>>> s = catalogue_job("GPT-175B:pp3x4")
>>> alpha_max(s, c.network) >= c.alpha_tilde_min_ms(s) > 0
True

```
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...algorithms.heavy_edge import alpha_tilde_min, heavy_edge
from ...errors import InstanceError
from ...perf.mixed import MixedPerf, SpecCache
from ...perf.pipeline import Network
from ...problems.pipeline import PipelineJob
from ..base import Decision, DecisionBuilder, SchedulerPlacer
from ..fitting import fragments_first, most_free_first
from ..state import Job, Placement, SimView

__all__ = ["AlphaMinCache", "HeavyEdgeMapper", "PredictingPolicy", "Predictions", "select_servers"]


# -- server selection and mapping ------------------------------------------------------------------------------
def select_servers(free: np.ndarray, g: int, most: bool) -> list[tuple[int, int]]:
    """SelectMost (``most=True``, Alg. 1 line 9) or SelectLeast (line 27): visit the servers with free GPUs by
    free count descending (ascending), ties by server index, and take min(free, still needed) from each.

    ```pycon
    >>> select_servers(np.array([3, 8, 1, 0]), 10, True), select_servers(np.array([3, 8, 1, 0]), 5, False)
    ([(1, 8), (0, 2)], [(2, 1), (0, 3), (1, 1)])

    ```
    """
    got = (most_free_first if most else fragments_first)(free, g)
    if got is not None:
        return list(got.items())
    raise InstanceError(f"needs {g} GPUs but only {int(free.sum())} are free", field="gpus")


class AlphaMinCache:
    """alpha~_i^min in ms (Heavy-Edge on the fewest-servers layout, evaluated by eq. 7) on one network, computed
    once per spec structure (a trace maps its jobs onto a handful of configurations).

    ```pycon
    >>> from optsched.models import catalogue_job
    >>> c = AlphaMinCache(Network.from_gbps(4, 10.0, 300.0))
    >>> c.alpha_tilde_min_ms(catalogue_job("VGG19:dp4")) == c.alpha_tilde_min_ms(catalogue_job("VGG19:dp4"))
    True

    ```
    """

    def __init__(self, network: Network, seed: int = 0):
        self.network, self.seed = network, seed
        self._atmin: dict = {}

    def alpha_tilde_min_ms(self, spec: PipelineJob) -> float:
        k = SpecCache.key(spec)
        v = self._atmin.get(k)
        if v is None:
            v = self._atmin[k] = alpha_tilde_min(spec, self.network, seed=self.seed)
        return v


class HeavyEdgeMapper:
    """Heavy-Edge on selected servers, cached by (spec structure, GPUs taken per position, seed)."""

    def __init__(self, cache: SpecCache, seed: int):
        self.cache, self.seed = cache, seed
        self._he: dict = {}

    def place(self, job: Job, picks: list[tuple[int, int]]) -> tuple[Placement, float]:
        """The placement (with per-stage counts) and its per-iteration time in seconds."""
        spec = job.spec
        mapping = dict(picks)
        if not isinstance(spec, PipelineJob):
            return Placement.of(mapping), job.iteration_time_s
        cols: list[tuple[int, ...]] | None
        if spec.n_stages == 1:
            cols = [(n,) for _, n in picks]
        else:
            takes = tuple(n for _, n in picks)
            key = (SpecCache.key(spec), takes)
            cols = self._he.get(key)
            if cols is None:
                res = heavy_edge(spec, [(str(i), n) for i, n in enumerate(takes)], rng=self.seed)
                cols = self._he[key] = [tuple(res.counts[str(i)]) for i in range(len(takes))]
        stages = {s: c for (s, _), c in zip(picks, cols)}
        return Placement.of(mapping, stages=stages), self.cache.alpha_ms(spec, cols) / 1000.0


# -- what A-SRPT and its baselines know of each job --------------------------------------------------------------
class Predictions:
    """Predictions n~_i, alpha~_i^min and alpha_i^max per job, the network (from
    [`MixedPerf`][optsched.perf.mixed.MixedPerf] when the run uses it) and the Heavy-Edge mapper: the state A-SRPT and
    its baselines share, kept in the policy that owns it
    ([`_init_predictions`][optsched.sim.asrpt.predicting.Predictions._init_predictions] in its ``__init__``;
    [`on_admit`][optsched.sim.asrpt.predicting.Predictions.on_admit] on every admission; per-job notes in ``records``,
    columns of the run's per-job table)."""

    def _init_predictions(self, predictor: Any, seed: int | None, nic_gbps: float | None,
                          intra_gbs: float | None) -> None:
        if isinstance(predictor, str) and predictor not in ("workload", "perfect"):
            hint = (" (fit optsched.predict.make_predictor(...) on a history and pass the object)"
                    if predictor in ("random-forest", "mean", "median") else "")
            raise InstanceError(f"must be 'workload', 'perfect' or a fitted IterationPredictor, got {predictor!r}"
                                + hint, field="predictor")
        if not isinstance(predictor, str) and not hasattr(predictor, "predict"):
            raise InstanceError(f"must be 'workload', 'perfect' or a fitted IterationPredictor, got "
                                f"{type(predictor).__name__}", field="predictor")
        self.predictor = predictor
        self.seed = 0 if seed is None else int(seed)
        self.nic_gbps, self.intra_gbs = nic_gbps, intra_gbs
        self._ready = False
        self._pred_cache: dict = {}
        self.pred: dict[str, float] = {}      # job id -> n~_i
        self.atmin_s: dict[str, float] = {}   # job id -> alpha~_i^min (s)
        self.amax_s: dict[str, float] = {}    # job id -> alpha_i^max (s)
        self.start_order: list[str] = []
        # what the policy notes about each job (job id -> {field: value}); the run's per-job table shows it
        self.records: dict[str, dict[str, Any]] = {}

    def _note(self, job: Job, **fields: Any) -> None:
        self.records.setdefault(job.id, {}).update(fields)

    # setup on first contact with a view: the network comes from the perf model when it is paper 001's
    def _setup(self, view: SimView) -> None:
        if self._ready:
            return
        self._ready = True
        caps = view.cluster.capacity
        self.G = int(caps.sum())
        g = int(caps.max())
        perf = view.perf
        if isinstance(perf, MixedPerf) and self.nic_gbps is None and self.intra_gbs is None:
            net = perf.network
            if net.gpus_per_server != g:
                raise InstanceError(f"perf model has g = {net.gpus_per_server} GPUs per server, the cluster {g}",
                                    field="perf.gpus_per_server")
            self.cache = perf.cache
        else:
            net = Network.from_gbps(g, 10.0 if self.nic_gbps is None else float(self.nic_gbps),
                                    300.0 if self.intra_gbs is None else float(self.intra_gbs))
            self.cache = SpecCache(net)
        self.network = net
        self.atmin_cache = AlphaMinCache(net)
        self.mapper = HeavyEdgeMapper(self.cache, self.seed)

    def _predict(self, jobs: Sequence[Job]) -> None:
        p = self.predictor
        if p == "workload":
            for j in jobs:
                self.pred[j.id] = float(j.predicted_iterations) if j.predicted_iterations is not None else 0.0
        elif p == "perfect":
            for j in jobs:
                self.pred[j.id] = float(j.iterations)
        else:  # a fitted IterationPredictor: one batch call for the (group, user) pairs not answered yet
            todo = sorted({(j.group, j.user) for j in jobs} - set(self._pred_cache))
            if todo:
                vals = p.predict([{"group_id": gr, "user_id": us} for gr, us in todo])
                self._pred_cache.update(zip(todo, (float(v) for v in vals)))
            for j in jobs:
                self.pred[j.id] = max(0.0, self._pred_cache[(j.group, j.user)])

    def _profile(self, jobs: Sequence[Job]) -> None:
        for j in jobs:
            spec = j.spec
            if isinstance(spec, PipelineJob):
                self.atmin_s[j.id] = self.atmin_cache.alpha_tilde_min_ms(spec) / 1000.0
                self.amax_s[j.id] = self.cache.alpha_max_ms(spec) / 1000.0
            else:  # no spec: the profiled time, and never communication-heavy
                self.atmin_s[j.id] = self.amax_s[j.id] = j.iteration_time_s
            self._note(j, predicted_iterations=self.pred[j.id])

    def predicted_duration_s(self, job: Job) -> float:
        """n~_i alpha~_i^min: the baselines' 'predicted duration' [R11]."""
        return self.pred[job.id] * self.atmin_s[job.id]

    def on_admit(self, jobs, view) -> None:
        self._setup(view)
        self._predict(jobs)
        self._profile(jobs)


# -- A-SRPT's base policy ------------------------------------------------------------------------------------
class PredictingPolicy(Predictions, SchedulerPlacer):
    """A combined policy that owns its [`Predictions`][optsched.sim.asrpt.predicting.Predictions] (A-SRPT): it follows
    an outside driver's decisions
    through [`_forget`][optsched.sim.asrpt.predicting.PredictingPolicy._forget] and
    [`_requeue`][optsched.sim.asrpt.predicting.PredictingPolicy._requeue]."""

    name = "predicting"
    family = "a-srpt"

    def __init__(self, predictor: Any = "workload", seed: int | None = 0, nic_gbps: float | None = None,
                 intra_gbs: float | None = None):
        self._init_predictions(predictor, seed, nic_gbps, intra_gbs)

    def after_apply(self, decision: Decision, view: SimView, own: bool) -> None:
        """Follow a decision of an outside driver (not the one `decide` returned): jobs it launched leave
        this policy's queues ([`_forget`][optsched.sim.asrpt.predicting.PredictingPolicy._forget]), jobs it preempted
        come back to them ([`_requeue`][optsched.sim.asrpt.predicting.PredictingPolicy._requeue])."""
        if own:
            return
        launched = {j.id for j in decision.launch}
        if launched:
            self._forget(launched)
        for j in decision.preempt:
            if j not in decision.launch:
                self._requeue(j)

    def _forget(self, ids: set[str]) -> None:
        """Drop the jobs ``ids`` (started by someone else) from the policy's queues."""

    def _requeue(self, job: Job) -> None:
        """Take back ``job`` (preempted by someone else) into the policy's queues."""

    def _launch(self, b: DecisionBuilder, job: Job, pl: Placement, alpha_s: float) -> None:
        b.launch(job, pl)
        self._note(job, alpha_s=alpha_s)
        self.start_order.append(job.id)
