"""Audit gtune against bad inputs and faults; count how each one ends.

    python3 benchmarks/audit.py OUT [--generated N] [--seed S] [--skip-opencl]

Runs a corpus of concrete bad inputs through ``python -m gtune`` (each in its own
process, under a memory limit and a timeout, tagged through its environment so that any
process it leaves behind is found): descriptions, specs, kernels, command-line flags,
store and environment faults, and interruptions (SIGINT, SIGTERM, SIGHUP, SIGKILL during a
tuning run). Every known defect class has at least one hand-written case; ``--generated``
adds seeded random mutations of the shipped descriptions, specs and command lines.

Outcomes: ``clean`` (exit 2 with a ``gtune: error:`` message naming the input), ``ok``
(exit 0, the input was fine), ``expected`` (killed by SIGKILL, nothing left behind),
``traceback``, ``hang``, ``orphan`` (a worker outlived gtune), ``stale`` (a stored result
served although what it depends on changed) and ``other`` (any other status or an unclear
message). Writes ``audit.json`` and ``audit.md`` to OUT. Needs no GPU; kernel and
interruption cases run on whatever OpenCL device is the default (tiny sizes).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import io
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
STENCILS = ROOT / "stencils"
SPECS = ROOT / "specs"
NAIVE = ROOT / "tests" / "data"
LIMITS = ROOT / "benchmarks" / "results" / "foundation" / "devices.json"
TAG = "GTUNE_AUDIT_TAG"
MEMORY = 3 * 1024**3
NO_DEVICE = "__no_such_device__"


@dataclass
class Case:
    klass: str
    name: str
    argv: list[str]
    names: list[str] = field(default_factory=list)  # what a clean message may name
    files: dict[str, bytes | str] = field(default_factory=dict)  # written into the case dir
    env: dict[str, str] = field(default_factory=dict)
    timeout: float = 60.0
    interrupt: int | None = None  # signal sent once results are being stored
    expect_ok: bool = False
    check: Callable[[Path], str | None] | None = None  # extra verdict after the run
    during: Callable[[Path, subprocess.Popen[bytes]], None] | None = None  # acts mid-run
    setup: Callable[[Path], None] | None = None  # prepares the case dir (links, FIFOs)


@dataclass
class Verdict:
    klass: str
    name: str
    outcome: str
    status: int | None
    seconds: float
    message: str


# -------------------------------------------------------------------------------------
# Running


def run(case: Case, work: Path) -> Verdict:
    tag = uuid.uuid4().hex
    where = work / f"case-{tag[:8]}"
    where.mkdir()
    for name in ("naive7.cl", "naive7.yaml", "naive7_ref.py"):
        shutil.copy(NAIVE / name, where / name)
    for name in ("heat3d.cl", "heat3d.yaml"):
        shutil.copy(STENCILS / name, where / name)
    for name, content in case.files.items():
        path = where / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    if case.setup is not None:
        case.setup(where)
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="120", GTUNE_CACHE=str(where / "cache"))
    env.setdefault("GTUNE_DB", str(where / "store.db"))
    env["GTUNE_TRUST_MODULES"] = str(where)  # the case's own reference files run
    env.update(case.env)
    env[TAG] = tag
    code = (  # as the gtune command starts: the working directory is not on the path
        "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
        "import resource; "
        f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY}, {MEMORY})); "
        "from gtune.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *case.argv],
        cwd=where,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    hung = False
    if case.interrupt is not None:
        _wait_for_results(where / "store.db", proc, 60)
        if proc.poll() is None:
            proc.send_signal(case.interrupt)
    if case.during is not None:
        case.during(where, proc)
    try:
        _out, err = proc.communicate(timeout=case.timeout)
    except subprocess.TimeoutExpired:
        hung = True
        os.killpg(proc.pid, signal.SIGKILL)
        _out, err = proc.communicate()
    seconds = time.monotonic() - start
    text = err.decode(errors="backslashreplace")
    time.sleep(1.0)
    left = _tagged(tag)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    outcome = _classify(case, proc.returncode, text, hung, bool(left))
    if outcome in ("clean", "ok", "expected") and case.check is not None:
        outcome = case.check(where) or outcome
    last = [line for line in text.splitlines() if line.strip()]
    message = last[-1][:300] if last else ""
    shutil.rmtree(where, ignore_errors=True)
    return Verdict(case.klass, case.name, outcome, proc.returncode, round(seconds, 2), message)


def _classify(case: Case, status: int | None, err: str, hung: bool, orphan: bool) -> str:
    if orphan:
        return "orphan"
    if hung:
        return "hang"
    if "Traceback (most recent call last)" in err or "MemoryError" in err:
        return "traceback"
    if case.interrupt == signal.SIGKILL:
        return "expected" if status == -signal.SIGKILL else "other"
    if case.interrupt is not None:
        stopped = "stopped by" in err or "interrupted" in err
        return "clean" if status in (2, 130) and stopped else "other"
    if status == 0:
        return "ok"
    if status == 2 and "error" in err and (not case.names or any(n in err for n in case.names)):
        return "clean"
    # `results` with any filter on an empty store: the store is the input at fault, and
    # the one line names it and the cause (exit 2) before the filter is looked at
    if status == 2 and "holds no results yet" in err and ("$GTUNE_DB" in err or "--db" in err):
        return "clean"
    return "other"


def _wait_for_results(db: Path, proc: subprocess.Popen[bytes], limit: float) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.3)
        if not db.exists():
            continue
        try:
            with sqlite3.connect(db) as con:
                if con.execute("SELECT COUNT(*) FROM results").fetchone()[0] >= 2:
                    return
        except sqlite3.Error:
            continue


def _tagged(tag: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if f"{TAG}={tag}".encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


# -------------------------------------------------------------------------------------
# The corpus: one or more cases per known defect


def naive_with(old: str, new: str) -> str:
    text = (NAIVE / "naive7.yaml").read_text()
    if old not in text:
        raise ValueError(old)
    return text.replace(old, new)


def bomb() -> str:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    return "\n".join(lines) + "\n"


SPACE = ["space", "naive7.yaml", "--limits", str(LIMITS), "--no-min-groups"]
RUN_NO_DEVICE = ["run", "naive7.yaml", "--device", NO_DEVICE]
REF = 'reference: {python: "naive7_ref.py:reference"}'


def description_cases() -> list[Case]:
    d = "descriptions"
    edits = {
        "reference config not an integer": (REF, "reference: {config: {WX: abc}}"),
        "rtol not a number": (REF, REF[:-1] + ", rtol: tight}"),
        "source is a directory": ("kernel: naive7", "kernel: naive7\nsource: ."),
        "source outside the folder": ("kernel: naive7", "kernel: naive7\nsource: /etc/hostname"),
        "reference os:system": (REF, 'reference: {python: "os:system"}'),
        "reference outside the folder": (REF, 'reference: {python: "../x.py:f"}'),
        "billion-value range domain": ("WX: {pow2: [1, NX], default: 8}", "WX: {range: [1, 1e9]}"),
        "range 1..10**9": ("WX: {pow2: [1, NX], default: 8}", "WX: {range: [1, 10**9]}"),
        "size zero": ("problem: {NX: 32", "problem: {NX: 0"),
        "unknown key": ("launch:", "lunch: 1\nlaunch:"),
        "non-string key": ("launch:", "1: 2\nlaunch:"),
        "argument name a list": ("{name: in, role", "{name: [in], role"),
        "constraint True": ("  - WX * WY * WZ <= MAX_WORK_GROUP_SIZE", "  - True"),
        "constraint 0": ("  - WX * WY * WZ <= MAX_WORK_GROUP_SIZE", "  - 0"),
        "division by zero": ("  - WX * WY * WZ <= MAX_WORK_GROUP_SIZE", "  - NX / 0 > 1"),
        "flops nan": ("flops_per_point: 8", "flops_per_point: .nan"),
        "default outside its domain": (
            "WX: {pow2: [1, NX], default: 8}",
            "WX: {pow2: [1, NX], default: 3}",
        ),
        "non-ASCII parameter name": (
            "WX: {pow2: [1, NX], default: 8}",
            "WX: {pow2: [1, NX], default: 8}\n  WÄ: {pow2: [1, NX], default: 1}",
        ),
        "build_options redefine a size": (
            "flops_per_point: 8",
            "flops_per_point: 8\nbuild_options: [-DNX=4]",
        ),
        "terminal escape in doc": ("kernel: naive7", 'kernel: naive7\ndoc: "\\e[2Jcleared"'),
    }
    cases = [
        Case(d, name, SPACE, ["naive7.yaml"], {"naive7.yaml": naive_with(old, new)})
        for name, (old, new) in edits.items()
    ]
    cases += [
        Case(d, "alias bomb (1 KB)", SPACE, ["naive7.yaml"], {"naive7.yaml": bomb()}),
        Case(d, "500-deep nesting", SPACE, ["naive7.yaml"], {"naive7.yaml": "a: " + "[" * 500}),
        Case(d, "recursive alias", SPACE, ["naive7.yaml"], {"naive7.yaml": "a: &a [1, *a]\n"}),
        Case(
            d,
            "1.5 MB string aliased 2,000 times",
            SPACE,
            ["naive7.yaml"],
            {"naive7.yaml": f"doc: &s {'x' * 1_500_000}\nn: [{', '.join(['*s'] * 2000)}]\n"},
        ),
        Case(
            d,
            "untrusted reference file",
            SPACE,
            ["naive7.yaml", "--trust-module"],
            env={"GTUNE_TRUST_MODULES": ""},
        ),
        Case(
            d,
            "non-UTF-8 description",
            SPACE,
            ["naive7.yaml"],
            {
                "naive7.yaml": naive_with("kernel: naive7", "kernel: naive7\ndoc: caf\xe9").encode(
                    "latin-1"
                )
            },
        ),
        Case(d, "non-UTF-8 source", SPACE, ["naive7.cl"], {"naive7.cl": b"__kernel \xff\n"}),
        Case(d, "description is a directory", ["space", "."], ["."]),
        Case(
            d,
            "python tag",
            SPACE,
            ["naive7.yaml"],
            {"naive7.yaml": "kernel: !!python/name:os.system\n"},
        ),
        Case(d, "empty file", SPACE, ["naive7.yaml"], {"naive7.yaml": ""}),
        Case(
            d,
            "huge constraint",
            SPACE,
            ["naive7.yaml"],
            {
                "naive7.yaml": naive_with(
                    "  - WX * WY * WZ <= MAX_WORK_GROUP_SIZE",
                    "  - " + "+".join(["WX"] * 100_000) + " > 0",
                )
            },
        ),
        Case(
            d,
            "2**10**10",
            SPACE,
            ["naive7.yaml"],
            {
                "naive7.yaml": naive_with(
                    "  - WX * WY * WZ <= MAX_WORK_GROUP_SIZE", "  - 2**10**10 > WX"
                )
            },
        ),
        Case(
            d,
            "10**400",
            SPACE,
            ["naive7.yaml"],
            {
                "naive7.yaml": naive_with(
                    "  - WX * WY * WZ <= MAX_WORK_GROUP_SIZE", "  - 10**400 > WX"
                )
            },
        ),
    ]
    return cases


def spec_cases() -> list[Case]:
    s = "specs"
    texts = {
        "200,000-value list": "steps: [{tune: {WX: [" + ",".join(map(str, range(200_000))) + "]}}]",
        "range 1:10**9:+1": "steps: [{tune: {WX: '1:10**9:+1'}}]",
        "unknown parameter": "steps: [{tune: {WQ: '1:4'}}]",
        "zero step": "steps: [{tune: {WX: '1:NX:+0'}}]",
        "alias bomb": bomb() + "steps: [{tune: {WX: '1:4'}}]",
        "steps not a list": "steps: 3",
        "repeat huge": "repeat: 1000000000\nsteps: [{tune: {WX: '1:4'}}]",
        "budget nan": "budget: {seconds: .nan}\nsteps: [{tune: {WX: '1:4'}}]",
    }
    cases = [
        Case(s, name, [*RUN_NO_DEVICE, "--spec", "bad.yaml"], ["bad.yaml"], {"bad.yaml": text})
        for name, text in texts.items()
    ]
    cases.append(Case(s, "empty --spec", [*RUN_NO_DEVICE, "--spec", ""], ["--spec"]))
    return cases


def flag_cases() -> list[Case]:
    f = "flags"
    table = [
        (["space", "naive7.yaml", "--size", "NX=²"], "--size"),
        (["space", "naive7.yaml", "--size", ""], "--size"),
        (["space", "naive7.yaml", "--size", "NX=0"], "--size"),
        (["space", "naive7.yaml", "--size", "99999999999x2"], "--size"),
        ([*RUN_NO_DEVICE, "--timeout", "nan"], "--timeout"),
        ([*RUN_NO_DEVICE, "--budget", "nans"], "--budget"),
        ([*RUN_NO_DEVICE, "--runs", "0"], "--runs"),
        (["results", "--best", "-1"], "--best"),
        (["compare", "naive7.yaml", "--max-minutes", "-1"], "--max-minutes"),
        ([*RUN_NO_DEVICE, "--json", "naive7.cl/report.json"], "--json"),
        (
            ["space", "naive7.yaml", "--limits", str(LIMITS), "--emit-mzn", "naive7.cl"],
            "--emit-mzn",
        ),
        (["space", "naive7.yaml", "--limits", "/dev/zero"], "/dev/zero"),
        (["space", "naive7.yaml", "--limits", "naive7.cl"], "naive7.cl"),
        (["run", "missing.cl"], "missing.cl"),
        (["compare", "naive7.yaml", "--strategies", "hybrid"], "--strategies"),
        (["measure", "naive7.yaml", "--config", "WX=0"], "--config"),
        (["measure", "naive7.yaml", "--config", "WX=-1"], "--config"),
        (["measure", "naive7.yaml", "--sweep", "WX=" + ",".join(map(str, range(5000)))], "--sweep"),
        (["campaign", "--kernels", "naive7.cl", "--strategies", "nonesuch"], "nonesuch"),
        (["campaign", "--kernels", "naive7.cl", "--store", "mysql://x/y"], "mysql"),
    ]
    return [Case(f, " ".join(argv[2:]) or argv[0], argv, [name]) for argv, name in table]


def store_cases() -> list[Case]:
    st = "store and environment"
    old_schema = str(Path(tempfile.mkdtemp(prefix="gtune-audit-")) / "old.db")
    with sqlite3.connect(old_schema) as con:
        con.execute("CREATE TABLE results (id INTEGER, junk TEXT)")
        con.execute("INSERT INTO results VALUES (1, 'x')")
    return [
        Case(st, "--db under a file", ["--db", "naive7.cl/x.db", "results"], ["naive7.cl"]),
        Case(st, "--db is a directory", ["--db", ".", "results"], ["."]),
        Case(st, "--db not a database", ["--db", "naive7.cl", "results"], ["naive7.cl"]),
        Case(st, "--db older schema", ["--db", old_schema, "results"], [old_schema]),
        Case(st, "--db under /proc", ["--db", "/proc/gtune/x.db", "results"], ["/proc"]),
        Case(
            st, "$GTUNE_DB under a file", ["results"], ["GTUNE_DB"], env={"GTUNE_DB": "naive7.cl/x"}
        ),
        Case(
            st,
            "$GTUNE_DEVICE unknown",
            ["space", "naive7.yaml"],
            ["$GTUNE_DEVICE"],
            env={"GTUNE_DEVICE": NO_DEVICE},
        ),
        Case(
            st,
            "$GTUNE_CACHE is a file",
            [*SPACE],
            ["naive7.cl", "GTUNE_CACHE", "cache"],
            env={"GTUNE_CACHE": "naive7.cl"},
        ),
        Case(
            st,
            "no minizinc on PATH",
            [*SPACE, "--no-cache"],
            ["MiniZinc", "minizinc"],
            env={"PATH": "/nonexistent"},
        ),
    ]


def kernel_cases() -> list[Case]:
    k = "kernels"
    small = ["--size", "NX=8,NY=8,NZ=4", "--budget", "3", "--timeout", "5", "--technique", "all"]
    cl = (NAIVE / "naive7.cl").read_text()
    return [
        Case(
            k,
            "does not compile",
            ["run", "naive7.yaml", *small],
            ["naive7.cl"],
            {"naive7.cl": cl + "\n this is not C;\n"},
            timeout=240,
        ),
        Case(
            k,
            "kernel name not in source",
            ["run", "naive7.yaml", *small],
            ["naive7"],
            {"naive7.yaml": naive_with("kernel: naive7", "kernel: nope")},
            timeout=240,
        ),
        Case(
            k,
            "bad build options",
            ["run", "naive7.yaml", *small],
            ["naive7"],
            {
                "naive7.yaml": naive_with(
                    "flops_per_point: 8", "flops_per_point: 8\nbuild_options: [-bogus-option]"
                )
            },
            timeout=240,
        ),
    ]


def stale_case() -> Case:
    """Fix a wrong reference between two runs: the second must not serve the first's rows."""

    def check(where: Path) -> str | None:
        db = where / "store.db"
        ref = where / "naive7_ref.py"
        ref.write_text(ref.read_text() + "\n# fixed\n")
        env = dict(
            os.environ,
            PYTHONPATH=str(ROOT),
            GTUNE_CACHE=str(where / "cache"),
            GTUNE_TRUST_MODULES=str(where),
        )
        subprocess.run(
            [sys.executable, "-m", "gtune", "--db", str(db), "run", "naive7.yaml", *SMALL_RUN],
            cwd=where,
            env=env,
            capture_output=True,
            timeout=240,
        )
        with sqlite3.connect(db) as con:
            ids = {r[0] for r in con.execute("SELECT kernel_id FROM results")}
        return None if len(ids) >= 2 else "stale"

    return Case(
        "interruptions and staleness",
        "reference fixed between runs",
        ["--db", "store.db", "run", "naive7.yaml", *SMALL_RUN],
        timeout=240,
        expect_ok=True,
        check=check,
    )


