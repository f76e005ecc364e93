"""Names reach the MiniZinc model as comments and strings only (gtune/escape.py): a
kernel label, device name or constraint name holding a newline changes nothing in the
space that real MiniZinc solves."""

from __future__ import annotations

import dataclasses

from space_helpers import h100_limits, stencil

from gtune.space.model import build_model, device_dzn, model_mzn
from gtune.space.solve import solve

INJECTED = "k\nconstraint WX = 2;\n%.cl"


def test_a_newline_in_a_name_does_not_reach_the_model_as_code() -> None:
    device = dataclasses.replace(h100_limits(), name="gpu\nWX = 2;")
    model = build_model(stencil(), device)
    first = model.constraints[0]
    hostile = dataclasses.replace(
        model,
        kernel_label=INJECTED,
        constraints=[dataclasses.replace(first, name=f'{first.name}"\n;constraint WX = 2;%'),
                     *model.constraints[1:]],
    )  # fmt: skip
    text = model_mzn(hostile)
    assert not any(line.strip().startswith("constraint WX") for line in text.splitlines())
    assert "WX = 2" not in device_dzn(device.limit_values(), device.name).split("\n", 1)[1]
    clean, _ = solve(model, use_cache=False)
    solved, _ = solve(hostile, use_cache=False)
    assert len(clean) > 7 and len(solved) == len(clean)
