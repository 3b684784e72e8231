"""The performance-model interface: per-iteration time of a job under a placement (and its co-located jobs).

A model answers two questions:

* [`PerfModel.alone_time_s`][optsched.perf.base.PerfModel.alone_time_s]: seconds per iteration of ``job`` on
  ``placement`` with no co-located job
  (the simulator's lower bound "time alone on its placement");
* [`PerfModel.iteration_times_s`][optsched.perf.base.PerfModel.iteration_times_s]: seconds per iteration of every
  running job, given all their placements
  (the co-location a contention model needs). The default calls ``alone_time_s`` per job.

``colocation_aware`` tells a caller whether a change of the running set can change the time of a job that did
not move; if False the simulator computes a job's rate once per launch (the fast path), if True it recomputes
every running job's rate whenever a job starts, stops or moves.

Models name their inputs by the small protocols below, not by the simulator's classes, so that the offline
evaluators and the simulator ([`optsched.sim`][], whose ``Job``, ``Placement`` and ``ClusterState`` satisfy
them) share one model of each paper:

* [`JobLike`][optsched.perf.base.JobLike]: ``id``, ``gpus`` (GPUs *requested*), ``iteration_time_s`` (profiled, alone,
  consolidated),
  ``spec`` (the paper's job object or None) and ``model`` (a model name, or "");
* [`PlacementLike`][optsched.perf.base.PlacementLike]: ``servers`` (server indices), ``counts`` (GPUs *held* on each)
  and ``stages`` (per
  server, the GPUs of each pipeline stage, or None);
* [`RunningJobLike`][optsched.perf.base.RunningJobLike]: a [`JobLike`][optsched.perf.base.JobLike] with its current
  ``placement``;
* [`ColocationLike`][optsched.perf.base.ColocationLike]: ``colocated(placement, exclude)``, the ids of the jobs sharing
  a server with it.

The GPUs a job holds are ``sum(placement.counts)``; they equal ``job.gpus`` except under an elastic launch.

Models: [`optsched.perf.constant`][] (profiled constant time with a cross-server penalty, Blox),
[`optsched.perf.rar_continuous`][] (paper 000's contention model in seconds), [`optsched.perf.measured`][]
(DeepShare's measured contention table, paper 004), [`optsched.perf.mixed`][] (paper 001's eq. 7 on the
per-stage GPU counts of ``placement.stages``).

```pycon
>>> from dataclasses import dataclass
>>> @dataclass
... class J:                      # any object with these attributes is a job to a model
...     id: str; gpus: int; iteration_time_s: float; spec: object = None; model: str = ""
>>> @dataclass
... class P:
...     servers: tuple; counts: tuple; stages: object = None
>>> class Half(PerfModel):
...     def alone_time_s(self, job, placement):
...         return job.iteration_time_s / 2
>>> Half().alone_time_s(J("a", 1, 1.0), P((0,), (1,)))
0.5

```
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence


class PlacementLike(Protocol):
    """Where a job runs: server indices, GPUs held on each, optionally GPUs per pipeline stage per server."""

    @property
    def servers(self) -> tuple[int, ...]: ...

    @property
    def counts(self) -> tuple[int, ...]: ...

    @property
    def stages(self) -> Mapping[int, tuple[int, ...]] | None: ...


class JobLike(Protocol):
    """What a model may read of a job: its id, GPUs requested, profiled iteration time, spec and model name."""

    @property
    def id(self) -> str: ...

    @property
    def gpus(self) -> int: ...

    @property
    def iteration_time_s(self) -> float: ...

    @property
    def spec(self) -> Any: ...

    @property
    def model(self) -> str: ...


class RunningJobLike(JobLike, Protocol):
    """A job with its current placement."""

    @property
    def placement(self) -> PlacementLike: ...


class ColocationLike(Protocol):
    """Who shares servers with whom (the simulator's ``ClusterState`` is one)."""

    def colocated(self, placement: PlacementLike, exclude: str | None = None) -> set[str]: ...


def held_gpus(placement: PlacementLike) -> int:
    """GPUs a placement holds.

    ```pycon
    >>> from types import SimpleNamespace as NS
    >>> held_gpus(NS(servers=(0, 3), counts=(2, 1), stages=None))
    3

    ```
    """
    return sum(placement.counts)


class PerfModel:
    """Base class: subclasses implement [`alone_time_s`][optsched.perf.base.PerfModel.alone_time_s] and, if co-location
    matters,
    [`iteration_times_s`][optsched.perf.base.PerfModel.iteration_times_s] with ``colocation_aware = True``."""

    colocation_aware: bool = False
    name: str = "perf"

    def alone_time_s(self, job: JobLike, placement: PlacementLike) -> float:
        raise NotImplementedError

    def iteration_times_s(self, running: Sequence[RunningJobLike], cluster: ColocationLike) -> Mapping[str, float]:
        """Seconds per iteration of each running job (``job.placement`` is set), keyed by job id."""
        return {j.id: self.alone_time_s(j, j.placement) for j in running}

    def describe(self) -> dict:
        return {"name": self.name}


__all__ = ["ColocationLike", "JobLike", "PerfModel", "PlacementLike", "RunningJobLike", "held_gpus"]