SMALL_RUN = ["--size", "NX=16,NY=8,NZ=8", "--budget", "4", "--timeout", "20"]


def header_case() -> Case:
    """Change a header the kernel includes between two runs: the second measures anew."""

    def check(where: Path) -> str | None:
        db = where / "store.db"
        (where / "scale.h").write_text("#define SCALE 2.0f\n")
        env = dict(
            os.environ,
            PYTHONPATH=str(ROOT),
            GTUNE_CACHE=str(where / "cache"),
            GTUNE_TRUST_MODULES=str(where),
        )
        subprocess.run(
            [sys.executable, "-m", "gtune", "--db", str(db), "run", "naive7.yaml", *SMALL_RUN],
            cwd=where,
            env=env,
            capture_output=True,
            timeout=240,
        )
        with sqlite3.connect(db) as con:
            ids = {r[0] for r in con.execute("SELECT kernel_id FROM results")}
        return None if len(ids) >= 2 else "stale"

    cl = (NAIVE / "naive7.cl").read_text()
    scaled = '#include "scale.h"\n' + cl.replace(
        "out[i] = c0 * in[i] + c1", "out[i] = SCALE * c0 * in[i] + c1"
    )
    return Case(
        "interruptions and staleness",
        "header changed between runs",
        ["--db", "store.db", "run", "naive7.yaml", *SMALL_RUN],
        files={"naive7.cl": scaled, "scale.h": "#define SCALE 1.0f\n"},
        timeout=240,
        expect_ok=True,
        check=check,
    )


