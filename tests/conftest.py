"""Shared test settings.

Hypothesis profiles: "core" (default) keeps the whole core suite well under a minute on two
cores; "thorough" runs ten times the examples. Select with HYPOTHESIS_PROFILE=thorough.
Deadlines are off: the Python-loop reference methods are slow by design and CI machines vary.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "core",
    deadline=None,
    max_examples=50,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    deadline=None,
    max_examples=300,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "core"))

# Servers the tests start run no background warm-up (explorer/frame/warm.py) unless a test asks
# for one: what they measure is their own views.
os.environ.setdefault("RELPOS_WARM_AT_START", "0")
