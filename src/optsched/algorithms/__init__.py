"""Heuristics and approximation algorithms: pure functions from problem data to a schedule.

Each module registers its algorithms with `optsched.registry.register`.
"""