def working_directory_case() -> Case:
    """A module planted where gtune runs must never be imported, in any process."""

    def check(where: Path) -> str | None:
        return "planted module ran" if (where / "PLANTED").exists() else None

    return Case(
        "working directory",
        "numpy.py in the working directory",
        ["measure", "naive7.yaml", "--config", "WX=8,WY=4,WZ=1", "--timeout", "20"],
        files={"numpy.py": "open('PLANTED', 'w').write('ran')\nraise SystemExit(9)\n"},
        timeout=240,
        expect_ok=True,
        check=check,
    )


def interruption_cases() -> list[Case]:
    i = "interruptions and staleness"
    argv = [
        "--db",
        "store.db",
        "run",
        "naive7.yaml",
        "--size",
        "NX=32,NY=16,NZ=8",
        "--budget",
        "300",
        "--timeout",
        "20",
    ]
    return [
        Case(i, f"{sig.name} during a run", argv, timeout=120, interrupt=sig)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL)
    ]


# -------------------------------------------------------------------------------------
# Campaigns, imports and stores (issue 45): stores that are not files, a store deleted
# mid-run, Kernel Tuner caches with entries the description refuses, a stranger
# connecting to a local campaign's scheduler, a campaign worker killed mid-run


def _fifo(name: str) -> str:
    """A FIFO made for a case (in a folder of its own, as old_schema is)."""
    path = Path(tempfile.mkdtemp(prefix="gtune-audit-")) / name
    os.mkfifo(path)
    return str(path)


