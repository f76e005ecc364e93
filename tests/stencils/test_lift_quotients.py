"""A kernel whose weights are quotients of run-time scalars (Rodinia HotSpot's
``step/Cap``, ``1/Rx``) lifts from its flags, tunes against its original and exports a
drop-in kernel that matches the original on fresh data."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gtune.stencils.definition import load_definition
from tests.conftest import ROOT, run_tuned_example
from tests.inprocess import Cli

# evaluators share the session's worker processes (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_workers")


@pytest.mark.opencl
@pytest.mark.slow
def test_quotient_weights_lift_tune_and_export(tmp_path: Path, gtune_here: Cli) -> None:
    entry = yaml.safe_load((ROOT / "stencils/plain/manifest.yaml").read_text())["kernels"][
        "hotspot2d"
    ]
    out = tmp_path / "hot2.stencil.yaml"
    plain = str(ROOT / "stencils/plain" / entry["source"])
    done = gtune_here("lift", plain, "--size", entry["size"], *entry["flags"], "-o", str(out))
    assert done.returncode == 0, done.stderr
    defn = load_definition(out)
    texts = {str(t.coefficient) for t in defn.terms}
    assert {"step/Cap", "step/(Cap*Rx)", "step/(Cap*Ry)", "1"} <= texts
    assert str(defn.constant) == "amb_temp*step/(Cap*Rz)"
    db = tmp_path / "r.db"
    ran = gtune_here("run", str(out), "--size", "64x32", "--budget", "4", db=db)
    assert ran.returncode == 0, ran.stderr
    assert "over the original" in ran.stdout + ran.stderr
    exported = gtune_here("export", str(out), "--size", "64x32", "-o", str(tmp_path / "t"), db=db)
    assert exported.returncode == 0, exported.stderr
    source = (tmp_path / "t" / "hot2_tuned.cl").read_text()
    assert "/(Cap*Rx)" in source  # the quotient is computed from the scalar arguments
    tuned = tmp_path / "t" / "hot2_tuned.json"
    for extra in ([], ["--size", "128x64"]):
        check = run_tuned_example(tuned, "--original", str(out), *extra)
        assert check.returncode == 0, check.stdout + check.stderr
        assert "result: max |tuned - original|" in check.stdout and "(ok)" in check.stdout
