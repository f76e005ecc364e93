"""Worker processes: isolation for builds and runs that may hang or crash the driver.

Workers are fresh interpreters (``python -m gtune.measure._worker FD``; forking after the
NVIDIA driver is initialised fails) and talk to the parent over a pipe with plain data. A *measure*
worker holds the problem data on the device and times configurations; *compile*
workers only build programs and hand back binaries, so that compilation overlaps
measurement.
"""

from __future__ import annotations

import signal
import time
import traceback
import warnings
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any


def serve(conn: Connection) -> None:
    """Worker main loop: ``(verb, payload)`` in, ``(status, payload)`` out."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C means
    # Build logs are kept with each result; pyopencl's warnings would only repeat them.
    warnings.filterwarnings("ignore", message="Non-empty compiler output")
    session: Any = None
    compiler: Any = None
    while True:
        try:
            verb, payload = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        try:
            if verb == "stop":
                conn.send(("ok", None))
                return
            if verb == "setup":
                from gtune.device import DeviceLimits
                from gtune.kernel import from_dict
                from gtune.measure._opencl import Session

                limits = DeviceLimits.from_dict(payload["device"])
                kernel = from_dict(payload["kernel"])
                session = Session(limits, kernel, Path(payload["data_dir"]))
                conn.send(("ok", None))
            elif verb == "compiler":
                from gtune.device import DeviceLimits
                from gtune.measure._opencl import Compiler

                compiler = Compiler(DeviceLimits.from_dict(payload["device"]))
                conn.send(("ok", None))
            elif verb == "build":
                built = compiler.build_binary(payload["source"], payload["options"])
                conn.send(("ok", built))
            elif verb == "measure":
                start = time.perf_counter()
                data = session.measure(**payload).to_dict()
                data["extra"]["worker_s"] = time.perf_counter() - start
                conn.send(("ok", data))
            elif verb == "settle":
                conn.send(("ok", session.settle(payload["config"])))
            elif verb == "output":
                conn.send(("ok", session.read_output(payload["name"])))
            elif verb == "reload_refs":
                session.load_references()
                conn.send(("ok", None))
            else:
                conn.send(("error", f"unknown verb {verb!r}"))
        except Exception as exc:  # reported to the parent, which classifies it
            from gtune.exceptions import GtuneError

            if isinstance(exc, GtuneError):
                conn.send(("gtune_error", exc))
            else:
                conn.send(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


if __name__ == "__main__":
    import sys

    serve(Connection(int(sys.argv[1])))
