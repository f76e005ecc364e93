"""Numbers in a stencil definition are read within limits (gtune/stencils/definition.py,
gtune/inputs.py): a coefficient written with thousands of digits is one clear error,
never Python's int-conversion traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from gtune.exceptions import InputError
from gtune.stencils.definition import MAX_NUMBER_DIGITS, load_definition, parse_definition
from tests.inprocess import Cli

BASE = "dims: 2\nfields: [A]\noutput: B\nterms:\n- {field: A, coefficient: %s}\n"


@pytest.mark.parametrize(
    "coefficient",
    ["'1" + "0" * 5000 + "/3'", "'1" + "0" * 5000 + "'", "'3/1" + "0" * 5000 + "'",
     "1" + "0" * 5000, "1" + "0" * 100, "'0.5*1" + "0" * 60 + "'"],
    ids=["rational", "quoted", "denominator", "plain-int", "long-int", "product"],
)  # fmt: skip
def test_a_coefficient_with_too_many_digits_is_refused(
    tmp_path: Path, coefficient: str, gtune_here: Cli
) -> None:
    path = tmp_path / "big.stencil.yaml"
    path.write_text(BASE % coefficient)
    with pytest.raises(InputError, match="digits") as info:
        load_definition(path)
    assert len(info.value.render()) < 400  # the number itself is not echoed
    done = gtune_here("space", str(path), "--size", "64x64", "--device", "none-such")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "big.stencil.yaml" in done.stderr and "digits" in done.stderr


def test_numbers_a_double_holds_are_taken() -> None:
    for coefficient in ("1.5e300", "1/3", "0." + "3" * (MAX_NUMBER_DIGITS - 1), 10**30):
        data = {"dims": 2, "fields": ["A"], "output": "B",
                "terms": [{"field": "A", "coefficient": coefficient}]}  # fmt: skip
        assert parse_definition(data, "ok.stencil.yaml").terms
