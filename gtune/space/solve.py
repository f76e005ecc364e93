"""Solving a :class:`~gtune.space.model.SpaceModel` with MiniZinc (Gecode).

MiniZinc decides which configurations are legal. Printing hundreds of thousands of
solutions through MiniZinc's output processing costs more than the search, so the model
is flattened once with ``minizinc -c`` and the FlatZinc is enumerated by the Gecode
executable MiniZinc itself uses, split over the CPU cores. Even Gecode's own printing
costs more than its search, so each solution is printed as a few packed integers
(:class:`RowCode`) rather than one per parameter. The solved array is cached on disk
keyed by the exact model and data text.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import signal
import subprocess
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from gtune.exceptions import EnvironmentProblem, GtuneError, InputError, UnsatisfiableSpace
from gtune.processes import scratch_dir, stops_deferred, usable_cores, wait_stoppable
from gtune.space.constraints import NamedConstraint
from gtune.space.model import SpaceModel, device_dzn, model_mzn, mzn_name

IntArray = npt.NDArray[np.int64]
_T = TypeVar("_T")
ROW = "gtune_row"
_INSTALL_HINT = "install MiniZinc with Gecode: apt-get install minizinc (or minizinc.org)"
TIMEOUT_VARIABLE = "GTUNE_SOLVE_TIMEOUT"
DEFAULT_TIMEOUT = 600.0
"""Seconds MiniZinc and Gecode may take on one space unless told otherwise."""


def solve_timeout(timeout: float | None = None) -> float:
    """``timeout`` if given, else ``$GTUNE_SOLVE_TIMEOUT``, else :data:`DEFAULT_TIMEOUT`."""
    if timeout is None:
        text = os.environ.get(TIMEOUT_VARIABLE, "").strip()
        if not text:
            return DEFAULT_TIMEOUT
        try:
            timeout = float(text)
        except ValueError:
            raise InputError(
                f"must be a number of seconds, got {text!r}", source=TIMEOUT_VARIABLE
            ) from None
        where = TIMEOUT_VARIABLE
    else:
        where = "solve timeout"
    if not (timeout > 0 and timeout != float("inf")):
        raise InputError(f"must be a positive number of seconds, got {timeout!r}", source=where)
    return float(timeout)


def _timed_out(what: str, model: SpaceModel | None, timeout: float) -> GtuneError:
    where = ""
    if model is not None:
        where = f" for kernel {model.kernel_label}" + (
            f" on device {model.device_name!r}" if model.device_name else ""
        )
    return GtuneError(
        f"{what}{where} took longer than {timeout:g} s",
        hint=f"allow more time with {TIMEOUT_VARIABLE}=SECONDS (default {DEFAULT_TIMEOUT:g}), "
        "or narrow the parameter domains",
    )


@dataclass
class SolveInfo:
    """How a space was obtained, for reports and benchmarks (seconds)."""

    from_cache: bool = False
    seconds_total: float = 0.0
    seconds_compile: float = 0.0
    seconds_search: float = 0.0
    seconds_parse: float = 0.0
    workers: int = 1
    parts: int = 1
    method: str = ""
    cache_file: str = ""
    extra: dict[str, float] = field(default_factory=dict)


def cache_dir() -> Path:
    """``$GTUNE_CACHE`` or ``~/.cache/gtune`` (XDG_CACHE_HOME respected)."""
    env = os.environ.get("GTUNE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gtune"


def minizinc_binary() -> str:
    found = shutil.which("minizinc")
    if found is None:
        raise EnvironmentProblem(
            "MiniZinc is not installed (no `minizinc` on PATH)", hint=_INSTALL_HINT
        )
    return found


def _gecode_binary() -> str | None:
    return shutil.which("fzn-gecode")


def model_texts(model: SpaceModel) -> tuple[str, str]:
    """The model text (with a solution row for the solver) and the device data text."""
    mzn = model_mzn(model, output=False)
    row = ", ".join(mzn_name(p) for p in model.parameters)
    mzn += f"array[1..{len(model.parameters)}] of var int: {ROW} :: add_to_output = [{row}];\n"
    return mzn, device_dzn(model.limits, model.device_name)


def model_key(model: SpaceModel) -> str:
    """The solve cache's key: the model and device data as the solver reads them, less
    their comment lines (the kernel's name and file, the device's name), so the same
    space of another kernel, a kernel moved or generated in another folder, or another
    device with the same limits is solved once."""
    mzn, dzn = model_texts(model)
    h = hashlib.sha256()
    for part in (_uncommented(mzn), _uncommented(dzn), _solver_version()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def _uncommented(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("%"))


_VERSIONS: dict[str, str] = {}


def _solver_version() -> str:
    """MiniZinc's version line; refuses a ``minizinc`` that is not MiniZinc."""
    binary = minizinc_binary()
    if binary not in _VERSIONS:
        try:
            out = _run([binary, "--version"], "MiniZinc --version", timeout=30)
        except _SolverFailed as exc:
            raise exc.as_environment() from None
        first = out.strip().splitlines()[0] if out.strip() else ""
        if "minizinc" not in first.lower():
            raise EnvironmentProblem(
                f"{binary} does not behave like MiniZinc: `--version` printed {_snippet(out)!r}",
                hint=_INSTALL_HINT,
            )
        _VERSIONS[binary] = first
    return _VERSIONS[binary]


