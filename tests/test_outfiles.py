"""Output files: written whole or not at all, never through a planted link, never over an
existing file unless asked, and a folder that cannot be written is one clear error."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gtune.exceptions import InputError
from gtune.outfiles import OutputExists, check_targets, replacing, write_text
from tests.conftest import ROOT
from tests.inprocess import Cli


def test_a_new_file_is_written_with_the_usual_mode_and_no_temporary_left(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "out.json"
    write_text(target, "{}\n")
    assert target.read_text() == "{}\n"
    assert os.listdir(target.parent) == ["out.json"]
    umask = os.umask(0o022)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_planted_symlink_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    link = tmp_path / "out" / "heat3d_tuned.cl"
    link.parent.mkdir()
    link.symlink_to(victim)
    for force in (False, True):
        with pytest.raises(InputError, match="symbolic link") as err:
            write_text(link, "overwritten\n", force=force)
        assert str(link) in str(err.value)
    assert victim.read_text() == "precious\n" and link.is_symlink()
    dangling = tmp_path / "out" / "new.json"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(InputError, match="symbolic link"):
        write_text(dangling, "x", force=True)
    assert not (tmp_path / "nowhere").exists()


def test_an_existing_file_is_kept_unless_forced(tmp_path: Path) -> None:
    target = tmp_path / "model.json"
    target.write_text("old\n")
    with pytest.raises(OutputExists) as err:
        write_text(target, "new\n")
    assert str(target) in str(err.value) and "--force" in str(err.value)
    assert target.read_text() == "old\n"
    write_text(target, "new\n", force=True)
    assert target.read_text() == "new\n"
    with pytest.raises(OutputExists, match="--overwrite"):
        write_text(target, "newer\n", flag="--overwrite")


def test_special_files_and_folders_are_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        write_text(fifo, "x", force=True)
    with pytest.raises(InputError, match="directory"):
        write_text(tmp_path, "x", force=True)


def test_several_files_are_checked_before_any_is_written(tmp_path: Path) -> None:
    first, second = tmp_path / "a.cl", tmp_path / "a.json"
    second.write_text("old")
    with pytest.raises(OutputExists, match=r"a\.json"):
        check_targets([first, second])
    assert not first.exists()


def test_a_writer_that_fails_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "plot.png"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), replacing(target, force=True) as tmp:
        assert tmp.parent == tmp_path and tmp.suffix == ".png"  # savefig reads the suffix
        tmp.write_bytes(b"half")
        raise RuntimeError("the writer failed")
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["plot.png"]


_WRITE = (
    "import sys\n"
    "from gtune.exceptions import InputError\n"
    "from gtune.outfiles import write_text\n"
    "try:\n"
    "    write_text(sys.argv[1], 'x')\n"
    "except InputError as exc:\n"
    "    print(exc)\n"
    "    sys.exit(2)\n"
)


def test_a_read_only_folder_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    target = folder / "out.json"
    cmd = [sys.executable, "-c", _WRITE, str(target)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if os.geteuid() != 0:
        folder.chmod(0o555)
    else:  # root writes anywhere: a read-only file system, in a mount namespace of its own
        if shutil.which("unshare") is None:
            pytest.skip("root, and no unshare for a read-only mount")
        mount = f'mount -t tmpfs -o ro none {folder} && exec "$@"'
        cmd = ["unshare", "-m", "sh", "-c", mount, "sh", *cmd]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    finally:
        folder.chmod(0o755)
    if os.geteuid() == 0 and "mount" in done.stderr:
        pytest.skip(f"no read-only mount here: {done.stderr.strip()}")
    assert done.returncode == 2, done.stdout + done.stderr
    assert str(target) in done.stdout and "cannot write" in done.stdout
    assert "Traceback" not in done.stderr
    assert not target.exists()


def test_describe_keeps_its_output_unless_forced_and_refuses_a_link(
    tmp_path: Path, gtune_here: Cli
) -> None:
    from tests.conftest import DATA

    kernel = str(DATA / "plain_blur.cl")
    flags = ("--size", "64x32", "--scalar", "scale=0.5")
    out = tmp_path / "blur.yaml"
    first = gtune_here("describe", kernel, *flags, "-o", str(out))
    assert first.returncode == 0, first.stderr
    written = out.read_text()
    out.write_text("# edited by hand\n")
    kept = gtune_here("describe", kernel, *flags, "-o", str(out))
    assert kept.returncode == 2 and str(out) in kept.stderr and "--force" in kept.stderr
    assert out.read_text() == "# edited by hand\n" and "Traceback" not in kept.stderr
    forced = gtune_here("describe", kernel, *flags, "-o", str(out), "--force")
    assert forced.returncode == 0 and out.read_text() == written
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(victim)
    linked = gtune_here("describe", kernel, *flags, "-o", str(link), "--force")
    assert linked.returncode == 2 and "symbolic link" in linked.stderr
    assert victim.read_text() == "precious\n"


def test_t4_export_keeps_its_files_unless_forced_and_refuses_a_link(
    tmp_path: Path, gtune_here: Cli
) -> None:
    from gtune.result import Result, Status
    from gtune.store.sqlite import SQLiteStore

    db = tmp_path / "s.db"
    store = SQLiteStore(db)
    store.add(Result({"WX": 8}, Status.OK, 0.1, (2e-4,)), device="dev", kernel_id="kid",
              kernel_name="heat3d:stencil", problem={"NX": 64, "NY": 32, "NZ": 16})  # fmt: skip
    store.close()
    out = tmp_path / "t4.json"
    assert gtune_here("export", "-o", str(out), db=db).returncode == 0
    written = out.read_text()
    again = gtune_here("export", "-o", str(out), db=db)
    assert again.returncode == 2 and "--force" in again.stderr and str(out) in again.stderr
    assert gtune_here("export", "-o", str(out), "--force", db=db).returncode == 0
    assert out.read_text() == written
    folder = tmp_path / "t4"
    folder.mkdir()
    (folder / "metadata.json").symlink_to(out)
    linked = gtune_here("export", "-o", str(folder), "--force", db=db)
    assert linked.returncode == 2 and "symbolic link" in linked.stderr
    assert out.read_text() == written and [p.name for p in folder.iterdir()] == ["metadata.json"]


def test_split_keeps_an_existing_sweep_plot_before_it_runs(tmp_path: Path, gtune_here: Cli) -> None:
    """split's --force runs a split that cannot win; its plot is replaced with --overwrite."""
    plot = tmp_path / "sweep.png"
    plot.write_bytes(b"old")
    heat = str(ROOT / "stencils" / "heat3d.cl")
    kept = gtune_here("split", heat, "--sweep", "--plot", str(plot), db=tmp_path / "r.db")
    assert kept.returncode == 2 and "--overwrite" in kept.stderr and str(plot) in kept.stderr
    assert plot.read_bytes() == b"old" and not (tmp_path / "r.db").exists()
