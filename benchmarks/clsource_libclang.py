"""gtune.clsource (cpp + regular expressions) against libclang's Python bindings (-x cl).

Reads every kernel of ``stencils/`` and ``tests/data/`` both ways and compares the
``__kernel`` functions found and their parameter counts. Needs ``pip install libclang``
(not a gtune dependency) and the OpenCL headers of a system LLVM (``opencl-c.h``; the
wheel ships none): ``python benchmarks/clsource_libclang.py [LLVM_INCLUDE_DIR]``.

Measured 2026-11-29 (libclang 18.1.1 wheel, LLVM 15 headers), 52 files: the same kernels
and parameter counts in all 50 files cpp accepts without ``-D`` values; the other two
(``tile_square*.cl``) stop at their own ``#error`` without a tile size, as intended.
libclang reported errors in 11 files for macros given at build time (``NX``,
``DATA_TYPE``), as cpp would need them too. Both take well under a second for all of
them. libclang gives an AST, but gtune's read/written analysis of each array would have
to be written anew over it; the wheel is 62 MB and parses bodies only with headers that
the GPU host bundle lacks. The regular expressions stay (``gtune/clsource.py``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import clang.cindex as ci  # type: ignore[import-not-found]

from gtune import clsource

ROOT = Path(__file__).resolve().parents[1]
HEADERS = sys.argv[1] if len(sys.argv) > 1 else "/usr/lib/llvm-15/lib/clang/15.0.6/include"
ARGS = ["-x", "cl", "-cl-std=CL1.2", "-Xclang", "-fdeclare-opencl-builtins"]
ARGS += ["-Xclang", "-finclude-default-header", "-isystem", HEADERS]


def by_regex(path: Path) -> dict[str, int]:
    text = clsource.preprocess(path.read_text(), {}, where=str(path))
    return {k: len(d.params) for k, d in clsource.find_kernels(text).items()}


def by_clang(index: ci.Index, path: Path) -> tuple[dict[str, int], int]:
    unit = index.parse(str(path), args=ARGS)
    errors = sum(1 for d in unit.diagnostics if d.severity >= ci.Diagnostic.Error)
    found = {}
    for c in unit.cursor.get_children():
        if c.kind != ci.CursorKind.FUNCTION_DECL or not c.is_definition():
            continue
        if c.location.file is None or c.location.file.name != str(path):
            continue
        head = [t.spelling for t in c.get_tokens()][:8]
        if "kernel" in head or "__kernel" in head:
            found[c.spelling] = len(list(c.get_arguments()))
    return found, errors


def main() -> None:
    files = sorted([*ROOT.glob("stencils/**/*.cl"), *ROOT.glob("tests/data/**/*.cl")])
    index = ci.Index.create()
    same = with_errors = 0
    spent = {"regex": 0.0, "clang": 0.0}
    for path in files:
        t0 = time.perf_counter()
        try:
            regex: dict[str, int] | str = by_regex(path)
        except Exception as exc:
            regex = type(exc).__name__
        t1 = time.perf_counter()
        clang, errors = by_clang(index, path)
        spent["regex"] += t1 - t0
        spent["clang"] += time.perf_counter() - t1
        same += regex == clang
        with_errors += errors > 0
        print(f"{'same' if regex == clang else 'DIFF'} {path.relative_to(ROOT)}: "
              f"regex {regex}, clang {clang}, clang errors {errors}")  # fmt: skip
    print(f"{len(files)} files: {same} the same, {with_errors} with clang errors; "
          f"regex {spent['regex']:.2f} s, clang {spent['clang']:.2f} s")  # fmt: skip


if __name__ == "__main__":
    main()
