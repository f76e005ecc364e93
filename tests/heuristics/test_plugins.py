"""Strategy plugins found through entry points, and options given as strings.

The plugin is a real distribution on ``sys.path`` (a package plus its ``.dist-info``
with ``entry_points.txt``), found by :mod:`importlib.metadata` like an installed one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gtune.exceptions import EnvironmentProblem, InputError
from gtune.heuristics import available_strategies, get_strategy, tune
from gtune.heuristics.strategies import ENTRY_POINT_GROUP, describe_options

from .conftest import Recorded

ROOT = Path(__file__).resolve().parents[2]

PLUGIN = """
from collections.abc import Mapping
from typing import Any, ClassVar

from gtune.heuristics.strategies.base import BATCH_OPTION, ListSearcher, Option, Strategy


class FirstN(Strategy):
    name: ClassVar[str] = "first-n"
    doc: ClassVar[str] = "the first n configurations of the space, in its order"
    options: ClassVar[Mapping[str, Option]] = {
        "n": Option(5, "how many configurations", (int,)),
        "reverse": Option(False, "take them from the end", (bool,)),
        "batch": BATCH_OPTION,
    }

    def searcher(self, space, problem, options: Mapping[str, Any]):
        configs = list(space.enumerate())
        if options["reverse"]:
            configs.reverse()
        return ListSearcher(configs[: options["n"]], "first-n", options["batch"])


def broken():
    raise RuntimeError("plugin bug")


NOT_A_STRATEGY = 42
"""


def _distribution(root: Path, entry_points: dict[str, str]) -> Path:
    """A distribution ``gtune-demo-plugin`` with the given entry points, under ``root``."""
    (root / "gtune_demo_plugin").mkdir(parents=True)
    (root / "gtune_demo_plugin" / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    info = root / "gtune_demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gtune-demo-plugin\nVersion: 0.1\n")
    lines = [f"[{ENTRY_POINT_GROUP}]"] + [f"{k} = {v}" for k, v in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return root


@pytest.fixture
def plugin_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = _distribution(
        tmp_path / "site",
        {
            "first-n": "gtune_demo_plugin:FirstN",
            "broken": "gtune_demo_plugin:broken",
            "nothing": "gtune_demo_plugin:NOT_A_STRATEGY",
            "random": "gtune_demo_plugin:FirstN",  # cannot shadow a built-in
        },
    )
    monkeypatch.syspath_prepend(str(root))
    return root


def test_installed_plugin_is_found_by_name(plugin_path: Path, recorded: Recorded) -> None:
    assert "first-n" in available_strategies()
    strategy = get_strategy("first-n", {"n": "3"})
    assert strategy.name == "first-n"
    outcome = tune(strategy, recorded.space(), recorded.replay(), recorded.problem())
    assert outcome.evaluations == 3
    assert type(get_strategy("random")).__module__.startswith("gtune.")


def test_broken_plugins_are_named(plugin_path: Path) -> None:
    with pytest.raises(EnvironmentProblem, match=r"plugin 'broken'.*gtune-demo-plugin.*plugin bug"):
        get_strategy("broken")
    with pytest.raises(EnvironmentProblem, match=r"'nothing'.*not a Strategy"):
        get_strategy("nothing")


def test_plugin_works_in_a_fresh_process(plugin_path: Path) -> None:
    code = (
        "from gtune.heuristics import get_strategy\n"
        "s = get_strategy('first-n', {'n': '7', 'reverse': 'yes'})\n"
        "print(s.name, s.configure({})['n'], s.configure({})['reverse'])\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_path), str(ROOT)])}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["first-n", "7", "True"]


def test_builtins_are_declared_as_entry_points() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert f'[project.entry-points."{ENTRY_POINT_GROUP}"]' in text
    for name in ("exhaustive", "expert", "random", "grouped"):
        assert f"\n{name} = " in text


def test_option_strings_are_parsed_to_declared_types() -> None:
    random = get_strategy("random", {"n": "50", "seed": "3", "unpruned": "true"})
    opts = random.configure({})
    assert (opts["n"], opts["seed"], opts["unpruned"], opts["illegal"]) == (50, 3, True, "record")
    assert random.configure({"n": 9})["n"] == 9  # given at tune time wins
    grouped = get_strategy("grouped", {"repeat": "none", "seed": "4", "spec": "dims"})
    assert grouped.configure({}) == {"spec": "dims", "repeat": None, "seed": 4}
    assert get_strategy("hybrid", {"spec": "opts"}).configure({})["spec"] == "opts"
    assert get_strategy("hybrid").configure({})["spec"] == "hybrid"
    limits = get_strategy("expert", {"limits": "VX <= 2; min(WX, WY) >= 8"}).configure({})
    assert limits["limits"] == ["VX <= 2", "min(WX, WY) >= 8"]
    flow = get_strategy("expert", {"limits": "[WX >= 16, VX == 1]"}).configure({})
    assert flow["limits"] == ["WX >= 16", "VX == 1"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"samples": "10"}, r"no option 'samples'; its options: batch, illegal, n, seed, unpruned"),
        ({"n": "ten"}, r"option 'n' of strategy 'random' must be int, got 'ten'"),
        ({"unpruned": "maybe"}, r"must be bool, got 'maybe'"),
        ({"illegal": "skip"}, r"must be one of record, evaluate"),
    ],
)
def test_bad_option_strings_are_named(options: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        get_strategy("random", options)


def test_every_strategy_describes_its_options() -> None:
    for name in available_strategies():
        for key, kind, _default, doc in describe_options(get_strategy(name)):
            assert key and kind and doc


@pytest.mark.parametrize(
    ("strategy", "options"),
    [
        ("random", {"unpruned": "on", "n": "12"}),
        ("random", {"unpruned": "off"}),
        ("expert", {"limits": "[WX >= 16, VX == 1]"}),
        ("expert", {"limits": "VX <= 2; WX >= 8"}),
        ("generic", {"local": "none", "repeat": "1"}),
        ("generic", {"local": "[WX, WY]"}),
    ],
)
def test_one_parser_for_command_line_and_library(strategy: str, options: dict[str, str]) -> None:
    """``--option`` text reads the same through get_strategy (the command line) and
    through gtune.tune's strategy_options (tuning.strategy.coerce_options)."""
    from gtune.tuning.strategy import coerce_options

    by_cli = get_strategy(strategy, options).configure({})
    plugin = get_strategy(strategy)
    by_library = plugin.configure(coerce_options(plugin, options))
    assert by_cli == by_library


def test_option_text_reads_as_declared() -> None:
    assert get_strategy("random", {"unpruned": "on"}).configure({})["unpruned"] is True
    assert get_strategy("generic", {"local": "none"}).configure({})["local"] is None
    assert get_strategy("generic", {"local": "[WX, WY]"}).configure({})["local"] == ["WX", "WY"]


def test_generic_is_registered_like_the_others() -> None:
    assert "generic" in available_strategies()
    generic = get_strategy("generic", {"repeat": "3"})
    assert generic.name == "generic"
    assert generic.configure({})["repeat"] == 3
