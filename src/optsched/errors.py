"""Errors raised by optsched.

Every problem with user input raises [`InstanceError`][optsched.errors.InstanceError] (a ``ValueError``) whose message
names the
offending field and, where there is one, the job. The CLI prints the message on one line and exits 2.
"""

from __future__ import annotations


class OptschedError(Exception):
    """Base class of every error optsched raises on purpose."""


class InstanceError(OptschedError, ValueError):
    """Invalid input data: an instance, schedule or workload file, or arguments built in code.

    ```pycon
    >>> str(InstanceError("must be a positive integer", field="jobs[2].gpus", job="j2"))
    "jobs[2].gpus (job 'j2'): must be a positive integer"

    ```
    """

    def __init__(self, message: str, *, field: str | None = None, job: str | None = None):
        self.field = field
        self.job = job
        self.reason = message
        where = field or ""
        if job is not None:
            where = f"{where} (job {job!r})" if where else f"job {job!r}"
        super().__init__(f"{where}: {message}" if where else message)


class ScheduleError(InstanceError):
    """A schedule that is infeasible for its instance (capacity, GPU count, unknown server, ...)."""


class SolverError(OptschedError, RuntimeError):
    """A solver failed for a reason other than the input (missing backend, internal error)."""