def _snippet(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def solve(
    model: SpaceModel,
    *,
    use_cache: bool = True,
    workers: int | None = None,
    method: str = "fzn",
    timeout: float | None = None,
) -> tuple[IntArray, SolveInfo]:
    """All solutions of ``model`` as rows (parameters in model order).

    ``method``: ``fzn`` (flatten, then Gecode directly, in parallel) or ``python``
    (the ``minizinc`` Python package, much slower on large spaces; kept as a reference).
    """
    start = time.perf_counter()
    timeout = solve_timeout(timeout)
    _solver_version()  # a missing or broken MiniZinc is named before anything else
    info = SolveInfo(method=method)
    key = model_key(model) if use_cache else ""
    path = cache_dir() / "spaces" / f"{key}.npz"
    if use_cache and path.exists():
        try:
            with np.load(path) as data:
                rows = np.asarray(data["rows"], dtype=np.int64)
            info.from_cache, info.cache_file = True, str(path)
            info.seconds_total = time.perf_counter() - start
            return rows, info
        except (OSError, KeyError, ValueError):
            path.unlink(missing_ok=True)  # a damaged cache file is rebuilt
    if method == "python":
        rows = _solve_python(model, info, timeout)
    elif method == "fzn":
        rows = _solve_fzn(model, info, workers, timeout)
    else:
        raise GtuneError(f"unknown solve method {method!r}; use fzn or python")
    if use_cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
        # the narrowest integer type that holds every value: small and fast to write
        narrow = rows
        for kind in (np.int8, np.int16, np.int32):
            info_k = np.iinfo(kind)
            if rows.size == 0 or (rows.min() >= info_k.min and rows.max() <= info_k.max):
                narrow = rows.astype(kind)
                break
        np.savez(tmp, rows=narrow)
        os.replace(tmp, path)
        info.cache_file = str(path)
    info.seconds_total = time.perf_counter() - start
    return rows, info


class _SolverFailed(GtuneError):
    """The solver exited with an error; ``detail`` is its cleaned-up output."""

    def __init__(self, binary: str, what: str, status: int, detail: str) -> None:
        self.binary, self.detail = binary, detail
        super().__init__(f"{what}: {binary} exited with status {status}:\n{detail}")

    def as_environment(self) -> EnvironmentProblem:
        return EnvironmentProblem(
            f"{self.binary} failed (it should not on a model gtune wrote):\n{self.detail}",
            hint="check the MiniZinc installation: " + _INSTALL_HINT,
        )


def _run(
    cmd: list[str],
    what: str,
    timeout: float | None,
    cwd: str | None = None,
    model: SpaceModel | None = None,
) -> str:
    started: list[subprocess.Popen[str]] = []
    got: list[tuple[str, str]] = []

    def done(wait_s: float) -> bool:
        try:
            got.append(started[0].communicate(timeout=wait_s))
        except subprocess.TimeoutExpired:
            return False
        return True

    try:  # a stop asked for (the first Ctrl-C of a run) ends the wait, too
        # a session of its own: MiniZinc starts its solver as a child, and the whole
        # group is ended with it, however the wait ends (a stop signal included; one
        # that comes while the child starts is raised once it is held here)
        with stops_deferred():
            try:
                started.append(
                    subprocess.Popen(
                        cmd,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        text=True,
                        errors="replace",
                        cwd=cwd,
                        start_new_session=True,
                    )
                )
            except (FileNotFoundError, PermissionError, OSError) as exc:
                raise EnvironmentProblem(
                    f"cannot run {cmd[0]}: {exc}", hint=_INSTALL_HINT
                ) from None
        if not wait_stoppable(done, timeout):
            raise _timed_out(what, model, timeout or 0.0)
    finally:
        _end_all(started)
    proc = started[0]
    stdout, stderr = got[0]
    if proc.returncode != 0:
        raise _SolverFailed(cmd[0], what, proc.returncode, _clean(stderr or stdout))
    return stdout


def _exited(proc: subprocess.Popen[Any], wait_s: float) -> bool:
    try:
        proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        return False
    return True


def _end_all(procs: Sequence[subprocess.Popen[Any]]) -> None:
    """Kill each process (and the group of one started in a session of its own) that is
    still running, and reap it."""
    for p in procs:
        if p.returncode is None:  # not reaped yet: the pid is still its own
            with contextlib.suppress(OSError):
                if os.getpgid(p.pid) == p.pid:
                    os.killpg(p.pid, signal.SIGKILL)
                else:
                    p.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=5)


