import os

from hypothesis import HealthCheck, settings

# CI: fixed example counts and no deadline (a shared 2-core machine is noisy); locally the same profile.
settings.register_profile("optsched", max_examples=40, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow], derandomize=bool(os.environ.get("CI")))
settings.load_profile("optsched")