def _kt(entries: list[dict[str, Any]], keys: list[str] | None = None) -> str:
    keys = keys if keys is not None else ["WX"]
    cache = {}
    for e in entries:
        cache[",".join(str(e.get(k)) for k in keys)] = {
            **e,
            "time": e.get("time", 0.25),
            "times": e.get("times", [e.get("time", 0.25)] * 3),
            "compile_time": 50.0,
        }
    return json.dumps({"device_name": "audit GPU", "tune_params_keys": keys, "cache": cache})


def _stored_wx(where: Path) -> set[int]:
    db = where / "store.db"
    if not db.exists():
        return set()
    with sqlite3.connect(db) as con:
        return {json.loads(r[0]).get("WX") for r in con.execute("SELECT config FROM results")}


def import_store_cases() -> list[Case]:
    c = "campaigns, imports and stores"
    kt = ["import-kt", "kt.json", "--kernel", "naive7.yaml"]

    def only_wx8(where: Path) -> str | None:
        return None if _stored_wx(where) == {8} else "wrong result accepted"

    return [
        Case(c, "--db is a FIFO", ["--db", _fifo("store.db"), "results"], ["FIFO"], timeout=30),
        Case(c, "--db is a character device", ["--db", "/dev/null", "results"], ["/dev/null"]),
        Case(c, "$GTUNE_DB is a folder", ["results"], ["folder"], env={"GTUNE_DB": "."}),
        Case(
            c,
            "import-kt of a FIFO",
            ["import-kt", _fifo("kt.json"), "--kernel", "naive7.yaml"],
            ["regular file"],
            timeout=30,
        ),
        Case(
            c,
            "import-kt WX=3 and WX=0 only",
            kt,
            ["kt.json", "outside the domain"],
            files={"kt.json": _kt([{"WX": 3}, {"WX": 0}])},
        ),
        Case(
            c,
            "import-kt without tune_params_keys",
            kt,
            ["tune_params_keys"],
            files={"kt.json": json.dumps({"cache": {"8": {"WX": 8, "time": 0.2}}})},
        ),
        Case(
            c,
            "import-kt 2.7, 0 ms, 1e30 ms, WX=3 beside a good entry",
            kt,
            expect_ok=True,
            check=only_wx8,
            files={
                "kt.json": _kt(
                    [
                        {"WX": 8},
                        {"WX": 2.7},
                        {"WX": 4, "time": 0},
                        {"WX": 2, "time": 1e30},
                        {"WX": 3},
                    ]
                )
            },
        ),
        Case(
            c,
            "import-kt 200,000 entries",
            ["import-kt", "kt.json", "--kernel", "big.yaml"],
            expect_ok=True,
            timeout=180,
            files={
                "big.yaml": naive_with(
                    "  WZ: {pow2: [1, NZ], default: 1}",
                    "  WZ: {pow2: [1, NZ], default: 1}\n  A: {range: [1, 1000], default: 1}\n"
                    "  B: {range: [1, 200], default: 1}",
                ).replace("kernel: naive7", "kernel: naive7\nsource: naive7.cl"),
                "kt.json": _kt(
                    [{"A": a, "B": b} for a in range(1, 1001) for b in range(1, 201)], ["A", "B"]
                ),
            },
        ),
    ]


