"""The drop-in path on a lift corpus run: export each tuned kernel, run it as the docs say.

    python3 benchmarks/lift_export_check.py RUN_DIR [--device SELECTOR] [--kernels NAME ...]
    python3 benchmarks/lift_export_check.py OUT_DIR --winners MERGED.json [--kernels NAME ...]
        [--device SELECTOR]

RUN_DIR is a ``benchmarks/lift_corpus.py`` run made with ``--store``: it holds
``lift_corpus.json``, ``definitions/`` (the lifted definitions) and ``lift.db`` (every
measured configuration). For each kernel of the run this does what a user does with the
result (README, docs/export.md):

    gtune --db RUN_DIR/lift.db export definitions/NAME.stencil.yaml --size SIZE -o tuned/
    python examples/use_tuned_kernel.py tuned/NAME_tuned.json --original NAME.stencil.yaml

The example builds the exported source with the exported options, launches it with the
exported global and local sizes on random data and compares its output with the
original plain kernel's at its shipped launch on the same data (bit for bit for integer
elements). Writes RUN_DIR/export_check.md and .json: per kernel the exported
configuration, the example's verdict and its maximum difference. Exit status 0 when
every kernel matched.

``--winners MERGED.json``: the same check for a result without a store (a merge of runs,
``lift_corpus.py --merge``), without tuning again. For each kernel of MERGED.json (or
those named) it lifts the manifest's kernel as ``lift_corpus.py`` does into
OUT_DIR/definitions/, measures its recorded winner (``lifted_config``, complete) once, for
real, at the recorded size into a fresh store OUT_DIR/lift.db:

    gtune --db OUT_DIR/lift.db measure definitions/NAME.stencil.yaml --size SIZE \\
        --config K=V,... --device P:D

then exports and runs it as above. A winner that no longer measures ok is a FAILED row
with its status and message; each row holds the seconds its steps took (lifting,
measuring, exporting and running the example). Writes OUT_DIR/lift_corpus.json
(MERGED.json with the rows checked) beside the reports, rewritten after each kernel (a
run cut short keeps what it finished); progress on standard error. Exit status 2 for a
missing or malformed MERGED.json or a kernel it does not hold.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ME = "lift_export_check"


def run(cmd: list[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, check=False)


def said(done: subprocess.CompletedProcess[str]) -> str:
    return (done.stdout + done.stderr).strip()


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def check_kernel(
    name: str, size: str, definition: Path, store: Path, tuned_dir: Path, env: Mapping[str, str]
) -> dict[str, Any]:
    """``gtune export`` of the store's best configuration of ``definition`` at ``size``,
    run by the example against the original: the kernel's row."""
    done = run(
        [sys.executable, "-m", "gtune", "--db", str(store), "export", str(definition),
         "--size", size, "-o", str(tuned_dir)],
        env,
    )  # fmt: skip
    if done.returncode != 0:
        progress(f"{name}: export failed\n{said(done)}")
        return {"kernel": name, "size": size, "ok": False, "export": said(done)}
    exported = json.loads((tuned_dir / f"{name}_tuned.json").read_text())
    done = run(
        [sys.executable, "examples/use_tuned_kernel.py",
         str(tuned_dir / f"{name}_tuned.json"), "--original", str(definition)],
        env,
    )  # fmt: skip
    ok = done.returncode == 0
    progress(f"{name} {size}: {'matches the original' if ok else 'FAILED'}\n{said(done)}")
    return {
        "kernel": name,
        "size": size,
        "ok": ok,
        "configuration": exported.get("configuration"),
        "example": said(done),
    }


def write_reports(out: Path, rows: Sequence[Mapping[str, Any]], head: Sequence[str]) -> None:
    """OUT/export_check.md (``head``, then a row per kernel) and OUT/export_check.json."""
    md = [
        *head,
        "",
        "| kernel | size | exported configuration | the example's check |",
        "| --- | --- | --- | --- |",
    ]
    for r in rows:
        cfg = r.get("configuration") or {}
        conf = " ".join(f"{a}={b}" for a, b in cfg.items()) if isinstance(cfg, dict) else ""
        detail = str(r.get("note") or r.get("example") or r.get("export") or "").splitlines()
        checks = [line for line in detail if "max |" in line] or detail[-1:]
        verdict = "; ".join(checks).replace("|", "\\|")
        status = "ok" if r["ok"] else "FAILED"
        md.append(f"| {r['kernel']} | {r.get('size', '')} | {conf} | {status}: {verdict} |")
    (out / "export_check.md").write_text("\n".join(md) + "\n")
    (out / "export_check.json").write_text(json.dumps(rows, indent=1) + "\n")


