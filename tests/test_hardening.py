"""Bad input gets one message naming the input and exit status 2: one test per defect.

Most tests run the command line in-process through :func:`gtune.cli.main` on paths that
stop before any device is touched; the signal tests run a real tuning on PoCL.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from gtune.budget import Budget
from gtune.cli import main
from gtune.commands._common import parse_size
from gtune.description import ReferenceCodeNotice, from_dict, load_kernel
from gtune.exceptions import InputError
from gtune.heuristics.spec import load_spec, parse_spec
from gtune.kernel import domain_values
from gtune.store import open_store

from .conftest import DATA, ROOT, run_gtune

STENCILS = ROOT / "stencils"


def gtune(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """Run the CLI in-process; return the status and stderr (never a traceback)."""
    code = main(list(argv))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


@pytest.fixture
def naive(tmp_path: Path) -> Path:
    for f in DATA.glob("naive7*"):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path / "naive7.yaml"


def edit(path: Path, old: str, new: str) -> Path:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return path


# -- kernel identity: everything a result depends on -----------------------------------


def test_fixing_the_reference_changes_the_identity(naive: Path) -> None:
    before = load_kernel(naive).identity()
    ref = naive.parent / "naive7_ref.py"
    ref.write_text(ref.read_text().replace("c0", "c0 ") + "\n# fixed\n")
    after = load_kernel(naive).identity()
    assert before != after
    assert from_dict(load_kernel(naive).to_dict()).identity() == after


def test_a_data_file_the_reference_names_is_part_of_the_identity(naive: Path) -> None:
    (naive.parent / "weights.txt").write_text("1 2 3\n")
    edit(
        naive,
        'reference: {python: "naive7_ref.py:reference"}',
        'reference: {python: "naive7_ref.py:reference", args: {weights: weights.txt}}',
    )
    before = load_kernel(naive).identity()
    (naive.parent / "weights.txt").write_text("1 2 4\n")
    assert load_kernel(naive).identity() != before


def test_build_options_are_part_of_the_identity(naive: Path) -> None:
    before = load_kernel(naive).identity()
    edit(naive, "flops_per_point: 8", "flops_per_point: 8\nbuild_options: [-cl-fast-relaxed-math]")
    assert load_kernel(naive).identity() != before


def test_device_identity_includes_the_driver_version() -> None:
    from tests.space.space_helpers import h100_limits

    a, b = h100_limits(driver_version="580.1"), h100_limits(driver_version="580.2")
    assert a.identity != b.identity


# -- descriptions are data ----------------------------------------------------------------


def test_a_module_reference_must_be_trusted(naive: Path, monkeypatch) -> None:
    edit(naive, '"naive7_ref.py:reference"', '"os:system"')
    with pytest.raises(InputError, match=r"reference\.python: module 'os' is not trusted"):
        load_kernel(naive)
    monkeypatch.setenv("GTUNE_TRUST_MODULES", "json")
    with pytest.raises(InputError, match="not trusted"):
        load_kernel(naive)
    edit(naive, '"os:system"', '"json:loads"')
    assert load_kernel(naive).reference.target == "json:loads"


def test_trust_module_flag(naive: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("GTUNE_TRUST_MODULES", raising=False)
    edit(naive, '"naive7_ref.py:reference"', '"json:loads"')
    code, err = gtune(capsys, "space", str(naive), "--size", "NX=0")
    assert code == 2 and "not trusted" in err
    code, err = gtune(capsys, "--trust-module", "json", "space", str(naive), "--size", "NX=0")
    assert code == 2 and "not trusted" not in err and "--size" in err
    assert "GTUNE_TRUST_MODULES" not in os.environ


def test_reference_file_outside_the_folder_is_refused(naive: Path, tmp_path: Path) -> None:
    shutil.copy(naive.parent / "naive7_ref.py", tmp_path.parent / f"ref_{uuid.uuid4().hex}.py")
    edit(naive, '"naive7_ref.py:reference"', '"../naive7_ref.py:reference"')
    with pytest.raises(InputError, match="outside the description's folder"):
        load_kernel(naive)


def test_source_outside_the_folder_is_refused(naive: Path) -> None:
    edit(naive, "kernel: naive7", "kernel: naive7\nsource: /etc/hostname")
    with pytest.raises(InputError, match=r"source: .*outside the description's folder"):
        load_kernel(naive)


def test_source_given_on_the_command_line_is_allowed(tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    for f in DATA.glob("naive7*"):
        shutil.copy(f, (other if f.suffix == ".cl" else tmp_path) / f.name)
    # the description beside the source names it; the user gave the source's path
    shutil.copy(tmp_path / "naive7.yaml", other / "naive7.yaml")
    shutil.copy(tmp_path / "naive7_ref.py", other / "naive7_ref.py")
    assert load_kernel(other / "naive7.cl").name == "naive7"


def test_python_reference_notice(naive: Path) -> None:
    from gtune import description as kmod

    kmod._NOTICED.clear()
    with pytest.warns(ReferenceCodeNotice, match="Python code"):
        load_kernel(naive)


# -- YAML and files --------------------------------------------------------------------


def test_alias_bomb_fails_fast(naive: Path) -> None:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        refs = ",".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    naive.write_text("\n".join(lines) + "\n")
    assert naive.stat().st_size < 1024
    start = time.monotonic()
    with pytest.raises(InputError, match="expands to more than"):
        load_kernel(naive)
    assert time.monotonic() - start < 5  # a sanity bound, not a benchmark


def test_a_long_string_aliased_many_times_is_refused(naive: Path, tmp_path: Path) -> None:
    text = "x" * 1_500_000
    naive.write_text(f"doc: &s {text}\nnotes: [{', '.join(['*s'] * 2000)}]\n")
    with pytest.raises(InputError, match="bytes of text"):
        load_kernel(naive)
    done = run_gtune("space", str(naive))
    assert done.returncode == 2 and "bytes of text" in done.stderr
    assert len(done.stdout) + len(done.stderr) < 10_000  # one message, not the text


@pytest.mark.parametrize(
    "doc",
    ["a: &a [1, *a]\n", "a: &a {b: *a}\n", "kernel: &k\n  x: [*k]\n"],
)
def test_a_recursive_alias_is_refused(naive: Path, doc: str) -> None:
    naive.write_text(doc)
    with pytest.raises(InputError, match="recursive structure"):
        load_kernel(naive)


def test_deep_nesting_is_refused(naive: Path) -> None:
    naive.write_text("kernel: " + "[" * 500 + "]" * 500 + "\n")
    with pytest.raises(InputError, match="nested deeper than"):
        load_kernel(naive)


def test_non_utf8_description(naive: Path) -> None:
    naive.write_bytes(naive.read_bytes() + b"doc: \xff\xfe\n")
    with pytest.raises(InputError, match=r"naive7\.yaml: not UTF-8"):
        load_kernel(naive)


def test_non_utf8_source(naive: Path) -> None:
    (naive.parent / "naive7.cl").write_bytes(b"__kernel void k() {} // \xff\n")
    with pytest.raises(InputError, match=r"source: 'naive7\.cl': not UTF-8"):
        load_kernel(naive)


def test_source_that_is_a_directory(naive: Path, capsys) -> None:
    edit(naive, "kernel: naive7", "kernel: naive7\nsource: .")
    code, err = gtune(capsys, "space", str(naive))
    assert code == 2 and "is a directory" in err and "naive7.yaml: source" in err


def test_description_path_that_is_a_directory(tmp_path: Path, capsys) -> None:
    code, err = gtune(capsys, "space", str(tmp_path))
    assert code == 2 and "is a directory" in err


def test_unreadable_description(naive: Path, capsys) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    naive.chmod(0)
    code, err = gtune(capsys, "space", str(naive))
    assert code == 2 and str(naive) in err


def test_yaml_python_tags_are_refused(naive: Path) -> None:
    naive.write_text("kernel: !!python/object/apply:os.system [echo hi]\n")
    with pytest.raises(InputError, match="malformed YAML"):
        load_kernel(naive)


def _repository_yaml() -> list[Path]:
    found = [*ROOT.glob("*.y*ml"), *(ROOT / "tests").rglob("*.y*ml")]
    for top in ("stencils", "specs", "examples", "benchmarks", "gtune", "docs"):
        found += (ROOT / top).rglob("*.y*ml")
    return sorted(p for p in found if p.name != "mkdocs.yml")  # (MkDocs' own !ENV tags)


def test_libyaml_and_pyyamls_own_parser_read_every_yaml_file_alike(monkeypatch) -> None:
    """Where PyYAML has libyaml's parser, the YAML readers use it; PyYAML's own parser
    (the readers' fallback) gives the same values for every YAML file in the repository."""
    from gtune import inputs

    if inputs._FAST_LOADER is None:
        pytest.skip("PyYAML without libyaml")
    files = _repository_yaml()
    assert len(files) > 100
    fast = [inputs.load_yaml(p.read_text(), str(p)) for p in files]
    monkeypatch.setattr(inputs, "_FAST_LOADER", None)
    for path, value in zip(files, fast, strict=True):
        assert inputs.load_yaml(path.read_text(), str(path)) == value, path


@pytest.mark.parametrize(
    "doc",
    [
        "kernel: [1, 2\n",  # an unclosed flow sequence
        "kernel: a\n  b: c\n",  # a mapping where a scalar continues
        "kernel: x\x7f\n",  # a character PyYAML does not read
        "a: 1\na: 2\nb: {c: *nope}\n",  # an alias of nothing
        "kernel: !!python/name:os.system\n",
        "kernel: " + "[" * 80 + "]" * 80 + "\n",
        "n: " + "9" * 1200 + "\n",
        "name: 'fine'\nnote: \"tab\\there\\x1b[31m\"\n",
    ],
)
def test_a_document_libyaml_refuses_is_told_as_pyyamls_own_parser_tells_it(
    doc: str, monkeypatch
) -> None:
    from gtune import inputs

    with pytest.raises(InputError) as fast:
        inputs.load_yaml(doc, "d.yaml")
    monkeypatch.setattr(inputs, "_FAST_LOADER", None)
    with pytest.raises(InputError) as own:
        inputs.load_yaml(doc, "d.yaml")
    assert fast.value.render() == own.value.render()


# -- description types and structure -----------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        (
            'reference: {python: "naive7_ref.py:reference"}',
            "reference: {config: {WX: abc}}",
            "reference.config.WX",
        ),
        (
            'reference: {python: "naive7_ref.py:reference"}',
            'reference: {python: "naive7_ref.py:reference", rtol: tight}',
            "reference.rtol",
        ),
        (
            'reference: {python: "naive7_ref.py:reference"}',
            'reference: {python: "naive7_ref.py:reference", bogus: 1}',
            "reference.bogus",
        ),
        ("WX: {pow2: [1, NX], default: 8}", "WX: {range: [1, 10**9]}", "parameters.WX"),
        ("WX: {pow2: [1, NX], default: 8}", "WX: {values: [[1], {a: 2}]}", "parameters.WX"),
        ("flops_per_point: 8", "flops_per_point: .nan", "flops_per_point"),
        ("flops_per_point: 8", "flops_per_point: 8\nbuild_options: {a: 1}", "build_options"),
        ("{name: in, role", "{name: [in], role", "arguments[0].name"),
        ("{name: in, role: input", "{name: in, role: [input]", "arguments[0].role"),
        ("problem: {NX: 32", "problem: {NX: 99999999999", "problem.NX"),
        ("launch:", "1: 2\nlaunch:", "1"),
    ],
)
def test_bad_types_name_the_key(naive: Path, old: str, new: str, where: str) -> None:
    edit(naive, old, new)
    with pytest.raises(InputError) as info:
        kernel = load_kernel(naive)
        domain_values(kernel)
    assert f"naive7.yaml: {where}" in info.value.render()