def _clean(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if "count.mzn" not in ln]
    return "\n".join(lines[-20:])


def _compile(model: SpaceModel, work: Path, timeout: float | None) -> tuple[str, dict[str, str]]:
    """Flatten with MiniZinc; return the FlatZinc text and each parameter's FlatZinc
    name or literal value (the compiler merges equal variables, e.g. ``BX == VX``)."""
    mzn, dzn = model_texts(model)
    (work / "model.mzn").write_text(mzn)
    (work / "device.dzn").write_text(dzn)
    cmd = [
        minizinc_binary(), "--solver", "gecode", "-O2", "-c", "model.mzn", "device.dzn",
        "--fzn", "model.fzn", "--ozn", "model.ozn",
    ]  # fmt: skip
    try:
        _run(cmd, "MiniZinc compiling the space", timeout, str(work), model)
    except _SolverFailed as exc:
        raise _explain_failure(model, exc) from None
    try:
        fzn = (work / "model.fzn").read_text()
        ozn = (work / "model.ozn").read_text()
    except OSError:
        raise EnvironmentProblem(
            f"{cmd[0]} reported success but wrote no FlatZinc", hint=_INSTALL_HINT
        ) from None
    return fzn, _output_sources(model, fzn, ozn)


def _explain_failure(model: SpaceModel, exc: _SolverFailed) -> GtuneError:
    if "invalid integer literal" in exc.detail or "overflow" in exc.detail.lower():
        return GtuneError(
            "an intermediate value of a constraint exceeds the solver's integer range",
            source=model.kernel_label,
            hint="keep products in constraints small (e.g. compare quotients) ",
        )
    return exc.as_environment()


_OZN_DEF = re.compile(r"^(?:var\s+)?int:\s*(\w+)\s*=\s*(-?\w+)\s*;\s*$", re.M)
_FZN_VAR = re.compile(r"^var\s+[^:]+:\s*(\w+)\s*::\s*output_var", re.M)


class _Untraceable(Exception):
    """A parameter the compiled model no longer names (e.g. a model found infeasible)."""


def _output_sources(model: SpaceModel, fzn: str, ozn: str) -> dict[str, str]:
    outputs = set(_FZN_VAR.findall(fzn))
    defs = dict(_OZN_DEF.findall(ozn))
    sources: dict[str, str] = {}
    for p in model.parameters:
        name = mzn_name(p)
        seen: set[str] = set()
        while name not in outputs and name in defs and name not in seen:
            seen.add(name)
            name = defs[name]
        if name in outputs or re.fullmatch(r"-?\d+", name):
            sources[p] = name
        else:
            raise _Untraceable(p)
    return sources


