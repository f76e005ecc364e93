"""Time steps in definitions and descriptions, and the temporal technique's space (no
OpenCL: tests/stencils/test_temporal_opencl.py runs the kernels)."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from gtune.description import load_kernel, parse_description
from gtune.exceptions import InputError
from gtune.stencils.definition import load_definition, parse_definition
from gtune.stencils.render import definition_description, render_source

from ..inprocess import Cli
from ..space.space_helpers import small_gpu_limits

ROOT = Path(__file__).resolve().parents[2]
HEAT = ROOT / "stencils" / "heat3d.stencil.yaml"
STAR = ROOT / "tests" / "data" / "definitions" / "star2d_c.stencil.yaml"


def with_steps(path: Path, steps: Any) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    data["steps"] = steps
    return data


def test_steps_round_trip_and_default() -> None:
    assert load_definition(HEAT).steps == 1
    assert "steps" not in load_definition(HEAT).to_dict()
    d = parse_definition(with_steps(HEAT, 8), "h.stencil.yaml")
    assert d.steps == 8 and d.to_dict()["steps"] == 8
    assert parse_definition(yaml.safe_load(d.to_yaml()), "again").steps == 8


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "8"])
def test_bad_steps_name_file_and_key(bad: Any) -> None:
    with pytest.raises(InputError) as info:
        parse_definition(with_steps(HEAT, bad), "h.stencil.yaml")
    assert str(info.value).startswith("h.stencil.yaml: steps: expected a whole number")


def test_bad_steps_on_the_command_line_is_one_message(tmp_path: Path, gtune_here: Cli) -> None:
    path = tmp_path / "h.stencil.yaml"
    path.write_text(yaml.safe_dump(with_steps(HEAT, 0)))
    r = gtune_here("space", str(path), "--size", "16x16x16")
    assert r.returncode == 2
    assert f"{path}: steps: expected a whole number" in r.stderr
    assert "Traceback" not in r.stderr


def test_one_step_description_is_unchanged() -> None:
    """Without steps (or with steps: 1) nothing of the temporal technique appears."""
    d = load_definition(HEAT)
    source, description = definition_description(d)
    one = dataclasses.replace(d, steps=1)
    assert definition_description(one) == (source, description)
    assert "TB" not in description["parameters"] and "steps" not in description
    assert "temporal" not in description["techniques"]
    assert not any("TB" in c for c in description["constraints"])


def test_stepping_description() -> None:
    d = parse_definition(with_steps(HEAT, 12), "h.stencil.yaml")
    source, description = definition_description(d, {"NX": 32, "NY": 32, "NZ": 32})
    assert source == render_source(load_definition(HEAT))  # one template for every TB
    assert description["parameters"]["TB"]["values"] == [1, 2, 4]  # those dividing 12
    assert description["steps"] == {"count": 12, "per_launch": "TB", "swap": ["u", "u_next"]}
    assert "12 % TB == 0" in description["constraints"]
    out = next(a for a in description["arguments"] if a["name"] == "u_next")
    assert out["init"] == "copy:u"  # both buffers hold the same rim
    assert "IMAGE" not in description["parameters"]  # an image cannot be swapped
    assert description["features"]["steps"] == 12
    techniques = description["techniques"]
    assert techniques["temporal"][:2] == ["TB > 1", "STREAM == 1"]  # 3D: streaming
    assert techniques["temporal-tile"][:2] == ["TB > 1", "STREAM == 0"]
    assert all("TB == 1" in cons for name, cons in techniques.items() if "temporal" not in name)
    kernel = parse_description(description, source=source, label="h")
    assert kernel.step_count == 12
    assert kernel.launches({"TB": 4}) == 3 and kernel.launches({"TB": 1}) == 12


def test_stepping_2d_description_streams_in_both_paths() -> None:
    """A 2D array streams along y (STREAM, the chunk ZC) in one step (technique
    ``stream``, TB == 1, rows in registers) and with TB time levels (``temporal``,
    rings of rows in local memory); ``temporal-tile`` uses tiles. The one-step register
    bounds apply to TB == 1 only, and the template accepts streaming with TB > 1."""
    d = parse_definition(with_steps(STAR, 4), "s.stencil.yaml")
    source, description = definition_description(d, {"NX": 256, "NY": 256})
    techniques = description["techniques"]
    assert techniques["temporal"][:2] == ["TB > 1", "STREAM == 1"]
    assert techniques["temporal-tile"][:2] == ["TB > 1", "STREAM == 0"]
    assert "TB == 1" in techniques["stream"] and "STREAM == 1" in techniques["stream"]
    assert "TB == 1 or STREAM == 0" not in description["constraints"]
    assert "ZC" in description["parameters"] and "YC" not in description["parameters"]
    kernel = parse_description(description, source=source, label="s")
    default = kernel.default_config()
    assert default is not None
    limits = {"LOCAL_MEM_SIZE": 48 * 1024, "LOCAL_MEM_STATIC": 48 * 1024, "DOUBLE_SUPPORT": 1}
    # a strip of 256 columns on 4 work-items per row: beyond one-step streaming's 32
    # outputs per row, and beyond temporal streaming's 32 values of the next rows per
    # work-item (its registers between the loads and the ring); on 16 per row it fits
    wide = {**default, "STREAM": 1, "WX": 4, "WY": 4, "CX": 64, "ZC": 8}
    assert not _valid(kernel, {**wide, "TB": 2}, limits)
    assert not _valid(kernel, {**wide, "TB": 1}, limits)
    # (ceil((16*16 + 2*TB*RX) / 16) = 17 loads; 16 outputs per row in one step)
    assert _valid(kernel, {**wide, "WX": 16, "CX": 16, "TB": 2}, limits)
    assert _valid(kernel, {**wide, "WX": 16, "CX": 16, "TB": 1}, limits)
    # the bound counts the halo: 32 columns per work-item and the halo make 33 loads
    assert not _valid(kernel, {**wide, "WX": 8, "CX": 32, "TB": 2}, limits)
    # temporal streaming walks whole chunks; one-step streaming's last chunk may be short
    odd = {**default, "STREAM": 1, "WX": 16, "WY": 2, "ZC": 256}
    assert not _valid(kernel, {**odd, "TB": 2}, limits)
    assert _valid(kernel, {**odd, "TB": 1}, limits)
    if shutil.which("cpp") is None:
        return
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.cl"
        src.write_text(source)
        for flags, ok in (
            ("-DSTREAM=1 -DZC=4", True),
            ("-DSTREAM=1 -DZC=4 -DTB=2", True),
            ("-DSTREAM=1 -DZC=4 -DTB=2 -DCY=2", False),
        ):
            pre = subprocess.run(
                ["cpp", "-P", "-undef", "-DNX=32", "-DNY=32", *flags.split(), str(src)],
                capture_output=True,
                text=True,
            )
            assert (pre.returncode == 0) is ok, pre.stderr
            if not ok:
                assert "STREAM=1 needs CY=1 for a 2D array" in pre.stderr


def _valid(kernel: Any, cfg: dict[str, int], limits: dict[str, int]) -> bool:
    env = {**kernel.env(cfg), **limits}
    return all(c.evaluate(env) for c in kernel.constraints)


def test_temporal_constraints_and_local_memory() -> None:
    """TB divides the steps, excludes the other data-loading techniques, and its two
    tiles (element size included, the block merged by CX and CY) fit in local memory."""
    data = with_steps(STAR, 8)
    limits = {"LOCAL_MEM_SIZE": 4096, "LOCAL_MEM_STATIC": 4096, "DOUBLE_SUPPORT": 1}
    fits: dict[str, set[tuple[int, int, int]]] = {}
    for dtype, size in (("float32", 4), ("float64", 8)):
        data["dtype"] = dtype
        d = parse_definition(copy.deepcopy(data), "s.stencil.yaml")
        source, description = definition_description(d, {"NX": 64, "NY": 64})
        kernel = parse_description(description, source=source, label="s")
        default = kernel.default_config()
        assert default is not None
        temporal = kernel.techniques["temporal-tile"]  # the default does not stream
        fits[dtype] = set()
        for tb in kernel.parameter("TB").domain.values(kernel.sizes):
            for wx, wy, cx, cy in itertools.product((4, 16, 64), (1, 4, 16), (1, 2), (1, 4)):
                cfg = {**default, "WX": wx, "WY": wy, "CX": cx, "CY": cy, "TB": tb}
                if 64 % (wx * cx) or 64 % (wy * cy):
                    continue
                tile = 2 * size * (wx * cx + 2 * tb) * (wy * cy + 2 * tb)
                ok = _valid(kernel, cfg, limits)
                assert ok == (tb == 1 or tile <= 4096), (dtype, cfg)
                assert all(t.evaluate(kernel.env(cfg)) for t in temporal) == (tb > 1)
                if ok and tb > 1:
                    fits[dtype].add((wx * cx, wy * cy, tb))
                    for other in ({"LOCAL": 1}, {"VX": 2, "BX": 2}, {"BX": 2}):
                        assert not _valid(kernel, {**cfg, **other}, limits), other
        assert kernel.parameter("TB").domain.values(kernel.sizes) == [1, 2, 4, 8]
    assert fits["float64"] and fits["float64"] < fits["float32"]


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ({"count": 0, "swap": ["u", "u_next"]}, "steps.count: must be a positive"),
        ({"count": 4, "swap": ["u_next", "u"]}, "steps.swap: u_next must be an input"),
        ({"count": 4, "swap": ["u"]}, "steps.swap: must name two buffer"),
        ({"count": 4, "per_launch": "TB"}, "steps: must be {count"),
        ({"count": 4, "per_launch": "TQ", "swap": ["u", "u_next"]}, "TQ"),
    ],
)
def test_description_steps_errors(steps: dict[str, Any], message: str) -> None:
    d = parse_definition(with_steps(HEAT, 4), "h.stencil.yaml")
    source, description = definition_description(d)
    description["steps"] = steps
    with pytest.raises(InputError) as info:
        parse_description(description, source=source, label="h.yaml")
    assert message in str(info.value)


def test_definition_with_steps_loads_through_load_kernel(tmp_path: Path) -> None:
    path = tmp_path / "h.stencil.yaml"
    path.write_text(yaml.safe_dump(with_steps(HEAT, 4)))
    kernel = load_kernel(path, {"NX": 16, "NY": 16, "NZ": 16})
    assert kernel.steps is not None and kernel.steps.input == "u"
    assert [p.name for p in kernel.parameters][-2:] == ["TB", "TR"]


def test_a_model_without_temporal_still_searches_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load-predictor model trained on one-step kernels knows no temporal blocking:
    for a kernel with time steps the policy searches it besides the prediction."""
    from gtune.loadpredict import (
        Dataset,
        ModelCard,
        TrainingRow,
        choose_techniques,
        device_card,
        traits_of,
    )
    from gtune.loadpredict.features import DeviceTraits

    monkeypatch.setenv("GTUNE_MODELS", str(tmp_path))
    device = small_gpu_limits()
    heat = traits_of(load_kernel(ROOT / "stencils" / "heat3d.cl"))
    rows = [
        TrainingRow(
            f"k{i}",
            device.identity,
            "hybrid",
            heat,
            {"global": 2.0, "local": 1.0},
            DeviceTraits.of(device),
        )
        for i in range(3)
    ]
    Dataset(rows).write_csv(tmp_path / "m.csv")
    card = ModelCard(name="m", heuristic="hybrid", device=device_card(device), dataset="m.csv")
    card.write(tmp_path)
    one_step = load_kernel(HEAT)
    assert choose_techniques(one_step, device, "hybrid").techniques == ["local"]
    path = tmp_path / "h.stencil.yaml"
    path.write_text(yaml.safe_dump(with_steps(HEAT, 4)))
    choice = choose_techniques(load_kernel(path), device, "hybrid")
    # both temporal techniques (streaming and tiles): a 2D jacobi's best H100 temporal
    # kernel was a tile, which the policy used to leave out
    # (and heat3d's z-star: streaming with the z-neighbours in registers)
    assert choice.techniques == ["local", "temporal", "temporal-tile", "temporal-zreg"]
    assert choice.predicted == "local"
    assert "temporal, temporal-tile, temporal-zreg, which model m has not seen" in choice.note
    flat = tmp_path / "j.stencil.yaml"
    flat.write_text(yaml.safe_dump(with_steps(ROOT / "stencils" / "jacobi2d.stencil.yaml", 4)))
    chosen = choose_techniques(load_kernel(flat), device, "hybrid").techniques
    assert {"temporal", "temporal-tile"} <= set(chosen)


