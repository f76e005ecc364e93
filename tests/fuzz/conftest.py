"""Hypothesis profiles for the fuzzing suite: ``fast`` (CI, default) and ``long``
(``GTUNE_FUZZ=long``: many more cases, each in a subprocess under a memory limit)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from tests.fuzz.harness import LONG

settings.register_profile(
    "gtune-fuzz-fast",
    max_examples=int(os.environ.get("GTUNE_FUZZ_EXAMPLES", "6")),
    deadline=None,
    derandomize="GTUNE_FUZZ_EXAMPLES" not in os.environ,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "gtune-fuzz-long",
    max_examples=int(os.environ.get("GTUNE_FUZZ_EXAMPLES", "400")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = settings.get_profile("gtune-fuzz-long" if LONG else "gtune-fuzz-fast")