def _solve_fzn(
    model: SpaceModel, info: SolveInfo, workers: int | None, timeout: float | None
) -> IntArray:
    gecode = _gecode_binary()
    if gecode is None:
        return _solve_cli(model, info, timeout)
    t0 = time.perf_counter()
    with scratch_dir("space") as tmp:
        work = Path(tmp)
        try:
            fzn, sources = _compile(model, work, timeout)
        except _Untraceable:
            return _solve_cli(model, info, timeout)
        info.seconds_compile = time.perf_counter() - t0
        body = fzn.replace(":: output_var;", ";")
        code = RowCode.of(model.parameters, model.domains, sources)
        declarations, constraints = code.flatzinc()
        body = _before_solve(_insert_declaration(body, declarations), constraints)
        n = max(1, min(workers or usable_cores(), 16))
        parts = _split(body, model, sources, n * PARTS_PER_WORKER if n > 1 else 1)
        t1 = time.perf_counter()
        parsed, parse_s = _solve_parts(gecode, parts, work, n, len(code.groups), model, timeout)
        info.seconds_search = time.perf_counter() - t1 - parse_s
        info.workers = min(n, len(parts))
        info.parts = len(parts)
    t2 = time.perf_counter()
    rows = code.decode(np.concatenate(parsed), gecode)  # only values of the domains
    info.seconds_parse = parse_s + time.perf_counter() - t2
    return rows


PARTS_PER_WORKER = 4
"""Parts of the space per solver process at once: the parts' sizes differ (box27's
two halves at 512³ held 1.39 and 1.05 million configurations), and a process that
ends early takes the next part instead of idling while the largest one finishes."""


def _solve_parts(
    gecode: str,
    parts: Sequence[str],
    work: Path,
    n: int,
    width: int,
    model: SpaceModel,
    timeout: float | None,
) -> tuple[list[IntArray], float]:
    """Each part's solutions (``width`` codes a row, see :func:`parse_rows`), solving
    at most ``n`` parts at once, the next part started as one ends, and the seconds
    spent parsing; a part's output is parsed as soon as it ends, while the others run.
    Each solver writes to its own file: read through pipes one after another, the
    others would block on full pipe buffers and run in turn."""
    deadline = None if timeout is None else time.monotonic() + timeout
    outputs: list[IntArray] = [np.zeros((0, width), dtype=np.int64)] * len(parts)
    parse_s = 0.0
    waiting = list(range(len(parts)))
    running: dict[int, subprocess.Popen[bytes]] = {}

    def start(i: int) -> None:
        f = work / f"part{i}.fzn"
        f.write_text(parts[i])
        # a session of its own, as every solver run: Gecode ends its search at a
        # terminal's Ctrl-C and prints a partial space; gtune decides instead. A stop
        # signal while it starts is raised once it is held (stops_deferred).
        with (
            open(work / f"part{i}.out", "wb") as out,
            open(work / f"part{i}.err", "wb") as err,
            stops_deferred(),
        ):
            running[i] = subprocess.Popen(
                [gecode, "-a", str(f)], stdout=out, stderr=err, start_new_session=True
            )

    def one_ended(wait_s: float) -> bool:
        ends = time.monotonic() + wait_s
        while True:
            if any(p.poll() is not None for p in running.values()):
                return True
            left = ends - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(0.01, left))

    try:  # whatever ends the wait (a stop signal included), no solver outlives it
        while waiting or running:
            while waiting and len(running) < n:
                start(waiting.pop(0))
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not wait_stoppable(one_ended, left):
                raise _timed_out("Gecode enumerating the space", model, timeout or 0.0)
            for i, proc in list(running.items()):
                if proc.poll() is None:
                    continue
                del running[i]
                if proc.returncode != 0:
                    err_text = (work / f"part{i}.err").read_bytes().decode(errors="replace")
                    raise EnvironmentProblem(
                        f"{gecode} failed on the space of {model.kernel_label} "
                        f"(status {proc.returncode}):\n{_clean(err_text)}",
                        hint="check the Gecode installation: " + _INSTALL_HINT,
                    )
                began = time.perf_counter()
                outputs[i] = parse_rows((work / f"part{i}.out").read_bytes(), width)
                parse_s += time.perf_counter() - began
    finally:
        _end_all(list(running.values()))
    return outputs, parse_s