def test_huge_range_domain_is_refused_before_solving(naive: Path, capsys) -> None:
    edit(naive, "WX: {pow2: [1, NX], default: 8}", "WX: {range: [1, 10**9]}")
    with pytest.raises(InputError, match="at most 100,000"):
        domain_values(load_kernel(naive))


# -- specs -----------------------------------------------------------------------------------


def test_a_200000_value_list_is_refused_quickly() -> None:
    start = time.monotonic()
    with pytest.raises(InputError, match="at most 10,000"):
        parse_spec({"steps": [{"tune": {"WX": list(range(200_000))}}]}, "big.yaml")
    spec = parse_spec({"steps": [{"tune": {"WX": list(range(10_000))}}]}, "ok.yaml")
    spec.bind(["WX"], {"NX": 8})
    assert time.monotonic() - start < 10  # linear: quadratic took minutes


def test_spec_range_is_capped() -> None:
    spec = parse_spec({"steps": [{"tune": {"WX": "1:10**9:+1"}}]}, "s.yaml")
    with pytest.raises(InputError, match=r"s\.yaml: steps\[0\]\.tune\.WX: range"):
        spec.bind(["WX"], {"NX": 8})


def test_spec_constant_mistakes_show_when_binding() -> None:
    spec = parse_spec({"steps": [{"tune": {"WX": "1:NX:+0"}}]}, "s.yaml")
    with pytest.raises(InputError, match="step must be positive"):
        spec.bind(["WX"], {"NX": 8})