def _delete_store(where: Path, proc: subprocess.Popen[bytes]) -> None:
    _wait_for_results(where / "store.db", proc, 120)
    for f in where.glob("store.db*"):
        f.unlink()


def _campaign_db_rows(db: Path) -> int:
    try:
        with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as con:
            return int(con.execute("SELECT COUNT(*) FROM results").fetchone()[0])
    except sqlite3.Error:
        return 0


def _wait_campaign(where: Path, proc: subprocess.Popen[bytes], rows: int) -> bool:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if (where / "out" / "cluster.json").exists() and _campaign_db_rows(
            where / "out" / "campaign.db"
        ) >= rows:
            return True
        time.sleep(0.3)
    return False


def _listening_ports(pid: int) -> list[int]:
    """The TCP ports process ``pid`` listens on (its sockets in /proc/net/tcp*)."""
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                link = os.readlink(fd)
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                f = line.split()
                if len(f) > 9 and f[3] == "0A" and f[9] in inodes:  # LISTEN
                    ports.append(int(f[1].rsplit(":", 1)[1], 16))
    return sorted(set(ports))


def _stranger(where: Path, proc: subprocess.Popen[bytes]) -> None:
    """Connect to every port the campaign listens on as another local user could (plain
    tcp://, and tls:// with credentials of its own) and try to run code there."""
    from distributed import Client, Security

    if not _wait_campaign(where, proc, 1):
        return
    planted = where / "PLANTED"
    tried = []
    for port in _listening_ports(proc.pid):
        for address, security in (
            (f"tcp://127.0.0.1:{port}", None),
            (f"tls://127.0.0.1:{port}", Security.temporary()),
        ):
            tried.append(address)
            with contextlib.suppress(Exception):
                client = Client(address, timeout=3, security=security)
                try:
                    client.submit(lambda: planted.write_text("ran"), pure=False).result(10)
                finally:
                    client.close()
    (where / "TRIED").write_text("\n".join(tried))


def _kill_dask_worker(where: Path, proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the campaign's Dask worker process (a child of gtune started by its nanny
    through multiprocessing's spawn) once it has stored results."""
    if not _wait_campaign(where, proc, 2):
        return
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == proc.pid and b"spawn_main" in (entry / "cmdline").read_bytes():
                os.kill(int(entry.name), signal.SIGKILL)
                (where / "KILLED").write_text(entry.name)
                return


LONG_RUN = ["--size", "NX=32,NY=16,NZ=8", "--budget", "300", "--timeout", "20"]
CAMPAIGN_YAML = (
    "name: audit\nkernels: [heat3d.cl]\nsizes: [16x16x16]\nstrategies: [hybrid, random]\n"
    "technique: global\nbudget: 6\ncompile_workers: 0\n"
)


def campaign_fault_cases() -> list[Case]:
    c = "campaigns, imports and stores"
    argv = ["campaign", "c.yaml", "--out", "out", "--workers-per-device", "1"]

    def not_entered(where: Path) -> str | None:
        if (where / "PLANTED").exists():
            return "security"
        return None if (where / "TRIED").exists() else "other"

    def all_finished(where: Path) -> str | None:
        if not (where / "KILLED").exists():
            return "other"
        ledger = where / "out" / "tasks.jsonl"
        lines = ledger.read_text().splitlines() if ledger.exists() else []
        return None if len(lines) == 2 else "other"

    return [
        Case(
            c,
            "store deleted during a run",
            ["--db", "store.db", "run", "naive7.yaml", *LONG_RUN],
            ["deleted or replaced"],
            timeout=240,
            during=_delete_store,
        ),
        Case(
            c,
            "a stranger connects to a local campaign",
            argv,
            files={"c.yaml": CAMPAIGN_YAML},
            timeout=400,
            expect_ok=True,
            during=_stranger,
            check=not_entered,
        ),
        Case(
            c,
            "the campaign's Dask worker killed",
            argv,
            files={"c.yaml": CAMPAIGN_YAML},
            timeout=400,
            expect_ok=True,
            during=_kill_dask_worker,
            check=all_finished,
        ),
    ]


# -------------------------------------------------------------------------------------
# Definitions and names (issue 45): a stencil definition naming code or files outside its
# folder, names holding control characters or spreadsheet formulas, numbers with
# thousands of digits, options far out of range, a spec whose steps never run, the file
# size limit, and empty PYTHONPATH entries with a planted numpy.py


JACOBI = STENCILS / "plain" / "jacobi2d.cl"
ORIGINAL_FLAGS = ["--scalar", "n=NX", "--define", "DATA_TYPE=float", "--default", "WX=32,WY=8"]
HOSTILE_NAME = "=cmd|' -C calc'!A0\x1b]0;pwned\x07"


def _lifted(source: str = "jacobi2d.cl", extra: tuple[str, ...] = ()) -> str:
    """A lifted-style definition of jacobi2d naming ``source`` and flags ``extra``."""
    terms = [
        {"field": "A", "offset": list(o), "coefficient": 0.2}
        for o in ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1))
    ]
    original = {"source": source, "kernel": "jacobi2d_step", "flags": [*ORIGINAL_FLAGS, *extra]}
    data = {"dims": 2, "fields": ["A"], "output": "B", "terms": terms, "original": original}
    return yaml.safe_dump(data, sort_keys=False)