CODE_LIMIT = 1 << 30
"""Each printed code stays below this: Gecode's integers are 32-bit."""


@dataclass(frozen=True)
class RowCode:
    """A solution row printed as a few integers instead of one per parameter.

    Gecode formats and writes each printed variable of every solution, and on spaces of
    millions of configurations that costs three times its search: box27 at 512³ (2.4
    million rows, 16 parameters) printed for 23 s and searched for 6. Each FlatZinc
    variable behind a parameter gets an index into its domain (an element constraint),
    and the indices are packed in mixed radix into ``groups`` of codes below
    :data:`CODE_LIMIT`. The index and the code are functions of the variable, so the
    enumeration has exactly the solutions it had. ``sources`` are the FlatZinc names
    (or literal values) of the parameters, as :func:`_output_sources` traced them.
    """

    parameters: tuple[str, ...]
    sources: dict[str, str]
    domains: dict[str, tuple[int, ...]]
    """Each FlatZinc variable's values, in its index order."""
    groups: tuple[tuple[str, ...], ...]
    """The variables of each code, least significant first."""

    @classmethod
    def of(
        cls,
        parameters: Sequence[str],
        domains_of: Mapping[str, Sequence[int]],
        sources: Mapping[str, str],
        limit: int = CODE_LIMIT,
    ) -> RowCode:
        """The code of ``parameters`` with their ``domains_of``, each printed integer
        below ``limit``."""
        domains: dict[str, set[int]] = {}
        for p in parameters:
            name = sources[p]
            if re.fullmatch(r"-?\d+", name):
                continue
            values = {int(v) for v in domains_of[p]}
            domains[name] = domains[name] & values if name in domains else values
        groups: list[list[str]] = []
        span = limit
        for name, values in domains.items():
            n = len(values)
            if n <= 1:
                continue
            if n > limit:
                raise GtuneError(f"{name} has {n} values, more than one code holds ({limit})")
            if span * n > limit:
                groups.append([])
                span = 1
            groups[-1].append(name)
            span *= n
        return cls(
            tuple(parameters),
            dict(sources),
            {name: tuple(sorted(values)) for name, values in domains.items()},
            tuple(tuple(g) for g in groups) or ((),),
        )

    def flatzinc(self) -> tuple[str, str]:
        """The declarations (index and code variables, the printed array) and the
        constraints tying them to the parameters' variables."""
        decl: list[str] = []
        cons: list[str] = []
        codes: list[str] = []
        for g, group in enumerate(self.groups):
            code = f"gtune_code{g}"
            codes.append(code)
            weights: list[int] = []
            indices: list[str] = []
            weight = 1
            for name in group:
                values = self.domains[name]
                index = f"gtune_ix_{name}"
                decl.append(f"var 1..{len(values)}: {index};\n")
                listed = ",".join(map(str, values))
                cons.append(f"constraint array_int_element({index},[{listed}],{name});\n")
                weights.append(weight)
                indices.append(index)
                weight *= len(values)
            decl.append(f"var 0..{weight - 1}: {code};\n")
            if group:  # sum((index - 1) * weight) = code
                coefficients = ",".join(map(str, [*weights, -1]))
                cons.append(
                    f"constraint int_lin_eq([{coefficients}],[{','.join([*indices, code])}],"
                    f"{sum(weights)});\n"
                )
            else:
                cons.append(f"constraint int_eq({code},0);\n")
        k = len(codes)
        decl.append(
            f"array [1..{k}] of var int: {ROW} :: output_array([1..{k}]) = [{','.join(codes)}];\n"
        )
        return "".join(decl), "".join(cons)

    def decode(self, codes: IntArray, binary: str) -> IntArray:
        """The rows (parameters in model order) of the ``codes`` ``binary`` printed."""
        columns: dict[str, IntArray] = {}
        for g, group in enumerate(self.groups):
            rest = codes[:, g].astype(np.int64)
            span = math.prod(len(self.domains[name]) for name in group)
            if len(rest) and (rest.min() < 0 or rest.max() >= span):
                raise EnvironmentProblem(
                    f"{binary} printed a code outside 0..{span - 1}: its output is not "
                    "what MiniZinc/Gecode print",
                    hint=_INSTALL_HINT,
                )
            for name in group:
                values = np.asarray(self.domains[name], dtype=np.int64)
                rest, index = np.divmod(rest, len(values))
                columns[name] = values[index]
        rows = np.empty((len(codes), len(self.parameters)), dtype=np.int64)
        for j, p in enumerate(self.parameters):
            name = self.sources[p]
            if name in columns:
                rows[:, j] = columns[name]
            elif name in self.domains:  # one value (none: no row)
                rows[:, j] = self.domains[name][0] if self.domains[name] else 0
            else:
                rows[:, j] = int(name)
        return rows


