import re
from pathlib import Path

import pytest

from gtune.description import from_dict, load_kernel
from gtune.exceptions import ExpressionError, InputError
from gtune.kernel import canonical_config, domain_values


def test_load_description_beside_kernel(data_dir: Path):
    k = load_kernel(data_dir / "naive7.cl")
    assert k.name == "naive7"
    assert k.parameter_names == ["WX", "WY", "WZ"]
    assert k.default_config() == {"WX": 8, "WY": 4, "WZ": 1}
    assert domain_values(k)["WX"] == [1, 2, 4, 8, 16, 32]
    glob, loc = k.launch_sizes({"WX": 8, "WY": 4, "WZ": 1})
    assert glob == (32, 16, 8) and loc == (8, 4, 1)
    assert "-DNX=32" in k.defines({"WX": 8, "WY": 4, "WZ": 1})
    # 2 float arrays of 32*16*8 elements
    assert k.bytes_moved() == 2 * 32 * 16 * 8 * 4


def test_sizes_override_changes_identity(data_dir: Path):
    k = load_kernel(data_dir / "naive7.yaml")
    k2 = k.with_sizes({"NX": 64})
    assert k2.sizes["NX"] == 64 and k2.sizes["NY"] == 16
    assert k.identity() != k2.identity()
    assert from_dict(k2.to_dict()).identity() == k2.identity()
    with pytest.raises(InputError, match="unknown problem size name 'NW'"):
        k.with_sizes({"NW": 3})


def test_canonical_config_is_order_independent():
    assert canonical_config({"WY": 2, "WX": 1}) == canonical_config({"WX": 1, "WY": 2})


def _edit(kernel_copy, old: str, new: str) -> Path:
    def edit(text: str) -> str:
        assert old in text
        return text.replace(old, new)

    return kernel_copy("naive7", edit)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "kernel: naive7",
            "kernel: 3x",
            r"naive7.yaml: kernel: must be the kernel function's name",
        ),
        (
            "  - WX * WY * WZ <= MAX_WORK_GROUP_SIZE",
            "  - WX * WQ <= 4",
            r"constraints\[0\]: unknown name 'WQ'",
        ),
        (
            "  - WX * WY * WZ <= MAX_WORK_GROUP_SIZE",
            "  - WX * <= 4",
            r"constraints\[0\]: cannot parse",
        ),
        (
            "WX: {pow2: [1, NX], default: 8}",
            "WX: {pow3: [1, NX]}",
            r"parameters\.WX: give exactly one of",
        ),
        (
            "WX: {pow2: [1, NX], default: 8}",
            "WX: {pow2: [1, WY]}",
            r"parameters\.WX: domain may only use",
        ),
        ("role: input, shape", "role: sideways, shape", r"arguments\[0\]\.role: must be input"),
        ("problem: {NX: 32", "problem: {NX: -2", r"problem\.NX: must be a positive integer"),
        ("launch:", "lunch:", r"naive7.yaml: lunch: unknown key"),
        (
            'reference: {python: "naive7_ref.py:reference"}',
            'reference: {python: "nope.py:f"}',
            r"reference\.python: reference file 'nope.py' not found",
        ),
        (
            "global: [NX, NY, NZ]",
            "global: [NX, NY, NZ, NX]",
            r"launch\.global: must be a list of 1 to 3",
        ),
    ],
)
def test_bad_descriptions_name_file_and_key(kernel_copy, old, new, message):
    path = _edit(kernel_copy, old, new)
    with pytest.raises((InputError, ExpressionError), match=message):
        load_kernel(path)


def test_malformed_yaml_names_line(kernel_copy):
    path = _edit(kernel_copy, "constraints:", "constraints: [unclosed")
    with pytest.raises(InputError, match=r"naive7.yaml:\d+: malformed YAML"):
        load_kernel(path)