def test_spec_optional_list_of_mappings() -> None:
    with pytest.raises(InputError, match=r"s\.yaml: optional\[0\]"):
        parse_spec({"optional": [{"WY": 1}], "steps": [{"tune": {"WX": "1:4"}}]}, "s.yaml")


def test_spec_yaml_bomb(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    path.write_text("\n".join(lines))
    with pytest.raises(InputError, match="expands"):
        load_spec(path)


def test_spec_errors_come_before_measuring(naive: Path, tmp_path: Path, capsys) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("steps: [{tune: {WX: '1:NX:*2', WQ: '1:4'}}]\n")
    db = tmp_path / "store.db"
    code, err = gtune(capsys, "--db", str(db), "run", str(naive), "--spec", str(spec))
    assert code == 2 and "WQ" in err and "bad.yaml" in err
    assert not db.exists()


@pytest.mark.parametrize("text", ["nans", "infs", "nan", "-1", "0", "0s", ""])
def test_bad_budgets(text: str) -> None:
    with pytest.raises(InputError, match=r"^budget: ") as info:
        Budget.parse(text)
    assert info.value.source == "budget"


# -- flags -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "message"),
    [
        ("NX=²", "expected NAME=integer"),
        ("NX=0", "every size must be an integer from 1"),
        ("NX=1,NX=2", "given twice"),
        ("0x4", "every size must be"),
        ("99999999999", "every size must be"),
        ("=4", "expected NAME=integer"),
    ],
)
def test_bad_sizes(size: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        parse_size(size)
    assert info.value.source == "--size"


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["space", "{k}", "--size", ""], "--size"),
        (["space", "{k}", "--size", "NX=²"], "--size"),
        (["space", "{k}", "--size", "NX=0"], "--size"),
        (["run", "{k}", "--timeout", "nan"], "--timeout"),
        (["run", "{k}", "--timeout", "-1"], "--timeout"),
        (["run", "{k}", "--budget", "nans"], "--budget"),
        (["run", "{k}", "--spec", ""], "--spec"),
        (["run", "{k}", "--runs", "0"], "--runs"),
        (["results", "--best", "-1"], "--best"),
        (["results", "--best", "0"], "--best"),
        (["compare", "{k}", "--max-minutes", "-1"], "--max-minutes"),
        (["compare", "{k}", "--max-minutes", "inf"], "--max-minutes"),
        (["space", ""], "kernel"),
        (["space", "{k}", "--top", "-3"], "--top"),
    ],
)
def test_bad_flags_are_refused_up_front(naive: Path, capsys, argv: list[str], flag: str) -> None:
    code, err = gtune(capsys, *[a.replace("{k}", str(naive)) for a in argv])
    assert code == 2
    assert err.splitlines()[-1].startswith(f"gtune: error: {flag}")


