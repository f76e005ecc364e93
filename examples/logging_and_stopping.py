"""gtune's log, and stopping a run from another thread.

    python examples/logging_and_stopping.py --seconds 20

gtune logs to the ``gtune`` logger (milestones at INFO, every configuration at DEBUG)
and prints nothing unless the application configures logging. A ``CancelToken``
stops a run after the configuration being measured; everything measured until then is
in the report and the store, and the same call later resumes from the store.
"""

from __future__ import annotations

import argparse
import logging
import threading
from pathlib import Path

import gtune

HEAT = Path(__file__).resolve().parent.parent / "stencils" / "heat3d.cl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="32x32x32")
    parser.add_argument("--seconds", type=float, default=20.0, help="stop the run after this")
    args = parser.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    token = gtune.CancelToken()
    timer = threading.Timer(args.seconds, token.cancel, args=("stopped by the example",))
    timer.start()
    nx, ny, nz = (int(v) for v in args.size.split("x"))
    try:
        report = gtune.tune(
            HEAT,
            sizes={"NX": nx, "NY": ny, "NZ": nz},
            technique="global",
            cancel=token,
            store="sqlite://",  # in memory: this example keeps nothing
        )
    finally:
        timer.cancel()
    state = "stopped early" if report.interrupted else "finished"
    print(f"{state} after {report.evaluations} configurations; best {report.best_s * 1e6:.2f} µs")


if __name__ == "__main__":
    main()
