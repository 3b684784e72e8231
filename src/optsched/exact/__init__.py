"""Exact CP-SAT and MILP (PuLP: CBC, HiGHS) formulations, one module per problem.

Each module registers its solvers with :func:`optsched.registry.register` (``exact=True``) and links the
mathematics in ``formulations/``.
"""

# Load OR-Tools before PuLP: PuLP imports highspy, whose HiGHS symbols clash with the copy bundled in
# libortools; whichever loads second fails. With OR-Tools first, CP-SAT works and PuLP's in-process HiGHS
# reports itself unavailable (CBC, a subprocess, is unaffected).
try:  # pragma: no cover - import side effect only
    from ortools.sat.python import cp_model as _cp_model  # noqa: F401
except ImportError:  # pragma: no cover
    pass