def tool_env(device: str | None) -> dict[str, str]:
    """The environment of the gtune and example commands: this tree's package first and,
    given a selector, the example's device (``PYOPENCL_CTX``)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    if device:
        env["PYOPENCL_CTX"] = device
    return env


def unknown_kernels(names: Sequence[str], held: Mapping[str, Any], where: object) -> bool:
    """True (and one message) when a name is not among ``held``'s kernels."""
    unknown = [n for n in names if n not in held]
    if unknown:
        progress(f"{ME}: not a kernel of {where}: {', '.join(unknown)}")
    return bool(unknown)


def load_winners(path: Path) -> dict[str, Any] | None:
    """MERGED.json, or None after one message when it is missing or not a lift_corpus.py
    result (a ``kernels`` mapping whose rows have ``size`` and ``lifted_config``, or
    ``error``)."""
    try:
        data: object = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        progress(f"{ME}: {path}: cannot read it as JSON ({exc})")
        return None
    if not isinstance(data, dict):
        progress(f"{ME}: {path}: not a lift_corpus.py result (not a JSON object)")
        return None
    kernels = data.get("kernels")
    if not isinstance(kernels, dict) or not kernels:
        progress(f"{ME}: {path}: not a lift_corpus.py result (no 'kernels' mapping)")
        return None
    for name, k in kernels.items():
        good = isinstance(k, dict) and (
            "error" in k
            or (isinstance(k.get("size"), str) and isinstance(k.get("lifted_config"), dict))
        )
        if not good:
            progress(f"{ME}: {path}: kernel {name}: no 'size' and 'lifted_config' (nor 'error')")
            return None
    return data


def measure_winner(
    name: str, k: Mapping[str, Any], definition: Path, store: Path, env: Mapping[str, str]
) -> dict[str, Any]:
    """``gtune measure`` of the recorded winner into ``store``: its status and median
    when it measured ok with that configuration (parameters the template gained since at
    their defaults), else the kernel's FAILED row (``ok`` false)."""
    config: dict[str, int] = k["lifted_config"]
    size = k["size"]
    text = ",".join(f"{a}={b}" for a, b in config.items())
    done = run(
        [sys.executable, "-m", "gtune", "--db", str(store), "measure", str(definition),
         "--size", size, "--config", text, "--device", env["PYOPENCL_CTX"], "--json"],
        env,
    )  # fmt: skip
    row = {"kernel": name, "size": size, "ok": False, "configuration": config}
    try:
        result = json.loads(done.stdout)
    except ValueError:
        lines = said(done).splitlines()  # gtune's error: no result, or a failed build
        failed = "build_failed" if "does not compile" in said(done) else "error"
        progress(f"{name}: the winner was not measured ({failed})\n{said(done)}")
        return {**row, "status": failed, "note": f"measure: {failed}: {' '.join(lines[-3:])}"}
    status, message = str(result.get("status")), str(result.get("message") or "")
    if status != "ok":
        progress(f"{name}: the winner measured {status}: {message}")
        return {**row, "status": status, "note": f"measure: {status}: {message}"[:2000]}
    measured = dict(result.get("config") or {})
    if any(measured.get(k) != v for k, v in config.items()):
        progress(f"{name}: measured {result.get('config')}, not the recorded {config}")
        return {
            **row,
            "status": "incomplete",
            "note": f"measure: measured {result.get('config')}, not the recorded configuration",
        }
    # parameters the template has gained since the winner was recorded take their
    # defaults (the code the recorded configuration ran): named in the row
    added = {k: v for k, v in measured.items() if k not in config}
    progress(f"{name}: the winner measured ok, median {result['median_s'] * 1e3:.4f} ms")
    row = {"status": "ok", "measured_s": result["median_s"]}
    return {**row, "defaults_added": added} if added else row