@pytest.mark.parametrize(
    ("flags", "shown"),
    [
        (["--scalar", "scale=1 +"], "--scalar scale: "),
        (["--scalar", "scale=1", "--global", "NX,NY/Q"], "--global: "),
        (["--scalar", "scale=1", "--param", "B=WX +"], "--param B: "),
        (["--scalar", "scale=1", "--array", "in=NX+Z"], "--array in: "),
        (["--scalar", "scale=1", "--role", "out=sideways"], "--role out: "),
        (["--scalar", "scale=1", "--define", "T=unsigned int"], "--define T: "),
        (["--scalar", "scale=1", "--constraint", "Q < 2"], "--constraint: "),
        (["--scalar", "scale=1", "-I", "/no/such/folder"], "-I: include directory"),
    ],
)
def test_plain_errors_name_the_flag_typed(
    data_dir: Path, capsys, flags: list[str], shown: str
) -> None:
    """The library names plain_kernel's parameter (scalars[scale]); the command line
    names the flag the user typed."""
    kernel = str(data_dir / "plain_blur.cl")
    code, err = gtune(capsys, "describe", kernel, "--size", "64x32", *flags)
    assert code == 2
    assert err.splitlines()[-1].startswith(f"gtune: error: {shown}"), err


def test_store_errors_name_the_flag_typed(tmp_path: Path, capsys) -> None:
    code, err = gtune(capsys, "--db", "sqlite:nowhere.db", "results")
    assert code == 2 and err.splitlines()[-1].startswith("gtune: error: --db: bad store URL")
    with pytest.raises(InputError) as info:
        open_store("sqlite:nowhere.db")
    assert info.value.source == "store"