def test_missing_description_explains(tmp_path: Path):
    cl = tmp_path / "k.cl"
    cl.write_text("__kernel void k() {}")
    with pytest.raises(InputError, match="no kernel description found"):
        load_kernel(cl)
    with pytest.raises(InputError, match="file not found"):
        load_kernel(tmp_path / "absent.cl")


# ---------------------------------------------------------------------------------
# Local arguments: a __local buffer the host sizes per launch (kind: local)


def _with_local(local: dict[str, object], **params: object) -> dict[str, object]:
    """A description whose third argument is ``local`` (a tiled 2D kernel)."""
    return {
        "kernel": "k",
        "problem": {"NX": 32, "NY": 16},
        "arguments": [
            {"name": "a", "role": "input", "shape": ["NY", "NX"]},
            {"name": "b", "role": "output", "shape": ["NY", "NX"]},
            {"name": "sh", **local},
        ],
        "parameters": params or {"WX": {"pow2": [1, 16], "default": 8}, "WY": [1, 2, 4]},
        "launch": {"global": ["NX", "NY"], "local": ["WX", "WY"]},
    }


def test_a_local_argument_is_sized_per_configuration() -> None:
    from gtune.description import parse_description

    raw = _with_local({"kind": "local", "dtype": "float64", "shape": ["(WX+2)*(WY+2)"]})
    k = parse_description(raw, source="", label="k.yaml")
    sh = k.arguments[2]
    assert sh.kind == "local" and sh.dtype == "float64" and sh.itemsize == 8
    assert k.local_arguments({"WX": 8, "WY": 4}) == {"sh": 10 * 6 * 8}
    # no data: not an array of the problem (bandwidth, points, initial arrays)
    assert k.bytes_moved() == 2 * 32 * 16 * 4 and k.points() == 32 * 16
    assert from_dict(k.to_dict()).local_arguments({"WX": 2, "WY": 1}) == {"sh": 4 * 3 * 8}


@pytest.mark.parametrize(
    ("local", "where", "message"),
    [
        ({"kind": "local", "shape": ["(WX+2)*(WQ+2)"]}, r"\]\.shape", "unknown name 'WQ'"),
        ({"kind": "local"}, r"arguments\[2\]\.shape", "needs its size in elements"),
        ({"kind": "local", "shape": []}, r"arguments\[2\]\.shape", "needs its size"),
        ({"kind": "local", "shape": ["WX-8"]}, r"arguments\[2\]\.shape", "has 0 elements"),
        ({"kind": "local", "shape": ["NX-40"]}, r"arguments\[2\]\.shape", "has -8 elements"),
        ({"kind": "local", "shape": ["NX/(WY-1)"]}, r"arguments\[2\]\.shape", "division by zero"),
        ({"kind": "local", "shape": ["NX"], "role": "output"}, r"\.role", "holds no data"),
        ({"kind": "local", "shape": ["NX"], "init": "zeros"}, r"\.init", "holds no data"),
        ({"kind": "local", "shape": ["NX"], "dtype": "half"}, r"\.dtype", "unknown dtype"),
        ({"kind": "tile", "shape": ["NX"]}, r"\.kind", "must be buffer, scalar or local"),
    ],
)
def test_bad_local_arguments_name_the_key(
    local: dict[str, object], where: str, message: str
) -> None:
    from gtune.description import parse_description

    params = {"WX": {"pow2": [1, 16], "default": 8}, "WY": {"values": [1, 2], "default": 1}}
    with pytest.raises((InputError, ExpressionError), match=message) as info:
        parse_description(_with_local(local, **params), source="", label="k.yaml")
    assert str(info.value.source).startswith("k.yaml") and "k.yaml" in info.value.render()
    assert re.search(where, info.value.render())


def test_an_array_cannot_copy_a_local_argument() -> None:
    from gtune.description import parse_description

    raw = _with_local({"kind": "local", "shape": ["WX*WY"]})
    raw["arguments"][1]["init"] = "copy:sh"  # type: ignore[index]
    with pytest.raises(InputError, match="init copies unknown argument 'sh'"):
        parse_description(raw, source="", label="k.yaml")
