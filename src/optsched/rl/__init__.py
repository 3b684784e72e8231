"""Reinforcement learning for paper 004 (contention-aware scheduling), behind the ``[rl]`` extra.

* [`optsched.rl.env`][]: [`ContentionEnv`][optsched.rl.env.ContentionEnv], a gymnasium environment over the steppable
  simulator (not a second simulator) with the paper's observation, actions, action mask and rewards;
* [`optsched.rl.train`][]: MaskablePPO (sb3-contrib) with the repository's hyper-parameters;
* [`optsched.rl.export`][]: the trained policy network as numpy weights (``.npz``), which the simulator's
  ``rl-base`` and ``rl-hybrid`` policies load without torch;
* ``data/``: the shipped policy (package data).

Importing this package needs nothing beyond the core install; its modules need gymnasium (``env``) and
stable-baselines3 / sb3-contrib / torch (``train``, ``export``): ``pip install 'optsched[rl]'``.
"""
