"""A measurement as plain data: one configuration of one kernel on one device.

A :class:`MeasureJob` holds everything a machine needs to measure a configuration --
the kernel's description and every file it reads (source, a Python reference beside it,
data files its reference names), the problem size, the configuration, the device's
identity, the timing rule, the seed the problem data is generated from -- and nothing
that only exists on the machine that made it (no temporary paths, no live objects). It
round-trips through JSON. :func:`execute` measures it wherever it runs and returns a
:class:`MeasureOutcome`, also plain data; ``python -m gtune.measure.job < job.json``
does the same in a fresh process and prints the outcome as JSON.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gtune.exceptions import GtuneError, InputError
from gtune.kernel import TunableKernel, canonical_config, is_path_entry, load_kernel
from gtune.measure.result import Result
from gtune.measure.stats import TimingPolicy

JOB_VERSION = 1


def _encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@dataclass(frozen=True)
class MeasureJob:
    """One configuration to measure; see the module docs."""

    description: Mapping[str, Any]  # the description's YAML as data (``source:`` a file name)
    files: Mapping[str, str]  # file name -> base64 content, all beside the description
    sizes: Mapping[str, int]
    config: Mapping[str, int]
    device: str  # device identity (or any --device selector)
    timing: Mapping[str, float | int] = field(default_factory=dict)  # TimingPolicy fields
    verify: bool = True
    timeout_s: float = 60.0
    seed: int = 1234  # problem data is generated from this on the measuring machine
    trust_modules: tuple[str, ...] = ()

    @classmethod
    def for_kernel(
        cls,
        kernel: TunableKernel,
        config: Mapping[str, int],
        device: str,
        *,
        timing: TimingPolicy | None = None,
        verify: bool = True,
        timeout_s: float = 60.0,
        seed: int = 1234,
    ) -> MeasureJob:
        """The job measuring ``config`` of ``kernel``, with every file it reads inside."""
        raw = dict(kernel.raw)
        source_name = Path(kernel.source_path or "kernel.cl").name
        files = {source_name: _encode(kernel.source.encode())}
        raw["source"] = source_name
        base = Path(kernel.description_path).parent if kernel.description_path else None
        trusted: tuple[str, ...] = ()
        ref = kernel.reference
        if ref.kind == "python":
            module = ref.target.rpartition(":")[0]
            if module.endswith(".py"):
                if base is None or not (base / module).is_file():
                    raise InputError(f"reference file {module} not found", source=kernel.label)
                files[Path(module).name] = _encode((base / module).read_bytes())
                trusted = (Path(module).name,)  # the sender trusted it to run
            else:
                trusted = (module,)
            for value in ref.args.values():
                if isinstance(value, str) and base is not None and (base / value).is_file():
                    files[Path(value).name] = _encode((base / value).read_bytes())
        return cls(
            description=raw,
            files=files,
            sizes=dict(kernel.sizes),
            config=dict(config),
            device=device,
            timing=(timing or TimingPolicy()).to_dict(),
            verify=verify,
            timeout_s=timeout_s,
            seed=seed,
            trust_modules=trusted,
        )

    @property
    def key(self) -> str:
        """A stable name for the job: what it measures, not when."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": JOB_VERSION,
            "description": dict(self.description),
            "files": dict(self.files),
            "sizes": dict(self.sizes),
            "config": dict(self.config),
            "device": self.device,
            "timing": dict(self.timing),
            "verify": self.verify,
            "timeout_s": self.timeout_s,
            "seed": self.seed,
            "trust_modules": list(self.trust_modules),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MeasureJob:
        try:
            if int(data.get("version", 0)) != JOB_VERSION:
                raise InputError(
                    f"measurement job version {data.get('version')!r} is not {JOB_VERSION}"
                )
            return cls(
                description=dict(data["description"]),
                files={str(k): str(v) for k, v in dict(data["files"]).items()},
                sizes={str(k): int(v) for k, v in dict(data["sizes"]).items()},
                config={str(k): int(v) for k, v in dict(data["config"]).items()},
                device=str(data["device"]),
                timing=dict(data.get("timing") or {}),
                verify=bool(data.get("verify", True)),
                timeout_s=float(data.get("timeout_s", 60.0)),
                seed=int(data.get("seed", 1234)),
                trust_modules=tuple(str(m) for m in data.get("trust_modules") or ()),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"malformed measurement job: {exc}") from None

    @classmethod
    def from_json(cls, text: str) -> MeasureJob:
        try:
            return cls.from_dict(json.loads(text))
        except json.JSONDecodeError as exc:
            raise InputError(f"a measurement job is JSON: {exc}") from None

    def kernel(self, directory: Path) -> TunableKernel:
        """The job's kernel, its files written into ``directory`` (nothing else read)."""
        for name, content in self.files.items():
            if Path(name).name != name or name.startswith("."):
                raise InputError(f"job file name {name!r} is not a plain file name")
            (directory / name).write_bytes(base64.b64decode(content))
        desc = directory / "job-description.yaml"
        desc.write_text(yaml.safe_dump(dict(self.description), sort_keys=False))
        # a reference file the job carries, trusted by its sender, is trusted where it lands
        trusted = [
            str(directory / t) if t.endswith(".py") and t in self.files else t
            for t in self.trust_modules
            if not is_path_entry(t) or (t.endswith(".py") and t in self.files)
        ]
        return load_kernel(desc, dict(self.sizes), trust_modules=trusted)


