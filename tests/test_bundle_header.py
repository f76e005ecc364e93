"""The bundle's C header read as a C programmer uses it: the device named by its
CL_DEVICE_NAME (made a slug as gtune's Python side makes it, whatever the C locale),
the header built as C99 and C++ with every warning an error in two files of one
program, ``gtune_select`` called from many threads at once, two bundles in one file
(each called by its own name; ``gtune_select`` then refuses to build), and build
options that could not fit refused at export. Each answer is checked against
:meth:`TunedBundle.select` (pure C: no OpenCL needed)."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.device import name_slug
from gtune.exceptions import InputError
from gtune.tuned import (
    TunedBundle,
    bundle_header,
    read_bundle,
    tuned_bundle,
    tuned_kernel,
    write_bundle,
)
from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")

HEAT = ROOT / "stencils" / "heat3d.cl"
CPU = "my-cpu-model-0123abcd"
GPU = "nvidia-h200-1a2b3c4d"
TUNED = [
    (CPU, (32, 16, 8), {"WX": 32, "WY": 2}),
    (CPU, (64, 64, 64), {"WX": 8, "WY": 8}),
    (GPU, (64, 64, 64), {"WX": 64, "WY": 1}),
]
STRICT = ["-Wall", "-Wextra", "-Werror", "-pedantic"]
NAMES = [
    "NVIDIA H200",
    "  Tesla V100-SXM2-32GB  ",
    "gfx90a:sramecc+:xnack-",
    "Intel(R) Data Center GPU Max 1550",
    "cpu-haswell-AMD EPYC 7B13 64-Core Processor",  # cut at 32
    "AMD Radeon RX 7900 XTX ---- 0123456789abcdef",  # the cut lands on a dash
    "pthread-skylake-avx512-AMD EPYC",
    "---",
    "",
]


def _bundle(
    folder: Path, name: str, members: Sequence[tuple[str, tuple[int, ...], dict[str, int]]]
) -> Path:
    kernel = load_kernel(str(HEAT), {"NX": 32, "NY": 16, "NZ": 8})
    default = kernel.default_config()
    assert default is not None
    tuned = [
        tuned_kernel(
            kernel.with_sizes(dict(zip(("NX", "NY", "NZ"), size, strict=True))),
            {**default, **group},
            device_identity=device,
            time_s=1e-4,
            confirmed=True,
        )
        for device, size, group in members
    ]
    renamed = [dataclasses.replace(t, name=f"{name}:stencil") for t in tuned]
    base = dataclasses.replace(tuned_kernel(kernel, default), name=f"{name}:stencil")
    bundle, sources = tuned_bundle(renamed, base, name)
    write_bundle(bundle, sources, folder, name, force=False)
    return folder / f"{name}_bundle.json"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundles")
    _bundle(out, "heat3d", TUNED)
    _bundle(out, "other", TUNED[2:])  # the GPU entry only
    return out


def _build(
    folder: Path, tmp_path: Path, sources: dict[str, str], compiler: str, *flags: str
) -> subprocess.CompletedProcess[str]:
    for name, text in sources.items():
        (tmp_path / name).write_text(text)
    files = [str(tmp_path / n) for n in sources]
    return subprocess.run(
        [compiler, *flags, "-I", str(folder), "-o", str(tmp_path / "prog"), *files],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


SLUGS = r"""
#include "heat3d_bundle.h"
int main(int argc, char **argv) {
    char slug[33];
    int i;
    for (i = 1; i < argc; i++) {
        gtune_device_slug(argv[i], slug);
        printf("[%s]\n", slug);
    }
    return 0;
}
"""


def test_the_c_slug_of_a_device_name_is_pythons(folder: Path, tmp_path: Path) -> None:
    built = _build(folder, tmp_path, {"slug.c": SLUGS}, "cc", "-std=c99", *STRICT)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "prog"), *NAMES], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == [f"[{name_slug(n)}]" for n in NAMES]


CALLER = r"""
#include "heat3d_bundle.h"
#include <stdlib.h>
int quiet(void);
int main(int argc, char **argv) {
    int i;
    for (i = 1; i + 3 < argc; i += 4) {
        gtune_choice c = gtune_select(argv[i][0] == '-' ? NULL : argv[i], atol(argv[i + 1]),
                                      atol(argv[i + 2]), atol(argv[i + 3]));
        printf("%d %d %s\n", c.how, c.config, c.build_options);
    }
    return quiet();
}
"""
# a second file of the program that includes the header and calls nothing of it
QUIET = '#include "heat3d_bundle.h"\nint quiet(void) { return GTUNE_EXACT; }\n'
ASKED = [
    ("NVIDIA H200", (64, 64, 64)),
    ("nvidia-h200", (128, 128, 128)),  # the slug itself is a name too
    ("  My CPU Model ", (64, 32, 8)),
    (CPU, (16, 16, 16)),
    ("-", (64, 64, 64)),  # NULL: the default
]


@pytest.mark.parametrize(
    ("compiler", "std"), [("cc", "-std=c99"), ("cc", "-std=c11"), ("c++", "-std=c++11")]
)
def test_the_header_builds_strictly_in_two_files_and_chooses_as_python(
    folder: Path, tmp_path: Path, compiler: str, std: str
) -> None:
    if shutil.which(compiler) is None:
        pytest.skip(f"no {compiler}")
    ext = ".cpp" if compiler == "c++" else ".c"
    sources = {f"main{ext}": CALLER, f"quiet{ext}": QUIET}
    built = _build(folder, tmp_path, sources, compiler, std, *STRICT)
    assert built.returncode == 0, built.stderr
    argv = [str(v) for device, size in ASKED for v in (device, *size)]
    ran = subprocess.run([str(tmp_path / "prog"), *argv], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    bundle = read_bundle(folder / "heat3d_bundle.json")
    hows = {"exact": 0, "nearest": 1, "default": 2}
    for (device, size), line in zip(ASKED, ran.stdout.splitlines(), strict=True):
        how, config, *options = line.split()
        sizes = dict(zip(("NX", "NY", "NZ"), size, strict=True))
        py = bundle.select("" if device == "-" else device, sizes)
        assert (int(how), int(config), options) == (
            hows[py.how],
            py.configuration.index,
            list(py.build_options),
        ), (device, size)


THREADS = r"""
#include "heat3d_bundle.h"
#include <pthread.h>
#define CASES 120
static const char *devices[3] = {"My CPU Model", "NVIDIA H200", "Another GPU"};
static gtune_choice expected[CASES];
static long checked[8], wrong[8];
static gtune_choice pick(int k) {
    return gtune_select(devices[k % 3], 8L * (1 + k % 8), 8L * (1 + k / 3 % 8), 8L * (1 + k % 5));
}
static int same(const gtune_choice *a, const gtune_choice *b) {
    int d, ok = a->how == b->how && a->config == b->config && a->entry == b->entry &&
                a->legal == b->legal && a->source_file == b->source_file &&
                a->work_dim == b->work_dim && strcmp(a->build_options, b->build_options) == 0;
    for (d = 0; d < 3; d++)
        ok = ok && a->global_size[d] == b->global_size[d] && a->local_size[d] == b->local_size[d];
    return ok;
}
static void *hammer(void *arg) {
    int t = *(int *)arg, round, k;
    for (round = 0; round < 300; round++)
        for (k = 0; k < CASES; k++) {
            int at = (k * 7 + t * 13) % CASES; /* every thread in another order */
            gtune_choice c = pick(at);
            checked[t]++;
            if (!same(&c, &expected[at])) wrong[t]++;
        }
    return NULL;
}
int main(void) {
    pthread_t threads[8];
    int ids[8], t, k, kinds[3] = {0, 0, 0};
    long total = 0, bad = 0;
    for (k = 0; k < CASES; k++) {
        expected[k] = pick(k);
        if (expected[k].how >= 0) kinds[expected[k].how]++;
    }
    for (t = 0; t < 8; t++) {
        ids[t] = t;
        pthread_create(&threads[t], NULL, hammer, &ids[t]);
    }
    for (t = 0; t < 8; t++) {
        pthread_join(threads[t], NULL);
        total += checked[t];
        bad += wrong[t];
    }
    printf("%ld %ld %d %d %d\n", total, bad, kinds[0], kinds[1], kinds[2]);
    return 0;
}
"""


def test_gtune_select_from_eight_threads_at_once(folder: Path, tmp_path: Path) -> None:
    built = _build(folder, tmp_path, {"threads.c": THREADS}, "cc", "-std=c99", *STRICT, "-pthread")
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    total, bad, exact, nearest, default = (int(v) for v in ran.stdout.split())
    assert total == 8 * 300 * 120 and bad == 0
    assert exact > 0 and nearest > 0 and default > 0  # every kind of answer was asked for


TWO = r"""
#include "heat3d_bundle.h"
#include "other_bundle.h"
int main(void) {
    gtune_choice a = heat3d_stencil_select("My CPU Model", 32, 16, 8);
    gtune_choice b = other_stencil_select("My CPU Model", 32, 16, 8);
    printf("%d %d\n", a.how, b.how);
    return CALL;
}
"""


def test_two_bundles_in_one_file(folder: Path, tmp_path: Path) -> None:
    named = TWO.replace("CALL", "0")
    built = _build(folder, tmp_path, {"two.c": named}, "cc", "-std=c99", *STRICT)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True)
    heat = read_bundle(folder / "heat3d_bundle.json").select(
        "My CPU Model", {"NX": 32, "NY": 16, "NZ": 8}
    )
    other = read_bundle(folder / "other_bundle.json").select(
        "My CPU Model", {"NX": 32, "NY": 16, "NZ": 8}
    )
    # each answers from its own table: the CPU size is tuned in one, not in the other
    assert (heat.how, other.how) == ("exact", "default")
    assert ran.stdout.split() == ["0", "2"]
    # gtune_select would be the first bundle's without a word: it names none
    ambiguous = TWO.replace("CALL", 'gtune_select("My CPU Model", 32, 16, 8).how')
    refused = _build(folder, tmp_path, {"two.c": ambiguous}, "cc", "-std=c99", *STRICT)
    assert refused.returncode != 0
    assert "gtune_select_names_several_bundles_call_each_PREFIX_select" in refused.stderr
    # unless the application says which it means
    chosen = "#define gtune_select other_stencil_select\n" + ambiguous
    built = _build(folder, tmp_path, {"two.c": chosen}, "cc", "-std=c99", *STRICT)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True)
    assert ran.stdout.split() == ["0", "2"] and ran.returncode == 2  # other's answer


def test_build_options_that_could_not_fit_are_refused_at_export(folder: Path) -> None:
    bundle = read_bundle(folder / "heat3d_bundle.json")
    assert "gtune_select" in bundle_header(bundle)
    long = TunedBundle(
        **{**bundle.__dict__, "build_options": tuple(f"-DFLAG{i}=1" for i in range(120))}
    )
    too_long = r"build options may take \d+ characters, over the C header's 1023"
    with pytest.raises(InputError, match=too_long):
        bundle_header(long)
