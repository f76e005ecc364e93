"""The load predictor's lifted corpus: kernels of ``stencils/plain/manifest.yaml``
lifted into ``benchmarks/predict/corpus/lifted_NAME.stencil.yaml``, as labels of
complete searches and the held-out evaluation read them.

    python3 benchmarks/predict/corpus_defs.py [--kernels NAME ...] [--out DIR]
        [--device SELECTOR] [--groups FILE]

Each kernel is lifted as ``benchmarks/lift_corpus.py`` lifts it (its manifest flags,
its small size, on the given device: PoCL is enough); kernels the manifest expects to be
refused, kernels without a bench size and kernels that advance several steps per
launch (their definitions hold ``steps``: the temporal techniques, not the one-step
labels) are left out, each with its reason. A kernel already in the corpus is kept as it
is (delete its file to lift it again). ``--groups FILE``: also print, for
``collect_complete.sh``, one line per bench size holding the corpus's definitions at
it, and for the 2D ones a line at 4096x4096 too (the issue's realistic 2D sizes are
4096² and 8192²).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from lift_corpus import PLAIN, ROOT, lift_entry  # noqa: E402

from gtune.exceptions import GtuneError  # noqa: E402
from gtune.measure import select_device  # noqa: E402
from gtune.stencils.definition import load_definition  # noqa: E402

CORPUS = HERE / "corpus"


def why_not(entry: dict[str, Any]) -> str | None:
    """Why a manifest entry is not a label of the one-step predictor (None: it is)."""
    if entry.get("expect") == "refuse":
        return "refused by lift (expected)"
    if not entry.get("bench"):
        return "no bench size"
    return None


def lift_one(name: str, entry: dict[str, Any], out: Path, device: Any) -> str:
    """Lift ``name`` into ``out``; what happened, in a few words."""
    path = out / f"lifted_{name}.stencil.yaml"
    if path.exists():
        return "kept (already in the corpus)"
    try:
        defn, _, _ = lift_entry(entry, device, path)
    except GtuneError as exc:
        path.unlink(missing_ok=True)
        return "not lifted: " + exc.render().splitlines()[0]
    if defn.steps > 1:
        path.unlink()
        return f"left out: {defn.steps} steps per launch (the temporal techniques' kernel)"
    return f"lifted: {defn.dims}D, {len(defn.terms)} terms, {defn.storage or defn.dtype}"


def groups(out: Path, manifest: dict[str, Any]) -> list[str]:
    """collect_complete.sh's lines for the corpus: each bench size with its definitions
    (relative to the project root), and the 2D ones again at 4096x4096."""
    at: dict[str, list[str]] = {}
    for path in sorted(out.glob("lifted_*.stencil.yaml")):
        name = path.name.removeprefix("lifted_").removesuffix(".stencil.yaml")
        entry = manifest.get(name)
        if entry is None or not entry.get("bench"):
            continue
        size = str(entry["bench"])
        rel = str(path.relative_to(ROOT))
        at.setdefault(size if size.count("x") == 2 else size + "x1", []).append(rel)
        if load_definition(path).dims == 2:
            at.setdefault("4096x4096x1", []).append(rel)
    return [f"{size} {' '.join(files)}" for size, files in sorted(at.items())]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--kernels", nargs="+", help="manifest names (default: every one)")
    ap.add_argument("--out", type=Path, default=CORPUS)
    ap.add_argument("--device", help="where the kernels are run to lift them")
    ap.add_argument("--groups", type=Path, help="write collect_complete.sh's lines here")
    args = ap.parse_args(argv)
    manifest: dict[str, Any] = yaml.safe_load((PLAIN / "manifest.yaml").read_text())["kernels"]
    unknown = [n for n in args.kernels or [] if n not in manifest]
    if unknown:
        print(f"corpus_defs: not in the manifest: {', '.join(unknown)}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    device = select_device(args.device)
    for name in args.kernels or list(manifest):
        reason = why_not(manifest[name])
        said = f"left out: {reason}" if reason else lift_one(name, manifest[name], args.out, device)
        print(f"{name}: {said}", flush=True)
    if args.groups:
        args.groups.write_text("\n".join(groups(args.out, manifest)) + "\n")
        print(f"groups: {args.groups}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
