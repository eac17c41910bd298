"""`file` knobs on real config files: symlinks stay symlinks, owner and mode survive, and
`hone status --diff` shows what hone changed."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from tests.conftest import needs_root


def _spec(tmp_path: Path, path: Path) -> Path:
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        benchmark: {{command: [sh, -c, 'echo score: 1']}}
        knobs:
          - {{name: x, kind: file, path: {path}, key: x, range: [1, 100]}}
        """))
    return spec


def test_a_config_reached_through_a_symlink_is_edited_where_it_lives(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    real = tmp_path / "etc-real" / "app.conf"
    real.parent.mkdir()
    real.write_text("x = 10\n")
    link = tmp_path / "app.conf"
    link.symlink_to(real)
    spec = _spec(tmp_path, link)
    assert hone("apply", spec, "--set", "x=20").code == 0
    assert link.is_symlink() and real.read_text() == "x = 20\n"
    status = hone("status")
    assert f"file:{real}" in status.out, status.out
    assert hone("rollback").code == 0
    assert link.is_symlink() and real.read_text() == "x = 10\n"


@needs_root
def test_owner_and_mode_survive_the_change_and_the_rollback(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "app.conf"
    conf.write_text("x = 10\n")
    os.chown(conf, 65534, 65534)
    os.chmod(conf, 0o640)
    spec = _spec(tmp_path, conf)
    assert hone("apply", spec, "--set", "x=20").code == 0
    st = conf.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (65534, 65534, 0o640)
    os.chown(conf, 0, 0)  # someone changes the owner meanwhile: the rollback puts the original back
    assert hone("rollback").code == 0
    st = conf.stat()
    assert conf.read_text() == "x = 10\n"
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (65534, 65534, 0o640)


def test_status_diff_shows_the_change_as_a_unified_diff(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "app.conf"
    conf.write_text("# app\nx = 10\nother = 1\n")
    spec = _spec(tmp_path, conf)
    assert hone("apply", spec, "--set", "x=20").code == 0
    res = hone("status", "--diff")
    assert res.code == 0
    assert f"--- {conf} (original)" in res.out and f"+++ {conf} (now)" in res.out
    assert "\n-x = 10\n+x = 20\n" in res.out, res.out
