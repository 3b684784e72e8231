"""Benchmark suites: each ``benchmarks/<name>.py`` has ``main(argv)`` and ``--quick``; results go to docs/results/."""
