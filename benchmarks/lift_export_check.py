"""The drop-in path on a lift corpus run: export each tuned kernel, run it as the docs say.

    python3 benchmarks/lift_export_check.py RUN_DIR [--device SELECTOR]

RUN_DIR is a ``benchmarks/lift_corpus.py`` run made with ``--store``: it holds
``lift_corpus.json``, ``definitions/`` (the lifted definitions) and ``lift.db`` (every
measured configuration). For each kernel of the run this does what a user does with the
result (README, docs/export.md):

    gtune --db RUN_DIR/lift.db export definitions/NAME.stencil.yaml --size SIZE -o tuned/
    python examples/use_tuned_kernel.py tuned/NAME_tuned.json --original NAME.stencil.yaml

The example builds the exported source with the exported options, launches it with the
exported global and local sizes on random data and compares its output with the
original plain kernel's at its shipped launch on the same data. Writes
RUN_DIR/export_check.md and .json: per kernel the exported configuration, the example's
verdict and its maximum difference. Exit status 0 when every kernel matched.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(cmd: list[str], env: dict[str, str]) -> tuple[int, str]:
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    return done.returncode, (done.stdout + done.stderr).strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument(
        "--device",
        help="PYOPENCL_CTX for the example (default: pyopencl's first device, as the example)",
    )
    args = ap.parse_args()
    run_dir = args.run_dir.resolve()
    data = json.loads((run_dir / "lift_corpus.json").read_text())
    store = run_dir / "lift.db"
    if not store.exists():
        print(f"{store}: no store (run lift_corpus.py with --store)", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    if args.device:
        env["PYOPENCL_CTX"] = args.device
    tuned_dir = run_dir / "tuned"
    rows: list[dict[str, object]] = []
    for name, k in data["kernels"].items():
        definition = run_dir / "definitions" / f"{name}.stencil.yaml"
        if "error" in k or not definition.exists():
            rows.append({"kernel": name, "ok": False, "note": "no tuned result in this run"})
            continue
        size = str(k["size"])
        rc, out = run(
            [sys.executable, "-m", "gtune", "--db", str(store), "export", str(definition),
             "--size", size, "-o", str(tuned_dir)],
            env,
        )  # fmt: skip
        if rc != 0:
            rows.append({"kernel": name, "size": size, "ok": False, "export": out})
            print(f"{name}: export failed\n{out}", flush=True)
            continue
        exported = json.loads((tuned_dir / f"{name}_tuned.json").read_text())
        rc, out = run(
            [sys.executable, "examples/use_tuned_kernel.py",
             str(tuned_dir / f"{name}_tuned.json"), "--original", str(definition)],
            env,
        )  # fmt: skip
        rows.append(
            {
                "kernel": name,
                "size": size,
                "ok": rc == 0,
                "configuration": exported.get("configuration"),
                "example": out,
            }
        )
        print(
            f"{name} {size}: {'matches the original' if rc == 0 else 'FAILED'}\n{out}", flush=True
        )
    md = [
        "# The exported lifted kernels, run by examples/use_tuned_kernel.py",
        "",
        f"Device: {data.get('device')}.",
        "",
        f"    python3 benchmarks/lift_export_check.py {args.run_dir}",
        "",
        "| kernel | size | exported configuration | the example's check |",
        "| --- | --- | --- | --- |",
    ]
    for r in rows:
        cfg = r.get("configuration") or {}
        conf = " ".join(f"{a}={b}" for a, b in cfg.items()) if isinstance(cfg, dict) else ""
        detail = str(r.get("example") or r.get("export") or r.get("note", "")).splitlines()
        checks = [line for line in detail if "max |" in line] or detail[-1:]
        verdict = "; ".join(checks).replace("|", "\\|")
        status = "ok" if r["ok"] else "FAILED"
        md.append(f"| {r['kernel']} | {r.get('size', '')} | {conf} | {status}: {verdict} |")
    (run_dir / "export_check.md").write_text("\n".join(md) + "\n")
    (run_dir / "export_check.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if rows and all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