def _no_mark(where: Path) -> str | None:
    return "security" if (where / "PLANTED").exists() else None


def _real_gtune(
    where: Path, args: list[str], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """The gtune command as a user starts it (``python -m gtune``), not the harness's
    ``-c`` launcher: what its own start-up does is part of the case."""
    return subprocess.run(
        [sys.executable, "-m", "gtune", *args],
        cwd=where,
        env={**os.environ, "PYTHONPATH": str(ROOT), "GTUNE_CACHE": str(where / "cache"), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _hostile_store() -> bytes:
    """A store whose kernel, device and message hold a formula and escape sequences."""
    sys.path.insert(0, str(ROOT))
    from gtune.result import Result, Status
    from gtune.store import open_store

    folder = Path(tempfile.mkdtemp(prefix="gtune-audit-"))
    with open_store(folder / "store.db") as store:
        for wx in (8, 16):
            result = Result({"WX": wx}, Status.OK, 0.05, (1e-4, 1.1e-4, 1.2e-4))
            store.add(result, device="dev", kernel_id="k", kernel_name="naive7", problem={"NX": 8})
        bad = Result({"WX": 4}, Status.BUILD_FAILED, 0.05, (), message=HOSTILE_NAME)
        store.add(bad, device=HOSTILE_NAME, kernel_id="h", kernel_name=HOSTILE_NAME, problem={})
    return (folder / "store.db").read_bytes()


def _results_are_data(where: Path) -> str | None:
    for fmt in ("table", "csv"):
        done = _real_gtune(where, ["--db", "store.db", "results", "--format", fmt], {})
        cells = [c for row in csv.reader(io.StringIO(done.stdout)) for c in row]
        formula = fmt == "csv" and any(c.startswith(("=", "+", "-", "@")) for c in cells)
        if done.returncode != 0 or "\x1b" in done.stdout or "\x07" in done.stdout or formula:
            return "security"
    return None


def _names_the_file_size_limit(where: Path) -> str | None:
    """``results`` into a file under a 512-byte ``ulimit -f`` (a pipe has no limit)."""

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))

    with open(where / "out.json", "w") as out:
        done = subprocess.run(
            [sys.executable, "-m", "gtune", "--db", "store.db", "results", "--format", "json"],
            cwd=where,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            preexec_fn=limit,
        )
    ok = done.returncode == 2 and "ulimit -f" in done.stderr and "Traceback" not in done.stderr
    return None if ok else "other"


def _pythonpath_planted(where: Path) -> str | None:
    (where / "numpy.py").write_text("open('PLANTED', 'w').write('ran')\nraise SystemExit(9)\n")
    pythonpath = f"{os.pathsep}{ROOT}{os.pathsep}"
    done = _real_gtune(
        where,
        ["describe", "plain.cl", "--size", "64x64", "--scalar", "scale=1"],
        {"PYTHONPATH": pythonpath},
    )
    return _no_mark(where) or (None if done.returncode == 0 else "other")


def definition_name_cases() -> list[Case]:
    d = "definitions and names"
    run_def = ["run", "defs/j.stencil.yaml", "--size", "32x32", "--budget", "2"]
    untrusted = {"GTUNE_TRUST_MODULES": ""}
    evil = "open('PLANTED', 'w').write('ran')\ndef reference(**kw):\n    raise SystemExit(9)\n"

    def lifted(source: str = "jacobi2d.cl", *extra: str) -> dict[str, bytes | str]:
        return {
            "defs/j.stencil.yaml": _lifted(source, extra),
            "defs/jacobi2d.cl": JACOBI.read_text(),
            "jacobi2d.cl": JACOBI.read_text(),
            "defs/evil.py": evil,
        }

    def flagged(name: str, *extra: str) -> Case:
        return Case(
            d,
            f"original.flags {name}",
            run_def,
            ["original.flags"],
            lifted("jacobi2d.cl", *extra),
            env=untrusted,
            check=_no_mark,
        )

    big = "dims: 2\nfields: [A]\noutput: B\nterms:\n- {field: A, coefficient: %s}\n"
    space_def = ["space", "big.stencil.yaml", "--size", "64x64", "--device", NO_DEVICE]
    blur = (NAIVE / "plain_blur.cl").read_text()
    return [
        flagged("--reference evil.py:reference", "--reference", "evil.py:reference"),
        flagged("--reference=evil.py:reference", "--reference=evil.py:reference"),
        flagged("--ref (an abbreviation)", "--ref", "evil.py:reference"),
        flagged("--trust-module", "--trust-module", "evil.py"),
        flagged("-I /etc", "-I", "/etc"),
        Case(
            d,
            "original.source ../jacobi2d.cl",
            run_def,
            ["original.source"],
            lifted("../jacobi2d.cl"),
            env=untrusted,
            check=_no_mark,
        ),
        Case(
            d,
            "lift -o outside the kernel's folder",
            [
                "lift",
                "jacobi2d.cl",
                "--size",
                "32x32",
                *ORIGINAL_FLAGS,
                "-o",
                "defs/out.stencil.yaml",
            ],
            ["original.source"],
            lifted(),
            env=untrusted,
        ),
        *(
            Case(
                d,
                f"kernel file name with {what}",
                ["space", name, "--size", "64x64"],
                ["control character"],
                {name: blur},
            )
            for what, name in (
                ("a newline and MiniZinc", "k\nconstraint WX = 2;\n%.cl"),
                ("an escape sequence", "k\x1b[2Jcleared.cl"),
            )
        ),
        Case(
            d,
            "results with formula and escape names",
            ["--db", "store.db", "results"],
            files={"store.db": _hostile_store()},
            expect_ok=True,
            check=_results_are_data,
        ),
        Case(
            d,
            "5,000-digit coefficient (rational)",
            space_def,
            ["digits"],
            {"big.stencil.yaml": big % ("'1" + "0" * 5000 + "/3'")},
        ),
        Case(
            d,
            "5,000-digit coefficient (YAML integer)",
            space_def,
            ["digits"],
            {"big.stencil.yaml": big % ("1" + "0" * 5000)},
        ),
        Case(
            d,
            "results under ulimit -f",
            ["--db", "store.db", "results"],
            files={"store.db": _hostile_store()},
            expect_ok=True,
            check=_names_the_file_size_limit,
        ),
        Case(
            d,
            "PYTHONPATH=':' and a planted numpy.py",
            ["--help"],
            files={"plain.cl": blur},
            expect_ok=True,
            check=_pythonpath_planted,
        ),
    ]


def definition_name_run_cases() -> list[Case]:
    """The cases that reach a device (PoCL)."""
    d = "definitions and names"
    later = "name: later\nrepeat: 0\nsteps:\n  - tune: {WX: '1:NX:*2'}\n    rounds: later\n"
    small = ["--size", "NX=16,NY=8,NZ=8", "--budget", "4", "--timeout", "20"]
    return [
        Case(
            d,
            "spec whose only step is rounds: later",
            ["run", "naive7.yaml", *small, "--spec", "later.yaml"],
            ["no step would run"],
            {"later.yaml": later},
            timeout=240,
        ),
        Case(
            d,
            "--option repeat=1000000000",
            ["run", "naive7.yaml", *small, "--option", "repeat=1000000000"],
            ["at most 1,000"],
            timeout=240,
        ),
    ]


def _plant(kind: str, name: str) -> Callable[[Path], None]:
    """A case's output name made a link to a file outside it, an existing file or a FIFO."""

    def setup(where: Path) -> None:
        target = where / name
        if kind == "link":
            (where / "victim.txt").write_text("precious\n")
            target.symlink_to(where / "victim.txt")
        elif kind == "file":
            target.write_text("precious\n")
        else:
            os.mkfifo(target)

    return setup


def _kept(name: str) -> Callable[[Path], str | None]:
    def check(where: Path) -> str | None:
        path = where / name
        return None if not path.exists() or path.read_text() == "precious\n" else "other"

    return check


def output_cases() -> list[Case]:
    """Output files: never through a link, never over a file unasked, never into a FIFO."""
    o = "outputs"
    blur = (NAIVE / "plain_blur.cl").read_text()
    describe = ["describe", "blur.cl", "--size", "64x32", "--scalar", "scale=0.5", "-o"]
    run_json = ["run", "naive7.yaml", "--device", NO_DEVICE, "--json"]
    return [
        Case(o, "describe -o a planted link", [*describe, "out.yaml", "--force"],
             ["symbolic link"], {"blur.cl": blur}, setup=_plant("link", "out.yaml"),
             check=_kept("victim.txt")),
        Case(o, "describe -o an existing file", [*describe, "out.yaml"], ["--force"],
             {"blur.cl": blur}, setup=_plant("file", "out.yaml"), check=_kept("out.yaml")),
        Case(o, "describe -o a FIFO", [*describe, "out.yaml", "--force"],
             ["not a regular file"], {"blur.cl": blur}, setup=_plant("fifo", "out.yaml"),
             timeout=30),
        Case(o, "run --json a planted link", [*run_json, "r.json"], ["symbolic link"],
             setup=_plant("link", "r.json"), check=_kept("victim.txt")),
        Case(o, "run --json an existing file", [*run_json, "r.json"], ["--force"],
             setup=_plant("file", "r.json"), check=_kept("r.json")),
    ]  # fmt: skip


# -------------------------------------------------------------------------------------
# Generated cases: seeded mutations of real inputs

JUNK: list[Any] = [
    None,
    True,
    -1,
    0,
    2**70,
    1.5,
    float("nan"),
    "",
    "abc",
    "tight",
    "os:system",
    "NX/0",
    "1:10**9:+1",
    "²",
    [],
    [1, [2]],
    {"a": 1},
    "../x.py:f",
    "1e400",
]


def mutate(tree: Any, rng: random.Random) -> Any:
    tree = copy.deepcopy(tree)
    for _ in range(rng.randint(1, 3)):
        paths: list[tuple[Any, ...]] = []

        def walk(node: Any, prefix: tuple[Any, ...], paths: list[tuple[Any, ...]] = paths) -> None:
            paths.append(prefix)
            if isinstance(node, dict):
                for key, value in node.items():
                    walk(value, (*prefix, key))
            elif isinstance(node, list):
                for index, value in enumerate(node):
                    walk(value, (*prefix, index))

        walk(tree, ())
        path = rng.choice(paths[1:] or paths)
        if not path:
            return rng.choice(JUNK)
        parent = tree
        for p in path[:-1]:
            parent = parent[p]
        op = rng.choice(["junk", "delete", "wrap", "rename"])
        if op == "junk":
            parent[path[-1]] = rng.choice(JUNK)
        elif op == "delete":
            del parent[path[-1]]
        elif op == "wrap":
            parent[path[-1]] = [parent[path[-1]]]
        elif isinstance(parent, dict):
            parent[rng.choice(["bogus", "1", "", "kernel"])] = parent.pop(path[-1])
    return tree


def damage(text: str, rng: random.Random) -> bytes:
    data = text.encode()
    how = rng.choice(["none", "none", "bytes", "truncate", "nul", "latin1"])
    if how == "bytes":
        at = rng.randint(0, len(data))
        data = data[:at] + bytes(rng.randrange(256) for _ in range(4)) + data[at:]
    elif how == "truncate":
        data = data[: rng.randint(0, len(data))]
    elif how == "nul":
        data += b"\x00"
    elif how == "latin1":
        data = (text + "doc: caf\xe9\n").encode("latin-1", "replace")
    return data


def dump(tree: Any) -> str:
    try:
        return yaml.safe_dump(tree, allow_unicode=True, sort_keys=False)
    except (yaml.YAMLError, ValueError, TypeError):
        return str(tree)


def generated(n: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    descriptions = sorted(STENCILS.glob("*.yaml"))
    specs = sorted(SPECS.glob("*.yaml"))
    values = [
        "",
        "nan",
        "-1",
        "0",
        "inf",
        "1e400",
        "abc",
        "²",
        "NX=²",
        "NX=0",
        "8x8x8",
        "x",
        "99999999999999999999",
        "naive7.cl",
        "naive7.cl/x",
        "/dev/null",
        "a" * 300,
    ]
    options = {
        "space": ["--size", "--top", "--emit-mzn"],
        "run": [
            "--size",
            "--budget",
            "--runs",
            "--timeout",
            "--spec",
            "--json",
            "--technique",
            "--strategy",
        ],
        "results": ["--best", "--kernel", "--format"],
    }
    out: list[Case] = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            desc = rng.choice(descriptions)
            tree = yaml.safe_load(desc.read_text())
            sizes = ",".join(f"{k}=8" for k in tree.get("problem", {}))
            files: dict[str, bytes | str] = {desc.name: damage(dump(mutate(tree, rng)), rng)}
            for extra in STENCILS.glob(desc.stem + ".*"):
                if extra.suffix != ".yaml":
                    files[extra.name] = extra.read_bytes()
            argv = ["space", desc.name, "--limits", str(LIMITS), "--no-min-groups", "--size", sizes]
            out.append(
                Case(
                    "descriptions",
                    f"generated {desc.stem} #{i}",
                    argv,
                    [desc.name, "--size"],
                    files,
                )
            )
        elif kind == 1:
            spec = rng.choice(specs)
            text = damage(dump(mutate(yaml.safe_load(spec.read_text()), rng)), rng)
            argv = [
                "run",
                "heat3d.yaml",
                "--spec",
                "g.yaml",
                "--size",
                "NX=8,NY=8,NZ=8",
                "--device",
                NO_DEVICE,
            ]
            out.append(
                Case(
                    "specs",
                    f"generated {spec.stem} #{i}",
                    argv,
                    ["g.yaml", "--device"],
                    {"g.yaml": text},
                )
            )
        else:
            command = rng.choice(sorted(options))
            argv = [command] + (["naive7.yaml"] if command != "results" else [])
            for _ in range(rng.randint(1, 3)):
                argv += [rng.choice(options[command]), rng.choice(values)]
            if command == "run":
                argv += ["--device", NO_DEVICE]
            if command == "space":
                argv += ["--limits", str(LIMITS)]
            names = [a for a in argv if a.startswith("--")] + ["naive7", "OpenCL"]
            out.append(Case("flags", f"generated {' '.join(argv)[:80]}", argv, names))
    return out


# -------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--generated", type=int, default=150, help="random mutations (150)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-opencl", action="store_true", help="no kernel or interruption cases")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    cases = description_cases() + spec_cases() + flag_cases() + store_cases()
    cases += definition_name_cases()
    cases += import_store_cases()
    cases += output_cases()
    if not args.skip_opencl:
        cases += [*kernel_cases(), stale_case(), header_case(), working_directory_case()]
        cases += interruption_cases()
        cases += definition_name_run_cases()
        cases += campaign_fault_cases()
    cases += generated(args.generated, args.seed)
    verdicts: list[Verdict] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for n, case in enumerate(cases, 1):
            v = run(case, Path(tmp))
            if case.expect_ok and v.outcome == "clean":
                v.outcome = "other"
            verdicts.append(v)
            print(f"[{n}/{len(cases)}] {v.outcome:9} {v.klass}: {v.name[:70]}", flush=True)
    write(args.out, verdicts, time.monotonic() - started, sys.argv)
    bad = [v for v in verdicts if v.outcome not in ("clean", "ok", "expected")]
    return 1 if bad else 0


def write(out: Path, verdicts: list[Verdict], seconds: float, argv: list[str]) -> None:
    totals = Counter(v.outcome for v in verdicts)
    by_class: dict[str, Counter[str]] = {}
    for v in verdicts:
        by_class.setdefault(v.klass, Counter())[v.outcome] += 1
    payload = {
        "command": "python3 benchmarks/audit.py " + " ".join(argv[1:]),
        "cases": len(verdicts),
        "seconds": round(seconds, 1),
        "totals": dict(totals),
        "by_class": {k: dict(c) for k, c in by_class.items()},
        "verdicts": [asdict(v) for v in verdicts],
    }
    (out / "audit.json").write_text(json.dumps(payload, indent=1) + "\n")
    outcomes = ["clean", "ok", "expected", "traceback", "hang", "orphan", "stale", "other"]
    lines = [
        "# gtune audit: bad inputs and faults",
        "",
        f"Command: `{payload['command']}` ({len(verdicts)} cases, {seconds:.0f} s).",
        "",
        "| class | " + " | ".join(outcomes) + " |",
        "|---|" + "---:|" * len(outcomes),
    ]
    for klass, counts in by_class.items():
        lines.append(f"| {klass} | " + " | ".join(str(counts[o]) for o in outcomes) + " |")
    lines.append("| **all** | " + " | ".join(str(totals[o]) for o in outcomes) + " |")
    bad = [v for v in verdicts if v.outcome not in ("clean", "ok", "expected")]
    lines += ["", f"## Cases that did not end cleanly ({len(bad)})", ""]
    for v in bad:
        lines.append(f"- **{v.outcome}** {v.klass}: {v.name} (status {v.status}): `{v.message}`")
    (out / "audit.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