def _check_domains(model: SpaceModel, rows: IntArray, binary: str) -> None:
    """Every value a solver printed must lie in its parameter's domain."""
    for j, p in enumerate(model.parameters):
        if rows.size and not np.isin(rows[:, j], model.domains[p]).all():
            raise EnvironmentProblem(
                f"{binary} printed values outside the domain of {p}: its output is not "
                "what MiniZinc/Gecode print",
                hint=_INSTALL_HINT,
            )


def _item(fzn: str, keyword: str) -> int:
    """Where the first FlatZinc item starting with ``keyword`` begins (-1: none). A
    model whose parameters are all fixed flattens to its solve item alone, at 0."""
    if fzn.startswith(keyword + " "):
        return 0
    i = fzn.find(f"\n{keyword} ")
    return i + 1 if i >= 0 else -1


def _insert_declaration(fzn: str, decl: str) -> str:
    """FlatZinc wants every declaration before the first constraint / solve item."""
    for keyword in ("constraint", "solve"):
        i = _item(fzn, keyword)
        if i >= 0:
            return fzn[:i] + decl + fzn[i:]
    raise EnvironmentProblem(
        "unexpected FlatZinc from MiniZinc (no solve item)", hint=_INSTALL_HINT
    )


def _split(fzn: str, model: SpaceModel, sources: dict[str, str], n: int) -> list[str]:
    """Up to ``n`` FlatZinc problems partitioning the space.

    The two parameters with the largest domains are each cut into round-robin chunks of
    values (so every part gets small and large values alike), and every pair of chunks
    is one part: domains of powers of two are short, and one parameter alone rarely
    gives enough parts for all cores.
    """
    if n <= 1:
        return [fzn]
    candidates = sorted(
        (
            (len(model.domains[p]), sources[p], model.domains[p])
            for p in model.parameters
            if not re.fullmatch(r"-?\d+", sources[p]) and len(model.domains[p]) > 1
        ),
        key=lambda c: -c[0],
    )
    if not candidates:
        return [fzn]
    cuts: list[tuple[str, list[list[int]]]] = []
    sizes = [c[0] for c in candidates[:2]]
    # the pair of chunk counts with the largest product within n
    k1, k2 = max(
        ((a, b) for a in range(1, sizes[0] + 1) for b in range(1, (sizes[1:] or [1])[0] + 1)),
        key=lambda ab: (ab[0] * ab[1] if ab[0] * ab[1] <= n else 0, -abs(ab[0] - ab[1])),
    )
    for (_, name, values), k in zip(candidates[:2], (k1, k2), strict=False):
        if k > 1:
            cuts.append((name, [list(values[i::k]) for i in range(k)]))
    if not cuts:
        return [fzn]
    parts = []
    for combo in itertools.product(*(chunks for _, chunks in cuts)):
        extra = "".join(
            f"constraint set_in({name},{{{','.join(map(str, chunk))}}});\n"
            for (name, _), chunk in zip(cuts, combo, strict=True)
        )
        parts.append(_before_solve(fzn, extra))
    return parts


def _before_solve(fzn: str, constraints: str) -> str:
    """``fzn`` with ``constraints`` (whole FlatZinc items) just before its solve item."""
    i = _item(fzn, "solve")
    return fzn[:i] + constraints + fzn[i:]


