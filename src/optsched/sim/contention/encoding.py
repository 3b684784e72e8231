"""Paper 004's state and action encoding (digest 004, section 2), shared by the RL policies and the gym environment.

* **Type id** of a job: ``1 + 3 x model index + demand index`` over the repository's model order
  ([`MODELS`][optsched.problems.contention.MODELS]) and demands 2, 4, 8: 1..18, 0 = empty.
* **Candidates** (K = 3): the first queued job with demand 2, 4 and 8, in queue order (the repository's
  ``pick_jobs_with_multiple_demands``); the queue is FIFO by the time a job last entered it (a preempted job
  goes to the back).
* **Observation**: a ``(nodes, 2 x gpus_per_node)`` float32 array. Left half: per node, one slot per GPU holding
  the type id of the job on it (jobs in placement order, consecutive slots). Right half: each candidate's type
  id at ``[servers - 1, GPUs per server - 1]`` for each of its legal splits (single-node splits included, as the
  repository shows them, although no action takes them).
* **Actions**: ``Discrete(C(nodes, 2) + 2)``: the node pairs in lexicographic order, then all nodes, then
  "schedule nothing". The job is implicit: the first candidate (demand 2, 4, 8) whose split over that many
  nodes is legal and fits. An action that resolves to no job is invalid;
  [`action_mask`][optsched.sim.contention.encoding.action_mask] marks exactly the
  valid ones (and "nothing", always valid).

```pycon
>>> from types import SimpleNamespace as NS
>>> a = NS(id="a", model="MoE", gpus=4); b = NS(id="b", model="FSDP", gpus=2)
>>> board = Board(np.array([8, 8, 8, 8]), 8, [], [a, b])
>>> [c.id if c else None for c in candidates(board.queue)]
['b', 'a', None]
>>> node_actions(4)[:2], node_actions(4)[-1], n_actions(4)
([(0, 1), (0, 2)], (0, 1, 2, 3), 8)
>>> action_mask(board).astype(int).tolist()
[1, 1, 1, 1, 1, 1, 1, 1]
>>> job, pl = resolve(6, board)      # all four nodes: only the 4-GPU job splits as 4 x 1
>>> job.id, pl.as_dict()
('a', {0: 1, 1: 1, 2: 1, 3: 1})

```
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ...errors import InstanceError
from ...problems.contention import DEMANDS, LEGAL_SPLITS, MODELS, MULTI_SPLITS
from .. import fitting
from ..base import Decision, DecisionBuilder
from ..state import Placement

K_DEMANDS: tuple[int, ...] = DEMANDS
N_TYPES = len(MODELS) * len(DEMANDS)


def type_id(model: str, gpus: int) -> int:
    """The repository's serial number of (model, demand): 1..18.

    ```pycon
    >>> type_id("MobileNetV3", 2), type_id("MoE", 8)
    (1, 18)

    ```
    """
    try:
        return 1 + 3 * MODELS.index(model) + DEMANDS.index(gpus)
    except ValueError:
        raise InstanceError(f"the observation knows models {', '.join(MODELS)} with 2, 4 or 8 GPUs, got "
                            f"{model!r} with {gpus}", field="model") from None


def node_actions(nodes: int) -> list[tuple[int, ...]]:
    """The node sets of the actions: every pair, then all nodes (``nothing`` is the last action, not listed)."""
    return [*itertools.combinations(range(nodes), 2), tuple(range(nodes))]


def n_actions(nodes: int) -> int:
    return len(node_actions(nodes)) + 1


@dataclass
class Board:
    """The cluster as one round's decision sees it: free GPUs per node, the jobs placed (running ones, then this
    round's launches, in placement order) and the queue (FIFO). Built from a decision point
    ([`round_board`][optsched.sim.contention.policies.round_board]) it writes its launches into that point's
    [`DecisionBuilder`][optsched.sim.base.DecisionBuilder] (``builder``, which checks each one;
    [`decision`][optsched.sim.contention.encoding.Board.decision])."""

    free: np.ndarray
    gpus_per_node: int
    placed: list[tuple[Any, Placement]] = field(default_factory=list)
    queue: list[Any] = field(default_factory=list)
    builder: DecisionBuilder | None = None

    def __post_init__(self) -> None:
        # with a builder, the board's free GPUs are the builder's (one array, updated by its checked calls)
        self.free = self.builder.free if self.builder is not None else np.asarray(self.free, dtype=np.int64).copy()

    @property
    def nodes(self) -> int:
        return len(self.free)

    def place(self, job: Any, placement: Placement) -> None:
        """Put ``job`` (queued) on ``placement`` (which must fit)."""
        if self.builder is not None:
            self.builder.launch(job, placement)
        else:
            s, c = list(placement.servers), np.asarray(placement.counts)
            if (self.free[s] < c).any():
                raise InstanceError(f"placement {placement.as_dict()} does not fit the free GPUs "
                                    f"{self.free.tolist()}", field="placement", job=job.id)
            self.free[s] -= c
        self.placed.append((job, placement))
        self.queue.remove(job)

    def decision(self) -> Decision:
        """The round's decision: the builder's preemptions and this board's launches."""
        if self.builder is None:
            raise ValueError("a board built without a decision point has no decision")
        return self.builder.build()


