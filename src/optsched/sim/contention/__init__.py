"""Paper 004 in the simulator: the repository's round semantics, its schedulers and the RL agent's encoding.

* [`.encoding`][optsched.sim.contention.encoding]: the ``<nodes, 2 x GPUs per node>`` observation, the K = 3 candidates,
  the
  ``Discrete(C(N, 2) + 2)`` actions and their mask;
* [`.agent`][optsched.sim.contention.agent]: a trained policy network as numpy (no torch needed), the shipped policy;
* [`.policies`][optsched.sim.contention.policies]: ``contention-las``, ``contention-srtf`` (textbook keys;
  ``repo_keys=True`` for the
  repository's inverted ones), ``widest-first-fit``, ``contention-random``, ``contention-greedy``, ``rl-base``,
  ``rl-hybrid``, named in the simulator's registry ([`optsched.sim.registry`][], family ``contention``);
* [`.runner`][optsched.sim.contention.runner]: the round accounting
  ([`ContentionMetrics`][optsched.sim.contention.runner.ContentionMetrics]), added to every run of a contention instance
  through ``optsched.simulate``.

``docs/algorithms/rl-contention.md`` documents every rule and the line of the paper or repository it follows.
"""

from .agent import NumpyPolicy, load_policy, shipped_policy
from .encoding import Board, action_mask, candidates, n_actions, node_actions, observe, resolve, type_id
from .policies import (
    ContentionGreedy,
    ContentionLas,
    ContentionSrtf,
    RandomActions,
    RlBase,
    RlHybrid,
    RoundPolicy,
    WidestFirstFit,
)
from .runner import ContentionMetrics, RoundRecorder, baseline_names, contention_summary, round_up

__all__ = ["Board", "ContentionGreedy", "ContentionLas", "ContentionMetrics", "ContentionSrtf",
           "NumpyPolicy", "RandomActions", "RlBase", "RlHybrid", "RoundPolicy", "RoundRecorder",
           "WidestFirstFit", "action_mask", "baseline_names", "candidates", "contention_summary",
           "load_policy", "n_actions", "node_actions", "observe", "resolve", "round_up", "shipped_policy",
           "type_id"]
