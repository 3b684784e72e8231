"""Equal numbers of a generated workload are one float object (issue 29: a million replicated Philly jobs hold about
50,000 distinct amounts of work), and the jobs are the ones the constructor builds one by one."""

from __future__ import annotations

import numpy as np

from optsched.problems.workload import WorkloadJob


def test_from_columns_shares_equal_work_and_iteration_times():
    rng = np.random.default_rng(0)
    n = 400
    work = rng.choice([10.0, 250.5, 1e6, 3.25], size=n)  # few distinct values, many jobs
    times = rng.choice([0.1, 0.25], size=n)
    ids = [str(i) for i in range(n)]
    arr = np.sort(rng.uniform(0, 1e4, size=n))
    gpus = rng.choice([1, 2, 8], size=n)
    models = [("a", "b")[i % 2] for i in range(n)]
    tracked = np.arange(n) % 3 > 0
    jobs = WorkloadJob.from_columns(ids, arr, gpus, work, times, models, tracked)
    assert len({id(j.iterations) for j in jobs}) == len(set(work.tolist())) == 4
    assert len({id(j.iteration_time_s) for j in jobs}) == 2
    assert len({id(j.arrival_s) for j in jobs}) == n  # (distinct values stay distinct)
    one_by_one = tuple(WorkloadJob(i, a, int(g), k, t, model=m, tracked=bool(b))
                       for i, a, g, k, t, m, b in zip(ids, arr, gpus, work, times, models, tracked))
    assert jobs == one_by_one
    assert all(type(j.iterations) is float and type(j.arrival_s) is float for j in jobs)