def test_unwritable_json_is_refused_before_the_run(naive: Path, tmp_path: Path, capsys) -> None:
    db = tmp_path / "store.db"
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, err = gtune(
        capsys, "--db", str(db), "run", str(naive), "--json", str(blocker / "report.json")
    )
    assert code == 2 and "--json" in err
    assert not db.exists()
    code, err = gtune(capsys, "--db", str(db), "run", str(naive), "--json", str(tmp_path))
    assert code == 2 and "is a directory" in err


def test_emit_mzn_into_a_file(naive: Path, capsys) -> None:
    code, err = gtune(capsys, "space", str(naive), "--emit-mzn", str(naive))
    assert code == 2 and "--emit-mzn" in err and "not a directory" in err


def test_environment_variable_is_named(naive: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("GTUNE_DEVICE", "no-such-device-anywhere")
    code, err = gtune(capsys, "space", str(naive))
    assert code == 2 and "$GTUNE_DEVICE" in err and "--device" not in err
    code, err = gtune(capsys, "space", str(naive), "--device", "no-such-device-anywhere")
    assert code == 2 and "--device" in err


def test_os_errors_name_the_file(tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, err = gtune(capsys, "--db", str(blocker / "x.db"), "run", str(STENCILS / "heat3d.cl"))
    assert code == 2 and str(blocker) in err


def test_store_from_the_environment_is_named_as_the_variable(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("GTUNE_DB", str(blocker / "x.db"))
    code, err = gtune(capsys, "run", str(STENCILS / "heat3d.cl"))
    assert code == 2 and "$GTUNE_DB" in err and str(blocker) in err


def test_results_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = f"{sys.executable} -m gtune --db {tmp_path / 'x.db'} --help | head -c 1"
    done = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {cmd} >/dev/null; echo $?"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    # quiet on a closed pipe through a command that writes a large table
    cmd = f"{sys.executable} -m gtune stencils 2>&1 | head -n 1"
    done = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env, timeout=60)
    assert "Traceback" not in done.stdout + done.stderr


# -- interruptions ------------------------------------------------------------------------


def _tagged_processes(tag: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if tag.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.opencl
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signals_stop_like_ctrl_c(naive: Path, tmp_path: Path, sig: signal.Signals) -> None:
    tag = f"GTUNE_TEST_TAG={uuid.uuid4().hex}"
    db = tmp_path / "store.db"
    env = dict(os.environ, PYTHONPATH=str(ROOT), GTUNE_CACHE=str(tmp_path / "cache"))
    env["GTUNE_TEST_TAG"] = tag.split("=", 1)[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "gtune", "--db", str(db), "run", str(naive), "--budget", "400"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    import sqlite3

    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.3)
        if db.exists():
            try:
                with sqlite3.connect(db) as con:
                    if con.execute("SELECT COUNT(*) FROM results").fetchone()[0] >= 2:
                        break
            except sqlite3.Error:
                continue
    if proc.poll() is not None:
        pytest.skip("the run finished before it could be interrupted")
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert "Traceback" not in err
    assert f"stopped by {sig.name}" in err
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] >= 2
    time.sleep(1)
    assert _tagged_processes(tag.split("=", 1)[1]) == []
