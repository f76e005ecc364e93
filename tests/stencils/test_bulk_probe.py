"""benchmarks/bulk_probe.py (issue 49, measured and lost: results/h200-limit/bulk/): its
float64 box27 reference is the stencil definition's sum, its shapes are checked, and on
PoCL every staged kernel (the bulk ones staging with ordinary loads there) writes what it
claims: the copies their input, box27 the package kernel's values, the kept boundary
untouched."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
probe = load_script(ROOT / "benchmarks" / "bulk_probe.py")


def test_the_reference_is_the_definitions_sum_and_keeps_the_boundary() -> None:
    n = 6
    a = np.random.default_rng(3).random(n**3, dtype=np.float32)
    got = probe.reference(a, n, -1.0).reshape(n, n, n)
    terms = yaml.safe_load((ROOT / "stencils" / "box27.stencil.yaml").read_text())["terms"]
    c = a.reshape(n, n, n).astype(np.float64)
    for z, y, x in [(1, 1, 1), (2, 4, 3), (4, 4, 4)]:
        want = sum(
            float(Fraction(t["coefficient"]))
            * c[z + t["offset"][2], y + t["offset"][1], x + t["offset"][0]]
            for t in terms
        )
        assert got[z, y, x] == pytest.approx(want, rel=1e-12)
    inner = np.zeros((n, n, n), dtype=bool)
    inner[1:-1, 1:-1, 1:-1] = True
    assert np.all(got[~inner] == -1.0)


@pytest.mark.parametrize("text", ["8x8", "8x8/2", "ax8/2x2", "7x8/2x2", "8x8/0x2"])
def test_a_shape_that_does_not_tile_the_cube_is_refused(text: str) -> None:
    with pytest.raises(SystemExit, match="bulk_probe"):
        probe.parse_shape(text, 256)


@pytest.mark.bench  # the probe run end to end
@pytest.mark.opencl
def test_every_staged_kernel_writes_what_it_claims_on_pocl(tmp_path: Path) -> None:
    out = tmp_path / "bulk"
    args = ["--device", "portable", "--size", "256", "--rounds", "1", "--reps", "1"]
    rc = probe.main([str(out), *args, "--shape", "8x4/2x2"])
    assert rc == 0
    data = json.loads((out / "bulk.json").read_text())
    assert not data["bulk"]  # PoCL: staged with ordinary loads
    names = {r["kernel"] for r in data["rows"]}
    assert names == {"package", "copy4"} | {f"{v} 8x4/2x2" for v in probe.VARIANTS}
    assert set(data["checks"]) == names and all(data["checks"].values())
    assert "| boxB 8x4/2x2 |" in (out / "bulk.md").read_text()


@pytest.mark.opencl
@pytest.mark.parametrize("name", ["bulkH 8x8/2x2", "keepH 8x8/2x2", "boxB 8x8/2x2"])
def test_a_kernel_that_writes_wrong_values_is_caught_before_timing(name: str) -> None:
    import pyopencl as cl

    device = next(d for p in cl.get_platforms() for d in p.get_devices())
    context = cl.Context([device])
    queue = cl.CommandQueue(context)
    host = np.random.default_rng(5).random(16**3, dtype=np.float32)
    dst = cl.Buffer(context, cl.mem_flags.READ_WRITE, size=host.nbytes)

    def zeros() -> object:  # a "kernel" that writes zeros everywhere, the boundary too
        return cl.enqueue_fill_buffer(queue, dst, np.float32(0), 0, host.nbytes)

    with pytest.raises(SystemExit, match=f"wrong output from {name}"):
        probe.checked(queue, {name: zeros}, dst, host)