def test_a_stepping_kernel_is_not_split(tmp_path: Path) -> None:
    from gtune.split import split_axis

    path = tmp_path / "h.stencil.yaml"
    path.write_text(yaml.safe_dump(with_steps(HEAT, 4)))
    kernel = load_kernel(path, {"NX": 16, "NY": 16, "NZ": 16})
    default = kernel.default_config()
    assert default is not None
    with pytest.raises(InputError, match=r"time steps \(4\) cannot be split"):
        split_axis(kernel, default, None)


@pytest.mark.parametrize(
    ("name", "sizes", "cfg", "rows", "cols", "depth"),
    [
        # 2D tiles: 128 x 32 outputs per 256 work-items, two tiles with a TB halo
        ("jacobi2d", {"NX": 8192, "NY": 8192}, {"WX": 32, "WY": 8, "CX": 4, "CY": 4}, 32, 128, 1),
        # 2D streaming along y: a 256-column strip, 4 rows per iteration, 256 rows
        (
            "jacobi2d",
            {"NX": 8192, "NY": 8192},
            {"WX": 64, "WY": 4, "CX": 4, "STREAM": 1},
            256,
            256,
            1,
        ),
        # 3D streaming along z: 64 x 16 plane blocks, 64 planes per work-group
        (
            "heat3d",
            {"NX": 512, "NY": 512, "NZ": 512},
            {"WX": 32, "WY": 8, "CX": 2, "CY": 2, "STREAM": 1, "ZC": 64},
            16,
            64,
            64,
        ),
    ],
)
@pytest.mark.parametrize("tb", [2, 4, 8])
def test_large_temporal_blocks_fit_a_gpu(
    name: str,
    sizes: dict[str, int],
    cfg: dict[str, int],
    rows: int,
    cols: int,
    depth: int,
    tb: int,
) -> None:
    """At a GPU's 48 KiB of local memory the space holds large merged temporal blocks;
    the launch covers the array with them, and the local memory counted is what the
    template declares (tiles: two of the block with its halo; streaming: TB rings)."""
    d = parse_definition(with_steps(ROOT / "stencils" / f"{name}.stencil.yaml", 8), "x")
    source, description = definition_description(d, sizes)
    kernel = parse_description(description, source=source, label=name)
    default = kernel.default_config()
    assert default is not None
    config = {**default, **cfg, "TB": tb}
    if name == "jacobi2d" and cfg.get("STREAM"):
        config["ZC"] = rows // cfg["WY"]
    sx, sy = cfg["WX"] * cfg.get("CX", 1), cfg["WY"] * cfg.get("CY", 1)
    if "NZ" in sizes:
        declared = tb * 3 * 4 * (sx + 2 * tb) * (sy + 2 * tb)  # rings of 3 planes
    elif cfg.get("STREAM"):
        declared = tb * (2 + cfg["WY"]) * 4 * (sx + 2 * tb)  # rings of 2 + WY rows
    else:
        declared = 2 * 4 * (sx + 2 * tb) * (sy + 2 * tb)  # two tiles
    env = {
        **kernel.env(config),
        "LOCAL_MEM_SIZE": 48 * 1024,
        "LOCAL_MEM_STATIC": 48 * 1024,
        "DOUBLE_SUPPORT": 1,
    }
    assert kernel.launch.local_memory_bytes is not None
    assert kernel.launch.local_memory_bytes.evaluate_int(env) == declared
    fits = declared <= 48 * 1024
    valid = all(c.evaluate(env) for c in kernel.constraints)
    assert valid == fits, (config, declared)
    technique = "temporal" if cfg.get("STREAM") else "temporal-tile"
    assert all(t.evaluate(env) for t in kernel.techniques[technique])
    glob, loc = kernel.launch_sizes(config)
    assert loc is not None
    groups = [g // w for g, w in zip(glob, loc, strict=True)]
    assert groups[0] * cols == sizes["NX"] and groups[1] * rows == sizes["NY"]
    if "NZ" in sizes:
        assert groups[2] * depth == sizes["NZ"]
    if tb == 2:
        assert fits  # at TB = 2 every one of these fits


def test_default_strategy_searches_the_temporal_techniques_with_the_temporal_spec(
    tmp_path: Path,
) -> None:
    """``gtune run``'s default (hybrid) searches temporal and temporal-tile with the
    shipped temporal spec, every other technique with hybrid; a spec named explicitly
    runs for every technique, and a one-step kernel is unchanged."""
    from gtune.tuning.strategy import resolve_strategy

    path = tmp_path / "j.stencil.yaml"
    path.write_text(yaml.safe_dump(with_steps(ROOT / "stencils" / "jacobi2d.stencil.yaml", 8)))
    kernel = load_kernel(path, {"NX": 256, "NY": 256})
    assert kernel.temporal_techniques == ["temporal", "temporal-tile"]
    resolved = resolve_strategy(kernel, "hybrid")
    assert resolved.label == "hybrid"
    assert set(resolved.technique_options) == {"temporal", "temporal-tile"}
    for name in ("temporal", "temporal-tile"):
        assert resolved.options_for(name)["spec"].name == "temporal"
    assert resolved.options_for("global")["spec"] == "hybrid"
    assert resolved.options_for(None)["spec"] == "hybrid"
    assert "temporal spec" in resolved.note
    assert resolve_strategy(kernel, "hybrid", "hybrid").technique_options == {}
    assert resolve_strategy(kernel, "dims").technique_options == {}
    one_step = load_kernel(ROOT / "stencils" / "jacobi2d.stencil.yaml", {"NX": 256, "NY": 256})
    assert one_step.temporal_techniques == []
    assert resolve_strategy(one_step, "hybrid").technique_options == {}


def _heat512_stepping() -> tuple[Any, dict[str, int], dict[str, int]]:
    """heat3d at 512^3 with 8 steps: its kernel, default configuration, and the H100's
    local memory (48 KiB) with doubles, as constraints read them."""
    d = parse_definition(with_steps(HEAT, 8), "h.stencil.yaml")
    source, description = definition_description(d, {"NX": 512, "NY": 512, "NZ": 512})
    kernel = parse_description(description, source=source, label="h")
    default = kernel.default_config()
    assert default is not None
    return (
        kernel,
        dict(default),
        {"LOCAL_MEM_SIZE": 48 * 1024, "LOCAL_MEM_STATIC": 48 * 1024, "DOUBLE_SUPPORT": 1},
    )


def test_temporal_streaming_register_bound() -> None:
    """3D temporal streaming holds the next plane's loads in registers, the block's
    plane with its halo over the work-group: a 64 x 16 block at TB = 2 (68 x 20 =
    1,360 values) fits 128 work-items (11 each) but not 32 (43 each), though both use
    the same local memory."""
    kernel, default, limits = _heat512_stepping()
    base = {**default, "STREAM": 1, "ZC": 32, "TB": 2}
    many = {**base, "WX": 16, "WY": 8, "CX": 4, "CY": 2}
    few = {**base, "WX": 16, "WY": 2, "CX": 4, "CY": 8}
    lm = kernel.launch.local_memory_bytes
    assert lm is not None
    for cfg in (many, few):
        assert lm.evaluate_int({**kernel.env(cfg), **limits}) == 2 * 3 * 4 * 68 * 20
    assert _valid(kernel, many, limits)
    assert not _valid(kernel, few, limits)
    broken = [c.text for c in kernel.constraints if not c.evaluate({**kernel.env(few), **limits})]
    assert len(broken) == 1 and "/ (WX*WY) <= 32" in broken[0]


def test_zreg_is_streaming_with_the_z_neighbours_in_registers() -> None:
    """``ZREG`` (3D stepping descriptions): the technique ``temporal-zreg`` exists for
    stencils whose z-terms lie on the z axis (heat3d) and not for others (a 27-point box,
    whose description pins ``ZREG == 0``); it needs temporal streaming, keeps two planes
    of the block with its halo in local memory (not TB rings of 2*RZ+1 planes), so a
    block too large for the rings fits, and its register bound counts the queues."""
    d = parse_definition(with_steps(HEAT, 8), "h.stencil.yaml")
    sizes = {"NX": 512, "NY": 512, "NZ": 512}
    source, description = definition_description(d, sizes)
    assert description["parameters"]["ZREG"]["values"] == [0, 1, 2]
    assert description["techniques"]["temporal-zreg"][:3] == ["TB > 1", "STREAM == 1", "ZREG >= 1"]
    assert "ZREG == 0" in description["techniques"]["temporal"]
    assert "ZREG == 0" not in description["constraints"]
    kernel = parse_description(description, source=source, label="h")
    assert kernel.temporal_techniques == ["temporal", "temporal-tile", "temporal-zreg"]
    default = kernel.default_config()
    assert default is not None
    limits = {"LOCAL_MEM_SIZE": 48 * 1024, "LOCAL_MEM_STATIC": 48 * 1024, "DOUBLE_SUPPORT": 1}
    # a 128 x 16 block at TB = 2 on 32 x 16 work-items: rings of 2 x 3 planes of
    # 132 x 20 points need 62 KiB, the two planes of ZREG 21 KiB
    big = {**default, "STREAM": 1, "ZC": 32, "WX": 32, "WY": 16, "CX": 4, "TB": 2}
    assert not _valid(kernel, big, limits)
    zreg = {**big, "ZREG": 1}
    assert _valid(kernel, zreg, limits)
    env = {**kernel.env(zreg), **limits}
    assert kernel.launch.local_memory_bytes is not None
    assert kernel.launch.local_memory_bytes.evaluate_int(env) == 2 * 4 * 132 * 20
    # ZREG = 2 stores the rows at an odd pitch: 133 floats for 132 points
    env2 = {**kernel.env({**zreg, "ZREG": 2}), **limits}
    assert kernel.launch.local_memory_bytes.evaluate_int(env2) == 2 * 4 * 133 * 20
    # registers: the points per work-item times (TB*3 + 1) values, at most 128 per
    # work-item and 65,536 per work-group. TB = 8 at 16 x 16 work-items and a 64 x 16
    # block: 80 x 32 points, 10 each, 250 values: too many; at 32 x 32 work-items and a
    # 64 x 32 block: 80 x 48 points, 4 each, 100 values, but 102,400 in the work-group;
    # a 32 x 8 block on 32 x 8: 48 x 24 points, 5 each, 125 values, 32,000 in all
    assert not _valid(kernel, {**zreg, "WX": 16, "WY": 16, "CX": 4, "TB": 8}, limits)
    assert not _valid(kernel, {**zreg, "WX": 32, "WY": 32, "CX": 2, "TB": 8}, limits)
    assert _valid(kernel, {**zreg, "WX": 32, "WY": 8, "CX": 1, "TB": 8}, limits)
    # TB = 4, a 64 x 32 block on 32 x 16: 72 x 40 points, 6 each, 78 values, 39,936 in
    # the work-group; float64 counts two registers a value: 79,872
    tb4 = {**zreg, "WX": 32, "WY": 16, "CX": 2, "CY": 2, "TB": 4}
    assert _valid(kernel, tb4, limits)
    d64 = parse_definition({**with_steps(HEAT, 8), "dtype": "float64"}, "h.stencil.yaml")
    k64 = parse_description(definition_description(d64, sizes)[1], source=source, label="h")
    assert not _valid(k64, tb4, limits)
    # one step and tiles take no ZREG
    assert not _valid(kernel, {**zreg, "TB": 1}, limits)
    assert not _valid(kernel, {**zreg, "STREAM": 0, "ZC": 1}, limits)
    box = parse_definition(
        with_steps(ROOT / "tests" / "data" / "definitions" / "box3d_c.stencil.yaml", 8),
        "b.stencil.yaml",
    )
    _, boxed = definition_description(box, sizes)
    assert "temporal-zreg" not in boxed["techniques"] and "ZREG == 0" in boxed["constraints"]


def test_zreg_layouts_hold_the_same_points_per_work_item() -> None:
    """``ZREG = 2`` deals a work-item CX*CY points of the block and the halo round
    robin, ``ZREG = 1`` the whole plane round robin: the block being CX*CY passes of
    the work-group, both hold the same number of points (and queues), so the same
    configurations fit the register bound, across TB, work-groups and blocks. Local
    memory holds two planes in both; ``ZREG = 2`` stores their rows at an odd pitch
    (one point more where the row's points are even), so where that point fits, so does
    the configuration in both layouts."""
    kernel, default, limits = _heat512_stepping()
    lm = kernel.launch.local_memory_bytes
    assert lm is not None
    seen = set()
    for tb in (2, 4, 8):
        for wx, wy in ((32, 8), (32, 16), (16, 16), (64, 4)):
            for cx, cy in ((1, 1), (2, 1), (1, 4), (2, 4), (4, 2)):
                cfg = {**default, "STREAM": 1, "ZC": 32, "TB": tb, "WX": wx, "WY": wy}
                cfg.update({"CX": cx, "CY": cy})
                one, two = ({**cfg, "ZREG": z} for z in (1, 2))
                e1, e2 = ({**kernel.env(c), **limits} for c in (one, two))
                px, py = wx * cx + 2 * tb, wy * cy + 2 * tb
                assert lm.evaluate_int(e1) == 2 * 4 * px * py
                assert lm.evaluate_int(e2) == 2 * 4 * (px + 1 - px % 2) * py
                if lm.evaluate_int(e2) <= limits["LOCAL_MEM_STATIC"]:
                    assert _valid(kernel, one, limits) == _valid(kernel, two, limits), cfg
                seen.add(_valid(kernel, one, limits))
    assert seen == {True, False}


def test_tb4_walk_with_one_barrier_needs_the_static_local_limit() -> None:
    """heat3d's 8-step winner on the H200 (TB 4, 64 x 32, ZS 1, one chunk: 170 % of the
    copy) keeps 8 planes in local memory, 97,280 bytes: outside a space bounded by the
    48 KiB the driver reports, inside one where the kernel's own arrays may take what
    the device was measured to give them (LOCAL_MEM_STATIC)."""
    kernel, default, limits = _heat512_stepping()
    winner = {**default, "STREAM": 1, "ZREG": 2, "ZU": 1, "TB": 4, "VX": 4, "BX": 4}
    winner |= {"WX": 16, "WY": 32, "CX": 1, "CY": 1, "ZC": 512, "ZS": 1}
    reported = {**limits, "LOCAL_MEM_SIZE": 48 * 1024, "LOCAL_MEM_STATIC": 48 * 1024}
    assert not _valid(kernel, winner, reported)
    assert _valid(kernel, winner, {**reported, "LOCAL_MEM_STATIC": 227 * 1024})
    assert _valid(kernel, {**winner, "ZS": 0}, reported)  # one barrier per level fits
    assert kernel.launch.local_memory_bytes is not None
    lm = kernel.launch.local_memory_bytes
    assert lm.evaluate_int({**kernel.env(winner), **reported}) == 8 * 40 * 76 * 4


def test_a_3d_z_star_with_steps_keeps_the_default_strategy() -> None:
    """heat3d with 8 steps (a z-star: temporal-zreg and its z-walk's ZREG, ZU, ZS) is
    searched as `gtune run` means to: hybrid for the one-step techniques, the temporal
    spec for the three temporal ones. The z-walk's parameters belong to temporal-zreg's
    rules (the other techniques hold them at 0); one that no technique held (ZS, before)
    made hybrid not fit and the whole kernel fall back to the generic strategy."""
    from gtune.tuning.strategy import resolve_strategy, spec_misfit

    kernel, _, _ = _heat512_stepping()
    resolved = resolve_strategy(kernel, "hybrid")
    assert resolved.label == "hybrid", resolved.note
    temporal = {"temporal", "temporal-tile", "temporal-zreg"}
    assert set(resolved.technique_options) == temporal
    assert all(resolved.options_for(t)["spec"].name == "temporal" for t in temporal)
    for name in ("ZREG", "ZU", "ZS"):
        for technique in ("temporal", "temporal-tile"):
            assert f"{name} == 0" in [r.text for r in kernel.techniques[technique]]
    from gtune.heuristics import shipped_specs
    from gtune.heuristics.spec import load_spec

    assert "hybrid" in shipped_specs()
    assert spec_misfit(load_spec("hybrid"), kernel) == ""
