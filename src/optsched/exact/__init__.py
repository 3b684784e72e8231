"""Exact CP-SAT and MILP (PuLP: CBC, HiGHS) formulations, one module per problem.

Each module registers its solvers with `optsched.registry.register` (``exact=True``) and links the
mathematics in ``docs/formulations/``.
"""
