"""A description's Python reference, run in a process of its own.

Started as ``python -P -m gtune.measure._reference DIR PARENT_PID`` by
:func:`run_reference`: it reads the kernel (``DIR/kernel.pickle``) and the initial
arrays (``DIR/NAME.npy``), calls the reference and writes each output as
``DIR/ref_NAME.npy``, then ``DIR/reference.done``; a reference that fails leaves its
:class:`~gtune.exceptions.GtuneError` in ``DIR/reference.error``. The reference is code
from the description's author: in its own process, one that loops is stopped with the
run (Ctrl-C, SIGTERM), and one that exits, crashes or leaves a traceback cannot take
gtune with it.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np

from gtune.exceptions import InputError
from gtune.kernel import TunableKernel
from gtune.processes import child_env, python_command, wait_stoppable

_DONE = "reference.done"
_ERROR = "reference.error"


def run_reference(kernel: TunableKernel, directory: Path) -> dict[str, np.ndarray]:
    """The reference's outputs for the initial arrays already written in ``directory``."""
    import os

    where = f"{kernel.label}: reference.python"
    with open(directory / "kernel.pickle", "wb") as fh:
        pickle.dump(kernel.to_dict(), fh)
    log_path = directory / "reference.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            python_command("gtune.measure._reference", str(directory), str(os.getpid())),
            env=child_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # Ctrl-C reaches gtune, which decides
        )
    try:
        wait_stoppable(lambda s: _exited(proc, s), None)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    error = directory / _ERROR
    if error.exists():
        with open(error, "rb") as fh:
            raise pickle.load(fh)  # written by our own child just now
    if not (directory / _DONE).exists():
        code = proc.returncode
        how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
        tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
        raise InputError(
            f"the reference {how} without returning its outputs"
            + (f": {' / '.join(tail)}" if tail else ""),
            source=where,
        )
    outputs = [a.name for a in kernel.arguments if a.kind == "buffer" and a.role != "input"]
    return {
        name: np.load(directory / f"ref_{name}.npy")
        for name in outputs
        if (directory / f"ref_{name}.npy").exists()
    }


def _exited(proc: subprocess.Popen[bytes], wait_s: float) -> bool:
    try:
        proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        return False
    return True


def write_references(kernel: TunableKernel, directory: Path) -> dict[str, np.ndarray]:
    """The reference's outputs for the initial arrays written in ``directory``, computed
    in this process and saved beside them (``ref_NAME.npy``, what the measuring worker
    checks against)."""
    from gtune.measure.problem import python_reference

    arrays = {
        a.name: np.load(directory / f"{a.name}.npy") for a in kernel.arguments if a.kind == "buffer"
    }
    refs = python_reference(kernel, arrays, copy=False)  # loaded for it alone
    for name, arr in refs.items():
        np.save(directory / f"ref_{name}.npy", arr)
    return refs


def _main(directory: Path) -> int:
    from gtune.description import from_dict
    from gtune.exceptions import GtuneError

    with open(directory / "kernel.pickle", "rb") as fh:
        kernel = from_dict(pickle.load(fh))  # written by our parent
    try:
        write_references(kernel, directory)
    except GtuneError as exc:
        with open(directory / _ERROR, "wb") as fh:
            pickle.dump(exc, fh)
        return 3
    (directory / _DONE).write_text("ok\n")
    return 0


if __name__ == "__main__":
    from gtune.measure._worker import guard_parent

    guard_parent(int(sys.argv[2]))
    sys.exit(_main(Path(sys.argv[1])))
