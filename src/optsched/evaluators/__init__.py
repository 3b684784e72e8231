"""Exact scorers of finished schedules, one module per problem, independent of every algorithm.

Each problem's registry entry names its evaluator (``optsched.evaluate(inst, schedule)`` dispatches to it); an
evaluator raises :class:`~optsched.errors.ScheduleError` naming the field and the job for an infeasible schedule
and returns an object with ``objective``, ``objective_name``, ``schedule`` (completions filled in) and
``summary()``.
"""
