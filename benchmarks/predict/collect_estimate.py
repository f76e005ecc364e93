"""How many rows the next collection calls would label: collect_complete.sh replayed on
estimates from the calls before (issue 46).

    python benchmarks/predict/collect_estimate.py COLLECT_LOG DATASET.csv \\
        GROUPS_A GROUPS_B [--calls 2] [--seconds 500] [--reserve 0]

COLLECT_LOG: a collect file of ``h200-complete/`` (each part's collect.log, the group
headers ``== SIZE: SHARE s (HH:MM:SS)``, each ``gtune train``'s ``N configurations
measured in S s`` and rc.txt's end times). From it, per size class (2D arrays; the
suite at 256^3; other 3D sizes): the rate (configurations per second of search time)
and the mean start and fit of a group (its seconds from header to the next, or to its
part's end, less its search time). From DATASET: the mean configurations (all three
techniques) of a labelled kernel of each class (2D: the 8192^2 rows; other 3D: the
512^3 rows; the suite: those COLLECT_LOG labelled, the dearest so far, and 15 % more
for the rest, dearer still). A kernel's search seconds are its
configurations over its class's rate. Each call then replays collect_complete.sh: a
group gets what is left of SECONDS but RESERVE s per later group, runs only from 30 s,
labels its kernels in turn until its share is spent (the cut search resumes in the next
call, its configurations in the store) and costs its start and fit besides. The
unlabelled kernels of each group are counted by loading it (as traces.py does).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from traces import training_kernels  # noqa: E402

from gtune.loadpredict.dataset import Dataset  # noqa: E402

HEADER = re.compile(r"^== (\S+): (\d+) s \((\d\d):(\d\d):(\d\d)\)")
MEASURED = re.compile(r"^(\d+) configurations measured in ([\d.]+) s")
PART = re.compile(r"^#### call (\d+), (\S+)")
END = re.compile(r"^(\S+) \(GPU \d\): exit status \d+ at (\d\d):(\d\d):(\d\d)")
LABELLED = re.compile(r"^\[\d+/\d+\] ([^:@\s]+):")


def size_class(size: str) -> str:
    if size.endswith("x1"):
        return "2d"
    return "suite" if size == "256x256x256" else "3d"


def _seconds(h: str, m: str, s: str) -> int:
    return int(h) * 3600 + int(m) * 60 + int(s)


@dataclass
class Logged:
    """One group of one part in a collect file."""

    cls: str
    start: int
    search: float = 0.0
    configs: int = 0


def log_groups(text: str) -> tuple[list[Logged | None], list[str]]:
    """The groups of a collect file (None where a part ends, with its end time as a
    group's start) and the suite kernels it labelled."""
    groups: list[Logged | None] = []
    ends: dict[tuple[str, str], int] = {}
    parts: list[tuple[str, str]] = []
    labelled = []
    call = ""
    for line in text.splitlines():
        if p := PART.match(line):
            call = p[1]
            if p[2] != "rc.txt":
                parts.append((call, p[2]))
                groups.append(None)
        elif e := END.match(line):
            ends[(call, e[1])] = _seconds(e[2], e[3], e[4])
        elif h := HEADER.match(line):
            groups.append(Logged(size_class(h[1]), _seconds(h[3], h[4], h[5])))
        elif (m := MEASURED.match(line)) and groups and groups[-1]:
            groups[-1].search, groups[-1].configs = float(m[2]), int(m[1])
        elif (k := LABELLED.match(line)) and groups and groups[-1]:
            labelled += [k[1]] if groups[-1].cls == "suite" else []
    # each part's end stands in for the start of the group after its last
    out: list[Logged | None] = []
    part = iter(parts)
    for g in [*groups[1:], None]:
        if g is None:
            out.append(Logged("end", ends.get(next(part), 0)))
        else:
            out.append(g)
    return [None, *out], labelled


def log_rates(text: str) -> tuple[dict[str, float], dict[str, float], list[str]]:
    """Configurations per second of search and start-and-fit seconds per class, and the
    suite kernels labelled, from a collect file."""
    groups, labelled = log_groups(text)
    configs: dict[str, list[float]] = {}
    fit: dict[str, list[float]] = {}
    for i, g in enumerate(groups):
        if g is None or g.cls == "end":
            continue
        nxt = groups[i + 1]
        end = nxt.start if nxt and nxt.start else None
        configs.setdefault(g.cls, [0.0, 0.0])
        configs[g.cls][0] += g.configs
        configs[g.cls][1] += g.search
        if end is not None:
            fit.setdefault(g.cls, []).append(end - g.start - g.search)
    rate = {c: v[0] / v[1] for c, v in configs.items()}
    return rate, {c: statistics.mean(v) for c, v in fit.items()}, labelled


@dataclass
class Group:
    cls: str
    left: int  # kernels without a row
    each: float  # search seconds per kernel
    done_part: float = 0.0  # seconds of the cut search already in the store


def groups_of(path: Path, have: set[str], each: dict[str, float]) -> list[Group]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for line in path.read_text().splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            one = Path(tmp) / "g.txt"
            one.write_text(line + "\n")
            names = set(training_kernels(one, Path(tmp)))
            if "suite:" in line:  # one size: the suite's rows are named without it
                names = {n for n in names if "@" not in n}
            cls = size_class(line.split()[0])
            out.append(Group(cls, len(names - have), each[cls]))
    return out


def call(groups: list[Group], seconds: float, reserve: float, fit: dict[str, float]) -> list[int]:
    """One collect_complete.sh: the rows each group labels."""
    t, got = 0.0, []
    for i, g in enumerate(groups):
        share = seconds - t - reserve * (len(groups) - i - 1)
        if share < 30 or g.left == 0:
            got.append(0)
            continue
        spent, n = 0.0, 0
        while g.left and spent + g.each - g.done_part <= share:
            spent += g.each - g.done_part
            g.done_part, g.left, n = 0.0, g.left - 1, n + 1
        if g.left and spent < share:
            g.done_part += share - spent
            spent = share
        t += spent + fit[g.cls]
        got.append(n)
    return got


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", type=Path)
    ap.add_argument("dataset", type=Path)
    ap.add_argument("groups", type=Path, nargs=2)
    ap.add_argument("--calls", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=500)
    ap.add_argument("--reserve", type=float, default=0)
    args = ap.parse_args(argv)
    rate, fit, labelled = log_rates(args.log.read_text())
    rate.setdefault("3d", rate["2d"])
    fit.setdefault("3d", fit["2d"])
    rows = Dataset.read_csv(args.dataset).rows
    n = {r.kernel: sum(r.configs.values()) for r in rows}
    mean = {
        "2d": statistics.mean(v for k, v in n.items() if "@8192x8192" in k),
        "3d": statistics.mean(v for k, v in n.items() if "@512x512x512" in k),
        "suite": 1.15 * statistics.mean(n[k] for k in labelled),
    }
    each = {c: mean[c] / rate[c] for c in mean}
    print(
        "rates /s:",
        {c: round(v, 1) for c, v in rate.items()},
        "start and fit s:",
        {c: round(v) for c, v in fit.items()},
        "search s per kernel:",
        {c: round(v) for c, v in each.items()},
    )
    have = set(n)
    parts = [groups_of(g, have, each) for g in args.groups]
    total = 0
    for c in range(1, args.calls + 1):
        got = [call(p, args.seconds, args.reserve, fit) for p in parts]
        total += sum(map(sum, got))
        print(f"call {c}: A {got[0]}, B {got[1]} (rows per group); {total} new rows in all")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
