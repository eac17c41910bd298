"""Reading sysctl.d files for ``hone verify`` and writing ``hone export``'s output."""

from __future__ import annotations

from pathlib import Path

import pytest

from hone.core.errors import HoneError
from hone.run.persist import read_sysctl_d, write_output


def test_sysctl_d_lines_as_sysctl_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "x.conf"
    path.write_text("# comment\n; also one\n\n-vm.swappiness = 10\nkernel/ostype=Linux\nvm.swappiness = 20 \n")
    got = [(s.name, s.text, s.source) for s in read_sysctl_d(path)]
    # the last line of a key counts (sysctl -p sets them in order); kernel/ostype is kernel.ostype
    assert got == [("kernel.ostype", "Linux", f"{path}:5"), ("vm.swappiness", "20", f"{path}:6")]


@pytest.mark.parametrize(("text", "message"), [
    ("vm.swappiness 10\n", ":1: expected 'key = value' (a sysctl.d line), got 'vm.swappiness 10'"),
    ("# only\n = 3\n", ":2: expected 'key = value'"),
    ("net.ipv4.conf.*.rp_filter = 1\n", ":1: expected one sysctl name, got the pattern"),
    ("vm..x = 1\n", ":1: expected a sysctl name like vm.swappiness"),
    ("# nothing\n", ": no 'key = value' line"),
])
def test_a_bad_sysctl_d_file_is_one_error_naming_its_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.conf"
    path.write_text(text)
    with pytest.raises(HoneError) as err:
        read_sysctl_d(path)
    assert err.value.message.startswith(f"{path}{message}")


def test_output_outside_etc_is_written_without_the_journal(tmp_path: Path, state_dir: Path) -> None:
    out = tmp_path / "out.conf"
    out.write_text("old\n")
    assert write_output(out, b"new\n", "test") is False
    assert out.read_text() == "new\n" and not (state_dir / "journal.jsonl").exists()
    with pytest.raises(HoneError, match="does not exist"):
        write_output(tmp_path / "no" / "dir.conf", b"x", "test")