def candidates(queue: Sequence[Any]) -> list[Any]:
    """The first queued job of each demand 2, 4, 8 (None where the queue has none)."""
    out: dict[int, Any] = {}
    for j in queue:
        if j.gpus in K_DEMANDS and j.gpus not in out and j.model in MODELS:
            out[j.gpus] = j
            if len(out) == len(K_DEMANDS):
                break
    return [out.get(d) for d in K_DEMANDS]


def split_fits(gpus: int, nodes: Sequence[int], free: np.ndarray) -> Placement | None:
    """The placement of ``gpus`` GPUs evenly over ``nodes`` if that split is legal and fits, else None."""
    n = len(nodes)
    if gpus % n or (n, gpus // n) not in MULTI_SPLITS.get(gpus, ()):
        return None
    per = gpus // n
    if all(free[s] >= per for s in nodes):
        return Placement(tuple(sorted(nodes)), (per,) * n)
    return None


def resolve(action: int, board: Board, cands: Sequence[Any] | None = None) -> tuple[Any, Placement] | None:
    """(job, placement) of ``action``, or None if it is "nothing" or invalid."""
    acts = node_actions(board.nodes)
    if not 0 <= int(action) < len(acts):
        return None
    nodes = acts[int(action)]
    for job in (candidates(board.queue) if cands is None else cands):
        if job is not None:
            pl = split_fits(job.gpus, nodes, board.free)
            if pl is not None:
                return job, pl
    return None


def action_mask(board: Board, cands: Sequence[Any] | None = None) -> np.ndarray:
    """True for every valid action ("nothing", the last, always)."""
    cands = candidates(board.queue) if cands is None else cands
    acts = node_actions(board.nodes)
    mask = np.zeros(len(acts) + 1, dtype=bool)
    mask[-1] = True
    for a, nodes in enumerate(acts):
        mask[a] = any(j is not None and split_fits(j.gpus, nodes, board.free) is not None for j in cands)
    return mask


def observe(board: Board, cands: Sequence[Any] | None = None) -> np.ndarray:
    """The ``(nodes, 2 x gpus_per_node)`` observation (module docstring)."""
    g = board.gpus_per_node
    obs = np.zeros((board.nodes, 2 * g), dtype=np.float32)
    fill = np.zeros(board.nodes, dtype=np.int64)
    for job, pl in board.placed:
        t = type_id(job.model, job.gpus)
        for s, c in zip(pl.servers, pl.counts):
            obs[s, fill[s]:fill[s] + c] = t
            fill[s] += c
    for job in (candidates(board.queue) if cands is None else cands):
        if job is None:
            continue
        t = type_id(job.model, job.gpus)
        for n, per in LEGAL_SPLITS[job.gpus]:
            if n <= board.nodes and per <= g:
                obs[n - 1, g + per - 1] = t
    return obs


def widest_first_fit(job: Any, free: np.ndarray) -> Placement | None:
    """The repository's LAS/SRTF placement (``find_las_srtf_placement``): the widest multi-node split first
    (4 nodes, then 2), on the first nodes in index order with enough free GPUs; never a single node.

    ```pycon
    >>> from types import SimpleNamespace as NS
    >>> widest_first_fit(NS(gpus=8), np.array([8, 1, 2, 8])).as_dict()
    {0: 4, 3: 4}

    ```
    """
    if job.gpus not in MULTI_SPLITS:
        return first_free(job.gpus, free)
    for n, per in sorted(MULTI_SPLITS[job.gpus], reverse=True):
        nodes = [s for s in range(len(free)) if free[s] >= per][:n]
        if len(nodes) == n:
            return Placement(tuple(nodes), (per,) * n)
    return None


def first_free(gpus: int, free: np.ndarray) -> Placement | None:
    """The first free GPUs in node order (for a demand the table has no split for), or None
    ([`optsched.sim.fitting.first_free`][]).

    ```pycon
    >>> first_free(3, np.array([1, 0, 4])).as_dict()
    {0: 1, 2: 2}

    ```
    """
    got = fitting.first_free(free, gpus)
    return None if got is None else Placement.of(got)


def all_placements(job: Any, free: np.ndarray) -> list[Placement]:
    """Every multi-node placement of ``job`` (legal split, even spread) that fits ``free`` (a demand without a
    measured split: its first-free placement)."""
    if job.gpus not in MULTI_SPLITS:
        pl = first_free(job.gpus, free)
        return [] if pl is None else [pl]
    out = []
    for n, per in MULTI_SPLITS.get(job.gpus, ()):
        ok = [s for s in range(len(free)) if free[s] >= per]
        for nodes in itertools.combinations(ok, n):
            out.append(Placement(nodes, (per,) * n))
    return out


__all__ = ["Board", "K_DEMANDS", "N_TYPES", "action_mask", "all_placements", "candidates", "first_free", "n_actions",
           "node_actions", "observe", "resolve", "split_fits", "type_id", "widest_first_fit"]