_NOT_A_NUMBER = bytes(c if chr(c) in "0123456789-" else 32 for c in range(256))
_SEPARATOR = b"----------\n"


def parse_rows(output: bytes, width: int) -> IntArray:
    """Rows from Gecode's ``gtune_row = array1d(1..k, [a, b, ...]);`` lines, each
    solution ended by a line of dashes. Everything but the numbers becomes blanks (one
    ``bytes.translate``) and numpy reads the numbers: 4.4 million rows of two codes
    (box27 at 512³) in 3 s."""
    end = output.find(b"==========")
    if end < 0:
        if b"=====UNSATISFIABLE=====" in output or not output.strip():
            return np.zeros((0, width), dtype=np.int64)
        raise EnvironmentProblem(
            "Gecode stopped before enumerating every solution (or printed something else)",
            hint=_INSTALL_HINT,
        )
    body = output[:end]
    solutions = body.count(_SEPARATOR)
    if solutions == 0 or width == 0:  # no parameter to print: a solution is its separator
        return np.zeros((solutions, width), dtype=np.int64)
    # each row's "gtune_row = array1d(1..k, [" (the same text on every line) is cut
    # out, not parsed: numpy then reads the row's values alone
    head = body[: body.find(b"[") + 1]
    text = body.replace(head, b"").replace(_SEPARATOR, b"").translate(_NOT_A_NUMBER)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # a stray "-": counted below
        values = np.fromstring(text, dtype=np.int64, sep=" ")
    if len(values) != solutions * width:
        raise EnvironmentProblem(
            "unexpected solver output (rows of different lengths)", hint=_INSTALL_HINT
        )
    rows: IntArray = values.reshape(-1, width)
    return rows


def _solve_cli(model: SpaceModel, info: SolveInfo, timeout: float | None) -> IntArray:
    """Fallback: the ``minizinc`` executable with one line of integers per solution."""
    t0 = time.perf_counter()
    with scratch_dir("space") as tmp:
        work = Path(tmp)
        (work / "model.mzn").write_text(model_mzn(model))
        (work / "device.dzn").write_text(device_dzn(model.limits, model.device_name))
        binary = minizinc_binary()
        cmd = [binary, "--solver", "gecode", "-O2", "-a", "model.mzn", "device.dzn"]
        try:
            out = _run(cmd, "MiniZinc solving the space", timeout, tmp, model)
        except _SolverFailed as exc:
            raise _explain_failure(model, exc) from None
    info.seconds_search = time.perf_counter() - t0
    info.method = "cli"
    lines = [ln for ln in out.splitlines() if ln and not ln.startswith(("---", "==="))]
    try:
        rows = np.array([[int(v) for v in ln.split()] for ln in lines], dtype=np.int64).reshape(
            -1, len(model.parameters)
        )
    except ValueError:
        raise EnvironmentProblem(
            f"{binary} printed something other than solutions: {_snippet(out)!r}",
            hint=_INSTALL_HINT,
        ) from None
    _check_domains(model, rows, binary)
    return rows


def _solve_python(model: SpaceModel, info: SolveInfo, timeout: float | None) -> IntArray:
    """Reference path through the ``minizinc`` Python package."""
    import datetime

    import minizinc

    minizinc_binary()
    t0 = time.perf_counter()
    solver = minizinc.Solver.lookup("gecode")
    m = minizinc.Model()
    m.add_string(model_mzn(model, output=False))
    m.add_string(device_dzn(model.limits, model.device_name))
    inst = minizinc.Instance(solver, m)
    limit = datetime.timedelta(seconds=timeout) if timeout else None
    result = inst.solve(all_solutions=True, time_limit=limit, optimisation_level=2)
    info.seconds_search = time.perf_counter() - t0
    sols = result.solution or []
    names = [mzn_name(p) for p in model.parameters]
    return np.array([[int(getattr(s, n)) for n in names] for s in sols], dtype=np.int64).reshape(
        -1, len(names)
    )


# -- unsatisfiable spaces --------------------------------------------------------------


