"""docs/architecture.md names every module of the package, and the layers it draws hold:
nothing imports upward (found by reading every module's imports, lazy ones included)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "gtune"


def _modules() -> list[Path]:
    return sorted(p.relative_to(ROOT) for p in PACKAGE.rglob("*.py"))


def _paragraphs(text: str) -> list[str]:
    """Paragraphs and list items: a module may be named in one by its package's path
    and its file name (``gtune/space/`` ... ``solve.py``)."""
    return [p for p in re.split(r"\n\s*\n|\n(?=- )", text) if p.strip()]


def _named(module: Path, text: str, paragraphs: list[str]) -> bool:
    path = module.as_posix()
    package = module.parent.as_posix() + "/"
    if module.name == "__init__.py":
        return package in text
    if path in text:
        return True
    return any(package in p and f"`{module.name}`" in p for p in paragraphs)


def test_every_module_is_named_on_the_architecture_page() -> None:
    text = PAGE.read_text()
    paragraphs = _paragraphs(text)
    missing = [m.as_posix() for m in _modules() if not _named(m, text, paragraphs)]
    assert not missing, f"docs/architecture.md does not name: {', '.join(missing)}"


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gtune"):
            found.add(node.module)
            if node.module == "gtune":
                found.update(f"gtune.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("gtune"))
    return found


# What each lower layer must never import (the page's "Layers", bottom to top).
ABOVE_TUNING = (
    *("gtune.api", "gtune.campaign", "gtune.training", "gtune.comparison", "gtune.split"),
    *("gtune.report", "gtune.progress", "gtune.testing", "gtune.commands", "gtune.cli"),
    "gtune.runtime",
)
ABOVE_KERNELS = (
    *ABOVE_TUNING,
    *("gtune.tuning", "gtune.heuristics", "gtune.space", "gtune.measure", "gtune.store"),
    "gtune.loadpredict",
)
# The kernel model: what a kernel is, read from its files; it runs nothing.
KERNELS = (
    *("kernel", "description", "plain", "clsource", "includes", "features", "tuned"),
    "stencils",
)
# The foundations under it.
BOTTOM = ("device", "result", "budget", "expr", "inputs", "exceptions", "convergence")
FORBIDDEN = {
    "gtune/tuning": ABOVE_TUNING,
    "gtune/heuristics": (*ABOVE_TUNING, "gtune.tuning"),
    "gtune/space": (*ABOVE_TUNING, "gtune.tuning", "gtune.heuristics"),
    "gtune/measure": (*ABOVE_TUNING, "gtune.tuning", "gtune.heuristics"),
    "gtune/store": (*ABOVE_TUNING, "gtune.tuning", "gtune.heuristics"),
    "gtune/loadpredict": (*ABOVE_TUNING, "gtune.tuning", "gtune.heuristics"),
    **{f"gtune/{m}": ABOVE_KERNELS for m in KERNELS},
    **{f"gtune/{m}": (*ABOVE_KERNELS, *(f"gtune.{k}" for k in KERNELS)) for m in BOTTOM},
}


def _files(layer: str) -> list[Path]:
    """A package's modules, or one module (``gtune/kernel`` is ``gtune/kernel.py``)."""
    folder = ROOT / layer
    return sorted(folder.rglob("*.py")) if folder.is_dir() else [folder.with_suffix(".py")]


def _upward(layer: str) -> list[str]:
    bad = []
    for path in _files(layer):
        for name in _imports(path):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[layer]):
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    return bad


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_upward_imports(layer: str) -> None:
    assert all(p.is_file() for p in _files(layer)), f"{layer}: no such module"
    bad = _upward(layer)
    assert not bad, "; ".join(bad)


# The modules that import pyopencl: the measuring workers' backend, and the runtime that
# runs inside the user's application with the user's context (docs/runtime.md).
PYOPENCL_MODULES = {"gtune/measure/_opencl.py", "gtune/runtime/opencl.py"}


def _imports_pyopencl(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pyopencl":
            return True
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "pyopencl" for a in node.names
        ):
            return True
        dynamic = isinstance(node, ast.Call) and getattr(node.func, "id", "") == "__import__"
        if dynamic and any(
            isinstance(a, ast.Constant) and a.value == "pyopencl" for a in node.args
        ):  # type: ignore[attr-defined]
            return True
    return False


def test_only_the_backend_and_the_runtime_import_pyopencl() -> None:
    """The search, the command line and the kernel model never load OpenCL in gtune's
    own process; the runtime does, on purpose, in the application's."""
    found = {m.as_posix() for m in _modules() if _imports_pyopencl(ROOT / m)}
    assert found == PYOPENCL_MODULES


def test_commands_that_fit_no_model_do_not_import_scikit_learn() -> None:
    """scikit-learn takes about 2 s to import: the command line (every command's parser)
    and a tuning run's modules load it only when a load-predictor model is fitted."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import gtune.cli, gtune.api, gtune.loadpredict, gtune.training\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sklearn', 'scipy')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]"
    fitted = subprocess.run(
        [sys.executable, "-c", "import gtune.loadpredict as lp, sys\n"
         "print(lp.TechniqueForest.__module__, 'sklearn' in sys.modules)"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert fitted.stdout.split() == ["gtune.loadpredict.model", "True"]


def test_worker_processes_import_only_what_they_run() -> None:
    """Every evaluator starts a measuring worker and a reference process (and campaigns
    many more): ``import gtune`` loads the library's entry points on first use, so these
    processes start without the search, the CLI or the stencil generator (0.3 s less),
    while ``gtune.tune`` and the rest stay where the library documents them."""
    import subprocess
    import sys

    heavy = ("gtune.api", "gtune.heuristics", "gtune.tuning", "gtune.cli", "gtune.stencils")
    code = (
        "import sys\n"
        "import gtune.measure._worker, gtune.measure._reference\n"
        f"print(sorted(m for m in sys.modules if m.startswith({heavy!r})))\n"
        "import gtune\n"
        "print(gtune.tune.__module__, gtune.TunedKernel.__module__, 'tune' in dir(gtune))\n"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    loaded, public = done.stdout.splitlines()
    assert loaded == "[]"
    assert public.split() == ["gtune.api", "gtune.tuned", "True"]
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        import gtune

        _ = gtune.nothing  # type: ignore[attr-defined]


MAX_FUNCTION_LINES = 100


def _long_functions(path: Path) -> list[tuple[str, int]]:
    """Every function (methods and nested ones too) over the limit: name and lines."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    found.append((prefix + child.name, lines))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text()), "")
    return found


def test_no_function_is_longer_than_100_lines() -> None:
    """A reader holds a function whole: longer ones are split into named steps."""
    offenders = [
        f"{path.relative_to(ROOT).as_posix()}:{name} ({lines} lines)"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, lines in _long_functions(path)
    ]
    assert not offenders, f"over {MAX_FUNCTION_LINES} lines: " + "; ".join(offenders)


def test_the_length_check_sees_long_functions(tmp_path: Path) -> None:
    """Methods count as functions, and 101 lines is one too many."""
    module = tmp_path / "m.py"
    for statements, found in ((MAX_FUNCTION_LINES, [("C.m", 101)]), (MAX_FUNCTION_LINES - 1, [])):
        body = "".join(f"        x{i} = {i}\n" for i in range(statements))
        module.write_text(f"class C:\n    def m(self) -> None:\n{body}")
        assert _long_functions(module) == found