def check_winners(args: argparse.Namespace) -> int:
    """``--winners``: each kernel lifted again, its recorded winner measured into a fresh
    store, exported and run by the example."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import yaml
    from lift_corpus import PLAIN, lift_entry

    from gtune.exceptions import GtuneError
    from gtune.measure import select_device

    out: Path = args.run_dir.resolve()
    merged = load_winners(args.winners)
    manifest = yaml.safe_load((PLAIN / "manifest.yaml").read_text())["kernels"]
    if merged is None:
        return 2
    names = args.kernels or list(merged["kernels"])
    if unknown_kernels(names, merged["kernels"], args.winners):
        return 2
    if unknown_kernels(names, manifest, PLAIN / "manifest.yaml"):
        return 2
    store, tuned_dir = out / "lift.db", out / "tuned"
    if store.exists() or tuned_dir.exists():
        progress(f"{ME}: {out} holds an earlier check (lift.db, tuned/): give a new OUT_DIR")
        return 2
    try:
        device = select_device(args.device)
    except GtuneError as exc:
        progress(f"{ME}: {exc.render()}")
        return 2
    (out / "definitions").mkdir(parents=True, exist_ok=True)
    env = tool_env(device.selector)
    head = [
        "# The merged result's winners, exported and run by examples/use_tuned_kernel.py",
        "",
        f"Device: {device.name}. The configurations are {args.winners}'s recorded winners "
        "(`lifted_config`), measured once more (`gtune measure`, into a fresh store) and "
        "exported; nothing tuned again.",
        "",
        f"    python3 benchmarks/lift_export_check.py {shlex.join(sys.argv[1:])}",
    ]
    checked = {**merged, "kernels": {}, "winners_of": str(args.winners)}
    rows: list[dict[str, Any]] = []
    for i, name in enumerate(names, 1):
        k = merged["kernels"][name]
        checked["kernels"][name] = k
        definition = out / "definitions" / f"{name}.stencil.yaml"
        progress(f"[{i}/{len(names)}] {name} {k.get('size', '')}")
        row: dict[str, Any] = {"kernel": name, "size": k.get("size"), "ok": False}
        if "error" in k:
            row["note"] = "no tuned result in the merged result"
        else:
            try:
                started = time.monotonic()
                lift_entry(manifest[name], device, definition)
                lifted = time.monotonic()
                row = measure_winner(name, k, definition, store, env)
                row["seconds"] = {"lift": lifted - started, "measure": time.monotonic() - lifted}
            except GtuneError as exc:
                row["note"] = f"not lifted: {exc.render()}"
                progress(f"{name}: {row['note']}")
        if "measured_s" in row:  # the winner measured ok
            started = time.monotonic()
            row = {**check_kernel(name, k["size"], definition, store, tuned_dir, env), **row}
            row["seconds"]["export and example"] = time.monotonic() - started
        rows.append(row)
        (out / "lift_corpus.json").write_text(json.dumps(checked, indent=1, default=str))
        write_reports(out, rows, head)
    progress(f"{sum(r['ok'] for r in rows)} of {len(rows)} kernels ok: {out / 'export_check.md'}")
    return 0 if rows and all(r["ok"] for r in rows) else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("run_dir", type=Path, metavar="RUN_DIR|OUT_DIR")
    ap.add_argument(
        "--device",
        help="RUN_DIR: PYOPENCL_CTX for the example (default: pyopencl's first device, as "
        "the example); --winners: gtune's device selector (P:D, identity or name; default: "
        "the first GPU), the example given the same device",
    )
    ap.add_argument(
        "--winners",
        type=Path,
        metavar="MERGED.json",
        help="check this result's recorded winners (no store needed) into OUT_DIR",
    )
    ap.add_argument("--kernels", nargs="+", metavar="NAME", help="only these kernels")
    args = ap.parse_args()
    if args.winners:
        return check_winners(args)
    run_dir = args.run_dir.resolve()
    summary = run_dir / "lift_corpus.json"
    partial = run_dir / "lift_corpus.partial.json"  # a run cut by its time limit
    if summary.exists():
        data = json.loads(summary.read_text())
    elif partial.exists():
        data = {"kernels": json.loads(partial.read_text()), "device": None}
    else:
        progress(f"{summary}: no such file, nor {partial.name}")
        return 2
    store = run_dir / "lift.db"
    if not store.exists():
        progress(f"{store}: no store (run lift_corpus.py with --store, or use --winners)")
        return 2
    names = args.kernels or list(data["kernels"])
    if unknown_kernels(names, data["kernels"], run_dir / "lift_corpus.json"):
        return 2
    env = tool_env(args.device)
    rows: list[dict[str, Any]] = []
    for name in names:
        k = data["kernels"][name]
        definition = run_dir / "definitions" / f"{name}.stencil.yaml"
        if "error" in k or not definition.exists():
            rows.append({"kernel": name, "ok": False, "note": "no tuned result in this run"})
            continue
        rows.append(check_kernel(name, str(k["size"]), definition, store, run_dir / "tuned", env))
    head = [
        "# The exported lifted kernels, run by examples/use_tuned_kernel.py",
        "",
        f"Device: {data.get('device')}.",
        "",
        f"    python3 benchmarks/lift_export_check.py {args.run_dir}",
    ]
    write_reports(run_dir, rows, head)
    return 0 if rows and all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