def is_satisfiable(
    model: SpaceModel, constraints: list[NamedConstraint], timeout: float | None = None
) -> bool:
    """Does MiniZinc find one solution with only ``constraints`` (domains always hold)?"""
    try:
        return _satisfiable(model, constraints, timeout)
    except _SolverFailed as exc:
        raise _explain_failure(model, exc) from None


def _satisfiable(
    model: SpaceModel, constraints: list[NamedConstraint], timeout: float | None
) -> bool:
    """:func:`is_satisfiable`, a solver failure raised as :class:`_SolverFailed`."""
    reduced = SpaceModel(**{**model.__dict__, "constraints": constraints})
    binary = minizinc_binary()
    with scratch_dir("space") as tmp:
        (Path(tmp) / "m.mzn").write_text(model_mzn(reduced))
        (Path(tmp) / "d.dzn").write_text(device_dzn(model.limits, model.device_name))
        out = _run(
            [binary, "--solver", "gecode", "-O2", "m.mzn", "d.dzn"],
            "MiniZinc checking satisfiability",
            solve_timeout(timeout),
            tmp,
            model,
        )
    if "=====UNSATISFIABLE=====" in out:
        return False
    if "----------" in out:
        return True
    raise EnvironmentProblem(
        f"{binary} printed neither a solution nor UNSATISFIABLE: {_snippet(out)!r}",
        hint=_INSTALL_HINT,
    )


def _conflicting(
    model: SpaceModel, constraints: list[NamedConstraint], timeout: float | None
) -> bool:
    """Do these constraints alone admit nothing? A subset whose intermediate values
    exceed the solver's integers (a constraint that kept them small left out) cannot be
    judged, and counts as no conflict."""
    try:
        return not _satisfiable(model, constraints, timeout)
    except _SolverFailed as exc:
        error = _explain_failure(model, exc)
        if isinstance(error, EnvironmentProblem):
            raise error from None
        return False


def minimal_conflict(items: Sequence[_T], holds: Callable[[list[_T]], bool]) -> list[_T]:
    """A minimal subset of ``items`` for which ``holds`` is false (no item can be left
    out of it), given that ``holds(list(items))`` is false and ``holds([])`` true:
    QuickXplain (Junker, AAAI 2004). It asks ``holds`` about k + k·log2(n/k) subsets for a
    conflict of k items among n, where dropping each item in turn asks n; each question
    here is a MiniZinc run."""

    def split(background: list[_T], added: bool, candidates: list[_T]) -> list[_T]:
        if added and not holds(background):
            return []
        if len(candidates) == 1:
            return candidates
        half = len(candidates) // 2
        first, second = candidates[:half], candidates[half:]
        in_second = split(background + first, bool(first), second)
        in_first = split(background + in_second, bool(in_second), first)
        return in_first + in_second

    return split([], False, list(items)) if items else []


def explain_unsatisfiable(model: SpaceModel, timeout: float | None = None) -> UnsatisfiableSpace:
    """Name a minimal set of constraints that cannot hold together, or say that the
    parameters' domains admit nothing. The set comes from :func:`minimal_conflict`,
    checked to admit nothing and reduced until no constraint can be left out; where
    that check fails (a subset the solver could not judge), each constraint is dropped
    in turn instead, as long as the rest admits nothing."""
    if not is_satisfiable(model, [], timeout):
        core: list[NamedConstraint] = []
        what = "the parameter domains alone admit nothing"
    else:
        what = "these constraints cannot hold together"
        everything = list(model.constraints)
        core = minimal_conflict(everything, lambda some: not _conflicting(model, some, timeout))
        if not _conflicting(model, core, timeout):
            core = everything
        for c in list(core):
            trial = [x for x in core if x is not c]
            if trial and _conflicting(model, trial, timeout):
                core = trial
    names = "; ".join(c.describe() for c in core)
    limits = ", ".join(f"{k}={v}" for k, v in model.limits.items())
    return UnsatisfiableSpace(
        f"no configuration satisfies the constraints on device {model.device_name!r}: "
        f"{what}{': ' + names if names else ''}",
        source=model.kernel_label,
        hint=f"device limits: {limits}",
    )


def json_info(info: SolveInfo) -> str:
    return json.dumps(info.__dict__)
