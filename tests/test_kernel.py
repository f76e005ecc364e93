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
