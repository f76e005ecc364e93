"""Issue 49's tools: benchmarks/h200_ptx.py's PTX tracing and benchmarks/template_exact.py,
on the candidates of benchmarks/candidates/."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[2]

CANDIDATES = ROOT / "benchmarks" / "candidates"
candidate = load_script(ROOT / "benchmarks" / "candidate.py")
template_exact = load_script(ROOT / "benchmarks" / "template_exact.py")
CLANG = shutil.which("clang-15")
HEAT3D = {"BX": 4, "BY": 2, "BZ": 2, "CZ": 2, "RIM": 1, "VX": 4, "WX": 64, "WY": 2, "WZ": 2}


def distinct_vectors(terms: list[tuple[int, int, int]], cfg: dict[str, int]) -> int:
    """The vectors one work-item's block of BY x BZ rows of VX outputs reads, each once."""
    vx = cfg["VX"]
    return len(
        {
            (iz + dz, iy + dy, (dx + lane) // vx)
            for iz in range(cfg["BZ"])
            for iy in range(cfg["BY"])
            for dx, dy, dz in terms
            for lane in (0, vx - 1)
        }
    )


@pytest.mark.skipif(CLANG is None, reason="clang-15 compiles the PTX")
def test_interior_rows_load_each_vector_once() -> None:
    """Traced through its PTX, an interior work-item of the candidate loads each vector
    of its block once; the package's template loads some twice (clamped row indices the
    compiler does not merge) and never fewer."""
    h200_ptx = load_script(ROOT / "benchmarks" / "h200_ptx.py")
    assert CLANG is not None
    with tempfile.TemporaryDirectory() as tmp:
        loads = {}
        for name, template in (
            ("package", None),
            ("candidate", candidate.read_variant(CANDIDATES / "vec_interior_rolled.patch")),
        ):
            kernel = h200_ptx.kernel_for("heat3d", Path(tmp) / name, template)
            row = h200_ptx.analyse(kernel, HEAT3D, h200_ptx.clang_ptx(kernel, HEAT3D, CLANG))
            per_block = row["counts"]["ld.global.v4"] / HEAT3D["CZ"]
            assert row["outputs"] == 4 * 2 * 2 * HEAT3D["CZ"]  # every output stored
            loads[name] = per_block
        terms = [tuple(int(v) for v in m.groups()) for m in h200_ptx.TERM.finditer(kernel.source)]
    fewest = distinct_vectors(terms, HEAT3D)  # type: ignore[arg-type]
    assert loads["candidate"] == fewest
    assert loads["package"] > fewest


@pytest.mark.skipif(CLANG is None, reason="clang-15 compiles the PTX")
def test_configurations_given_on_the_command_line(tmp_path: Path) -> None:
    """``--config KERNEL:N=V,...`` (repeatable) takes the place of the configurations
    file: one untimed row per configuration, each kernel's in the order given."""
    h200_ptx = load_script(ROOT / "benchmarks" / "h200_ptx.py")
    given = ["heat3d:" + ",".join(f"{k}={v}" for k, v in HEAT3D.items()), "heat3d:VX=1,WX=64"]
    assert [i["technique"] for i in h200_ptx.given_configs(given)["kernels"]["heat3d"]] == [
        "vec",
        "global",
    ]
    out = tmp_path / "t.md"
    args = [str(out), "--config", given[0], "--option=-cl-nv-maxrregcount=32"]
    assert h200_ptx.main(args) == 0
    rows = json.loads(out.with_suffix(".json").read_text())
    assert [(r["kernel"], r["median_us"]) for r in rows] == [("heat3d", None)]
    assert "BY=2 BZ=2 CZ=2" in out.read_text()


def exact(variant: Path, *args: str, size: int = 16) -> subprocess.CompletedProcess[str]:
    """``benchmarks/template_exact.py`` on PoCL: the package's template against ``variant``;
    its ``main`` in this process (no interpreter to start, its evaluators' worker shared
    where the test shares workers), its output and exit status as the script's."""
    argv = ["--variant", str(variant), "--size", str(size), *args]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = template_exact.main(argv)
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


@pytest.mark.bench
@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")  # four runs of the script, one measuring worker
def test_template_exact_tells_same_bits_from_different(tmp_path: Path) -> None:
    """A candidate that computes the package's bits passes, one whose interior path
    scales its outputs by 1 + 1e-7 is caught (exit status 1), on PoCL; with
    ``--tolerance`` that one passes and a scale of 1.01 is caught."""
    config = "jacobi2d:WX=8,WY=2,BX=4,VX=4,BY=2,CY=2,RIM=1"
    rolled = CANDIDATES / "vec_interior_rolled.patch"
    same = exact(rolled, "--kernels", "jacobi2d", "--config", config)
    assert same.returncode == 0, same.stdout + same.stderr[-2000:]
    assert "same bits: 1, different: 0, skipped: 0" in same.stdout
    broken = tmp_path / "broken.cl"
    text = candidate.read_variant(rolled)
    store = "(d_ + xv)[IN_ROW(0, 0)] = VOUT(acc);"
    assert store in text
    broken.write_text(
        text.replace(store, "(d_ + xv)[IN_ROW(0, 0)] = VOUT(acc * (REAL)1.0000001f);")
    )
    caught = exact(broken, "--kernels", "jacobi2d", "--config", config)
    assert caught.returncode == 1, caught.stdout + caught.stderr[-2000:]
    assert "DIFFERENT (dst)" in caught.stdout
    # --tolerance: a rounding-sized difference passes as such, a larger one is caught
    near = exact(broken, "--kernels", "jacobi2d", "--config", config, "--tolerance")
    assert near.returncode == 0, near.stdout + near.stderr[-2000:]
    assert any(x.startswith("jacobi2d: within tolerance") for x in near.stdout.splitlines())
    assert "same bits or within tolerance: 1, different: 0, skipped: 0" in near.stdout
    broken.write_text(text.replace(store, "(d_ + xv)[IN_ROW(0, 0)] = VOUT(acc * (REAL)1.01f);"))
    far = exact(broken, "--kernels", "jacobi2d", "--config", config, "--tolerance")
    assert far.returncode == 1, far.stdout + far.stderr[-2000:]
    assert "DIFFERENT (dst)" in far.stdout


def test_template_exact_refuses_a_missing_variant(tmp_path: Path) -> None:
    r = exact(tmp_path / "nothing.cl")
    assert r.returncode == 2
    assert "nothing.cl: no such file" in r.stderr
    assert "Traceback" not in r.stderr


def test_configurations_file_names_each_kernels_winners() -> None:
    """configs.json holds, per kernel, vec configurations fastest first and the probes
    after them, every one with whole rim vectors."""
    data = json.loads((ROOT / "benchmarks/results/h200-limit/configs.json").read_text())
    assert set(data["kernels"]) == {"heat3d", "box27", "laplacian4", "jacobi2d"}
    for picked in data["kernels"].values():
        vec = [p["median_us"] for p in picked if p["technique"] == "vec"]
        assert vec == sorted(vec) and len(vec) == 4
        assert all(p["config"]["RIM"] == 1 for p in picked if p["technique"].startswith("vec"))


def test_a_patch_applies_to_the_template_and_one_that_does_not_fit_is_named() -> None:
    """Each candidate patch applies to the package's template (its context lines match),
    changes something, and a patch whose context the template lacks stops with the
    hunk's line, not a silently different template."""
    template = candidate.TEMPLATE.read_text()
    for patch in sorted(CANDIDATES.glob("*.patch")):
        text = candidate.read_variant(patch)
        assert text != template and text.count("\n") > template.count("\n") // 2
    stale = "--- a\n+++ b\n@@ -3,2 +3,2 @@\n-no such line in the template\n+x\n ctx\n"
    with pytest.raises(candidate.PatchError, match="line 3"):
        candidate.apply_patch(template, stale)
    # the applier itself: removed, added and context lines, a hunk at the first line
    assert candidate.apply_patch("a\nb\nc\n", "@@ -1,2 +1,2 @@\n-a\n+A\n b\n") == "A\nb\nc\n"
    # a hunk whose lines moved (lines added above them since the diff) applies where
    # they now stand, and the hunks after it move as far
    moved = "new\nnew\na\nb\nc\nd\n"
    two = "@@ -1,2 +1,2 @@\n-a\n+A\n b\n@@ -4,1 +4,1 @@\n-d\n+D\n"
    assert candidate.apply_patch(moved, two) == "new\nnew\nA\nb\nc\nD\n"


def ptx_int_loads(*args: str) -> subprocess.CompletedProcess[str]:
    """benchmarks/ptx_int_loads.py on the uint8 box blur, with ``args``."""
    script = ROOT / "benchmarks" / "ptx_int_loads.py"
    blur = ROOT / "examples" / "box_blur_u8.stencil.yaml"
    cmd = [sys.executable, str(script), str(blur), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)


@pytest.mark.skipif(CLANG is None, reason="clang-15 compiles the PTX")
def _vx_rows(*args: str) -> list[list[str]]:
    """ptx_int_loads.py's rows for VX 4 and 16 (in that order), with ``args``."""
    done = ptx_int_loads("--vx", "4,16", "--size", "4096x4096", *args)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    rows = [line.split("|") for line in lines if line.startswith("| 4 ")]
    rows += [line.split("|") for line in lines if line.startswith("| 16 ")]
    assert len(rows) == 2
    return rows


def test_ptx_int_loads_counts_each_vectors_loads() -> None:
    """An 8-bit kernel's vectors in LLVM's PTX. Read as vectors of uchar (the template
    before, element_vectors.patch), whatever the width, loads of 4 bytes (ld.v4.u8), so
    loads per output stay at VX 4's; read as 32-bit words (the template), VX 16 is one
    ld.v4.u32, a quarter of VX 4's loads per output. The table says so."""
    elements = _vx_rows("--template", str(CANDIDATES / "element_vectors.patch"))
    assert all("ld.v4.u8" in r[2] for r in elements)
    assert float(elements[0][3]) == float(elements[1][3]) > 0  # four loads of 4 bytes
    words = _vx_rows()
    assert "ld.v4.u32" in words[1][2] and "ld.v4.u8" not in words[1][2]
    assert float(words[1][3]) == pytest.approx(float(words[0][3]) / 4, abs=0.01)


@pytest.mark.opencl
def test_ptx_int_loads_refuses_a_device_whose_binary_is_no_ptx() -> None:
    done = ptx_int_loads("--vx", "4", "--device", "Portable")
    assert done.returncode == 2 and "is not PTX" in done.stderr
    assert "Traceback" not in done.stderr


def test_replay_runs_merges_what_each_search_saw(tmp_path: Path) -> None:
    """benchmarks/compare/replay_runs.py's union: a configuration at the median over the
    runs of each run's first ok time (a winner's re-measurement after it left out),
    another kernel's or size's rows ignored, a run's own results first where it has
    them."""
    import csv
    import gzip

    replay = load_script(ROOT / "benchmarks" / "compare" / "replay_runs.py")
    head = ["device", "kernel", "kernel_id", "size", "WX", "VX", "status", "median_s"]

    def run(name: str, rows: list[list[object]]) -> Path:
        path = tmp_path / f"{name}.csv.gz"
        with gzip.open(path, "wt", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(head)
            w.writerows(rows)
        return path

    a = run(
        "a",
        [
            ["d", "box27:stencil", "i", "8x8x8", 32, 4, "ok", 3.0],
            ["d", "box27:stencil", "i", "8x8x8", 32, 4, "ok", 1.0],  # re-measured
            ["d", "box27:stencil", "i", "8x8x8", 64, 4, "build_failed", ""],
            ["d", "heat3d:stencil", "i", "8x8x8", 32, 4, "ok", 9.0],
            ["d", "box27:stencil", "i", "16x16x16", 32, 4, "ok", 9.0],
        ],
    )
    b = run("b", [["d", "box27:stencil", "i", "8x8x8", 32, 4, "ok", 5.0]])
    results, rows = replay.merged([a, b], "box27", "8x8x8")
    assert rows == 4
    by = {(r.config["WX"], r.config["VX"]): r for r in results}
    assert by[32, 4].ok and by[32, 4].median_s == 4.0  # median of 3 (a's first) and 5
    assert not by[64, 4].ok and by[64, 4].status.value == "build_failed"
    own, _ = replay.merged([b], "box27", "8x8x8")
    filled = replay.filled(own, results)
    assert [r.median_s for r in filled if r.config["WX"] == 32] == [5.0]
    assert any(r.config["WX"] == 64 for r in filled)


def probe(
    out: Path, edit: tuple[str, str] | None = None, *extra: str
) -> subprocess.CompletedProcess[str]:
    """``benchmarks/xhalo_probe.py`` on PoCL at 64³ with ``extra`` arguments (a copy of
    it with one kernel's source edited, a mutant, when ``edit`` is given)."""
    script = ROOT / "benchmarks" / "xhalo_probe.py"
    if edit is not None:
        text = script.read_text()
        assert edit[0] in text
        script = out.parent / f"{out.name}_probe.py"
        script.write_text(text.replace(*edit))
    args = ["--device", "pthread", "--size", "64", "--lw", "32", "--rounds", "1", "--reps", "1"]
    cmd = [sys.executable, str(script), str(out), *args, *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)


@pytest.mark.bench
@pytest.mark.opencl
def test_xhalo_probe_verifies_each_kernel_and_catches_a_wrong_one(tmp_path: Path) -> None:
    """Every probe kernel (but NVIDIA's inline PTX: shuffles, L2 prefetches) agrees with
    numpy on PoCL, the interior ones leaving each row's ends as they were; a kernel
    whose rim vector writes its kept element, or whose merged store keeps the wrong
    lane, is caught (exit status 1). ``--kernels`` times those named and the copy;
    ``--swap`` times the copies again, the arrays' roles alternating."""
    good = probe(tmp_path / "good")
    assert good.returncode == 0, good.stdout + good.stderr[-2000:]
    data = json.loads((tmp_path / "good" / "xhalo.json").read_text())
    assert set(data["verified"]) == {
        *("copy4", "vec3", "vec3i", "vec3m", "copy4i", "vec3x2"),
        *("scalar3", "local4", "heat7", "lap13", "box27", "copy4q0", "copy4m", "copy4h"),
    }
    assert all(data["verified"].values())
    assert next(r["kernel"] for r in data["rows"]) == "copy4"
    mutant = (  # the row's first element written too
        "e[1] = (o).y; e[2] = (o).z; e[3] = (o).w;",
        "e[0] = (o).x; e[1] = (o).y; e[2] = (o).z; e[3] = (o).w;",
    )
    bad = probe(tmp_path / "bad", mutant)
    assert bad.returncode == 1, bad.stdout + bad.stderr[-2000:]
    verified = json.loads((tmp_path / "bad" / "xhalo.json").read_text())["verified"]
    assert not verified["copy4i"] and not verified["vec3i"] and verified["vec3m"]
    assert not verified["copy4q0"] and verified["copy4m"] and not verified["copy4h"]
    merged = ("if (xv == 0) w.x = old.x;", "if (xv == 0) w.y = old.x;")  # vec3m and MERGE_RIM
    bad = probe(tmp_path / "merged", merged, "--kernels", "copy4m", "copy4i", "--swap")
    assert bad.returncode == 1, bad.stdout + bad.stderr[-2000:]
    data = json.loads((tmp_path / "merged" / "xhalo.json").read_text())
    assert data["verified"] == {"copy4": True, "copy4i": True, "copy4m": False}
    # the verified copies timed again on alternating arrays, each against its own copy
    rows = {r["kernel"]: r for r in data["rows"]}
    assert set(rows) == {"copy4", "copy4i", "copy4~", "copy4i~"}
    assert rows["copy4~"]["of_copy"] == 1.0


@pytest.mark.bench
@pytest.mark.opencl
def test_astream_probe_checks_its_walks_against_the_package(tmp_path: Path) -> None:
    """``benchmarks/astream_probe.py`` on PoCL at 32³ (plain copies for NVIDIA's
    ``cp.async``): its walks of box27 (separable sums, two rows a work-item), laplacian4
    (radius 2) and the walk's copy agree with the package's kernels, rim and all; a
    probe wrong by design (no stores) is timed, not counted wrong; a walk with one
    weight off is caught (exit status 1)."""
    script = ROOT / "benchmarks" / "astream_probe.py"
    common = ["--device", "pthread", "--size", "32", "--rounds", "1", "--reps", "1"]
    common += ["--config", "box27:", "--config", "laplacian4:"]
    walks = [
        "box27:WX=4,WY=2,CY=2,ZC=16,D=2",
        "laplacian4:WX=8,WY=4,ZC=8,D=3",
        "copyR2:WX=8,WY=2,ZC=32,D=1",
        "box27:WX=8,WY=4,ZC=16,D=2,NOST=1",
    ]
    cmd = [sys.executable, str(script), str(tmp_path / "good"), *common]
    good = subprocess.run(
        cmd + [a for w in walks for a in ("--variant", w)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert good.returncode == 0, good.stdout + good.stderr[-2000:]
    data = json.loads((tmp_path / "good" / "astream.json").read_text())
    right = {r["kernel"]: r.get("right") for r in data["rows"]}
    assert [right[k] for k in right if "astream" in k] == [True, True, True, False]
    assert data["wrong"] == [] and "copy4" in right
    text = script.read_text()
    assert "return repr(float(w))" in text
    mutant = script.with_name(f"_mutant_{tmp_path.name}.py")  # beside it: its paths hold
    mutant.write_text(text.replace("return repr(float(w))", "return repr(float(w) * 1.01)"))
    try:
        bad = subprocess.run(
            [sys.executable, str(mutant), str(tmp_path / "bad"), *common, "--variant", walks[0]],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
        )
    finally:
        mutant.unlink()
    assert bad.returncode == 1, bad.stdout + bad.stderr[-2000:]
    assert "wrong results: box27 astream" in bad.stderr
