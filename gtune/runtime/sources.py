"""Tuned results as the runtime reads them: exports, bundles and result stores.

Every source becomes a list of :class:`TunedEntry`: one tuned configuration of a kernel
for one device and one problem size. An export (``gtune export``, one JSON) and a
bundle (``gtune export --sizes all``: every tuned size of a kernel in one JSON) carry
the source each configuration builds; a result store carries configurations only, and
the runtime renders their source from the kernel (:func:`gtune.tuned.tuned_kernel`).
Pure Python: nothing here loads OpenCL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gtune.exceptions import GtuneError, InputError
from gtune.kernel import TunableKernel
from gtune.store import open_store
from gtune.store.ranking import base_id, confirmation, groups, ranked
from gtune.tuned import BUNDLE_FORMAT, TunedKernel, read_bundle, read_json_object

STORE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


@dataclass(frozen=True)
class TunedEntry:
    """One tuned configuration: for which device and problem size, how fast, from
    where, and (for an export or a bundle) the tuned kernel that builds it."""

    device_identity: str
    sizes: Mapping[str, int]
    configuration: Mapping[str, int]
    origin: str  # the file or store URL it came from
    time_s: float | None = None
    confirmed: bool = False
    tuned: TunedKernel | None = None  # None: rendered from the kernel when chosen
    default: bool = False  # a bundle's default configuration (no device, no size)

    @property
    def size_key(self) -> tuple[tuple[str, int], ...]:
        return tuple(sorted((k, int(v)) for k, v in self.sizes.items()))


def is_store(source: str | Path) -> bool:
    """A result store URL (``sqlite://…``, ``postgresql://…``) or a ``.db`` file."""
    text = str(source)
    return "://" in text or Path(text).suffix.lower() in STORE_SUFFIXES


def read_sources(sources: Sequence[str | Path], kernel: TunableKernel | None) -> list[TunedEntry]:
    """Every entry of ``sources`` merged: for one device and size, a confirmed entry
    wins over one that is not, then the faster one, then the first given."""
    entries: list[TunedEntry] = []
    for source in sources:
        if is_store(source):
            if kernel is None:
                raise InputError(
                    "a result store holds configurations, not sources: give the kernel "
                    "(kernel=...) to read it",
                    source=str(source),
                )
            entries += store_entries(str(source), kernel)
        else:
            entries += of_kernel(file_entries(Path(source)), kernel, str(source))
    if kernel is None:
        names = sorted({e.tuned.name for e in entries if e.tuned is not None})
        if len(names) > 1:
            raise InputError(
                f"tuned results of {len(names)} kernels ({', '.join(names)}): give the "
                "kernel (kernel=...) whose results to use",
                source=", ".join(str(s) for s in sources),
            )
    return merged(entries)


def of_kernel(
    entries: Sequence[TunedEntry], kernel: TunableKernel | None, source: str
) -> list[TunedEntry]:
    """The entries of ``kernel`` (by its name in the store): a folder of exports may hold
    other kernels' too, which must never stand in for this one's."""
    if kernel is None:
        return list(entries)
    mine = [e for e in entries if e.tuned is None or e.tuned.name == kernel.store_name]
    if entries and not mine:
        names = sorted({e.tuned.name for e in entries if e.tuned is not None})
        raise InputError(
            f"no tuned result of {kernel.store_name}; it holds {', '.join(names)}",
            source=source,
        )
    return mine


def merged(entries: Iterable[TunedEntry]) -> list[TunedEntry]:
    best: dict[tuple[bool, str, tuple[tuple[str, int], ...]], TunedEntry] = {}
    for e in entries:
        key = (e.default, e.device_identity, e.size_key)
        if key not in best or _rank(e) < _rank(best[key]):
            best[key] = e
    return list(best.values())


def _rank(e: TunedEntry) -> tuple[bool, float]:
    return (not e.confirmed, e.time_s if e.time_s is not None else float("inf"))


# -- files ------------------------------------------------------------------------------


def file_entries(path: Path) -> list[TunedEntry]:
    """The entries of an export JSON, a bundle JSON, or every such JSON in a folder."""
    if path.is_dir():
        found = sorted(path.glob("*.json"))
        if not found:
            raise InputError("no tuned kernel (.json) in this folder", source=path)
        return [e for p in found for e in file_entries(p)]
    not_one = "not a tuned kernel or bundle written by `gtune export`"
    data = read_json_object(path, "tuned results", not_one)
    if data.get("format") == "gtune-tuned-kernel":
        return [export_entry(TunedKernel.from_dict(data, str(path)), str(path))]
    if data.get("format") == BUNDLE_FORMAT:
        return bundle_entries(path)
    raise InputError(not_one, source=path)


def export_entry(tuned: TunedKernel, origin: str) -> TunedEntry:
    return TunedEntry(
        device_identity=tuned.device_identity or tuned.device,
        sizes=dict(tuned.tuned_size),
        configuration=dict(tuned.configuration),
        origin=origin,
        time_s=tuned.time_s,
        confirmed=tuned.confirmed,
        tuned=tuned,
    )


def bundle_entries(path: Path) -> list[TunedEntry]:
    """The entries of a bundle (``gtune export --sizes``): one per tuned (device, size),
    and its default configuration as an entry with ``default`` set."""
    bundle = read_bundle(path)
    origin = str(path)
    out = [
        TunedEntry(
            device_identity=e.device_identity,
            sizes=dict(e.sizes),
            configuration=dict(bundle.configurations[e.config_index].configuration),
            origin=origin,
            time_s=e.median_s,
            confirmed=e.confirmed,
            tuned=bundle.tuned(e.config_index, e.sizes),
        )
        for e in bundle.entries
    ]
    if bundle.default_index is not None:
        d = bundle.tuned(bundle.default_index)
        out.append(TunedEntry("", {}, dict(d.configuration), origin, tuned=d, default=True))
    return out


# -- stores -----------------------------------------------------------------------------


def store_entries(url: str, kernel: TunableKernel) -> list[TunedEntry]:
    """The best stored configuration of ``kernel`` for every (device, size) the store
    holds, as ``gtune export`` would choose it (the latest confirmation round's best);
    rows of another version of the kernel (its source or description changed) are
    left out."""
    store = open_store(url, readonly=True)
    try:
        rows = list(store.rows(kernel=kernel.store_name))
        location = store.location
    finally:
        store.close()
    entries = []
    identities: dict[tuple[tuple[str, int], ...], str] = {}
    for (device, kernel_id), group in groups(rows).items():
        sizes = {k: int(v) for k, v in group[0].problem.items()}
        key = tuple(sorted(sizes.items()))
        if key not in identities:
            try:
                identities[key] = kernel.with_sizes(sizes).identity()
            except GtuneError:
                identities[key] = ""
        if base_id(kernel_id) != identities[key]:
            continue
        best = ranked(group)
        if not best:
            continue
        row = best[0]
        entries.append(
            TunedEntry(
                device_identity=device,
                sizes=sizes,
                configuration=dict(row.result.config),
                origin=location,
                time_s=row.result.median_s,
                confirmed=confirmation(row) is not None,
            )
        )
    return entries


__all__ = [
    "TunedEntry",
    "bundle_entries",
    "file_entries",
    "is_store",
    "read_sources",
    "store_entries",
]