@dataclass(frozen=True)
class MeasureOutcome:
    """What measuring a job gave: the result, on which device, in how long."""

    job: str  # the job's key
    device: str  # identity of the device that measured it
    result: Mapping[str, Any]  # Result.to_dict()
    wall_s: float

    @property
    def as_result(self) -> Result:
        return Result.from_dict(self.result)

    def to_json(self) -> str:
        return json.dumps(
            {
                "job": self.job,
                "device": self.device,
                "result": dict(self.result),
                "wall_s": self.wall_s,
            },
            sort_keys=True,
            default=str,
        )

    @classmethod
    def from_json(cls, text: str) -> MeasureOutcome:
        try:
            data = json.loads(text)
            return cls(
                str(data["job"]), str(data["device"]), dict(data["result"]), float(data["wall_s"])
            )
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed measurement outcome: {exc}") from None


def execute(job: MeasureJob) -> MeasureOutcome:
    """Measure ``job`` on this machine (in an isolated worker process, as always)."""
    from gtune.measure import select_device
    from gtune.measure.opencl_evaluator import OpenCLEvaluator

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gtune-job-") as tmp:
        kernel = job.kernel(Path(tmp))
        device = select_device(job.device)
        timing = TimingPolicy(**job.timing) if job.timing else TimingPolicy()  # type: ignore[arg-type]
        with OpenCLEvaluator(
            kernel,
            device,
            timing=timing,
            timeout_s=job.timeout_s,
            compile_workers=0,
            verify=job.verify,
            seed=job.seed,
        ) as evaluator:
            result = evaluator.evaluate(dict(job.config))
    if canonical_config(result.config) != canonical_config(job.config):
        raise GtuneError("the evaluator answered for another configuration")
    return MeasureOutcome(job.key, device.identity, result.to_dict(), time.monotonic() - started)


def main(argv: list[str] | None = None) -> int:
    """``python -m gtune.measure.job [JOB.json]``: measure one job, print its outcome."""
    args = sys.argv[1:] if argv is None else argv
    try:
        text = Path(args[0]).read_text() if args else sys.stdin.read()
        print(execute(MeasureJob.from_json(text)).to_json())
    except GtuneError as exc:
        print(f"gtune: error: {exc.render()}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"gtune: error: cannot read the job: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
