"""Shared helpers of the store tests (importable by worker processes)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from gtune.measure import ReplayEvaluator, StoredEvaluator
from gtune.result import Result, Status
from gtune.store import open_store


def result(wx: int, t: float = 1e-3, status: Status = Status.OK, **extra: Any) -> Result:
    return Result(
        {"WX": wx, "WY": 1},
        status,
        compile_s=0.25,
        times_s=(t, t * 1.5, t * 0.5) if status is Status.OK else (),
        message="" if status is Status.OK else f"{status.value} here",
        error_code=-54 if status is Status.LAUNCH_FAILED else None,
        max_error=1e-7 if status is Status.OK else None,
        extra=extra,
    )


def raw_execute(url: str, sql: str, args: Sequence[Any] = ()) -> list[Any]:
    """Run SQL on a store behind gtune's back (to damage or age it)."""
    if url.startswith("postgresql"):
        import psycopg

        with psycopg.connect(url, autocommit=True) as con:
            cur = con.execute(sql.replace("?", "%s"), tuple(args))
            return list(cur.fetchall()) if cur.description else []
    path = url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as con:
        return con.execute(sql, tuple(args)).fetchall()


class Counting(ReplayEvaluator):
    """A replay evaluator that takes a little time per configuration and logs each one
    it is asked for to a file (shared by processes)."""

    def __init__(self, results: list[Result], log: Path, delay_s: float) -> None:
        super().__init__(results)
        self.log = log
        self.delay_s = delay_s

    def evaluate(self, config: Mapping[str, int]) -> Result:
        time.sleep(self.delay_s)
        with self.log.open("a") as f:
            f.write(json.dumps(dict(config), sort_keys=True) + "\n")
        return super().evaluate(config)

    def evaluate_batch(self, configs: Sequence[Mapping[str, int]]) -> Iterator[Result]:
        for c in configs:
            yield self.evaluate(c)


def tune_process(url: str, log: str, order: list[int], batch: int, delay_s: float) -> int:
    """One 'tuning process': batches of configurations through a StoredEvaluator on
    the shared store. Returns how many it measured itself."""
    recording = [result(w, w * 1e-4) for w in range(1, 41)]
    store = open_store(url)
    try:
        ev = StoredEvaluator(
            Counting(recording, Path(log), delay_s),
            store,
            device="dev",
            kernel_id="kid",
            kernel_name="k",
            poll_s=0.02,
        )
        configs = [{"WX": w, "WY": 1} for w in order]
        for i in range(0, len(configs), batch):
            got = list(ev.evaluate_batch(configs[i : i + batch]))
            if [r.config["WX"] for r in got] != order[i : i + batch]:
                raise AssertionError("results out of order")
        return ev.measured
    finally:
        store.close()


def open_together(urls: list[str], barrier: Any, wx: int) -> int:
    """A process that, in step with the others (``barrier``), opens each store in
    ``urls`` (creating it) and adds one result. Returns how many it added."""
    added = 0
    for url in urls:
        barrier.wait(timeout=60)
        with open_store(url) as store:
            store.add(result(wx), device="dev", kernel_id="kid", kernel_name="k")
            added += 1
    return added
