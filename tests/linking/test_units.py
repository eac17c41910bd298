"""Pure pieces: loader-output parsing, library-knob validation, patch descriptions,
Debian sources parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from hone.core.errors import SpecError
from hone.linking import debian
from hone.linking.allocators import ALLOCATOR_NAMES, allocator_of_files, allocator_of_symbols
from hone.linking.elf import version_key
from hone.linking.loader import parse_list_output
from hone.linking.patch import PatchOps
from hone.spec import load_spec
from hone.spec.models import LIBRARY_NAMES


def test_parse_list_output_handles_both_loader_line_styles_and_not_found() -> None:
    text = (
        "\tlinux-vdso.so.1 (0x00007ffd)\n"
        "\tlibfoo.so => not found\n"
        "\tlibc.so.6 => /opt/g/lib/libc.so.6 (0x00007f00)\n"
        "\t/opt/g/lib/ld-linux-x86-64.so.2 (0x00007f01)\n"           # 2.36+ style
        "\t/lib64/ld-linux-x86-64.so.2 => /opt/o/ld-2.31.so (0x7f02)\n"  # 2.31 style
    )
    libs = parse_list_output(text)
    assert [(lib.soname, lib.path) for lib in libs] == [
        ("libfoo.so", None),
        ("libc.so.6", "/opt/g/lib/libc.so.6"),
        ("ld-linux-x86-64.so.2", "/opt/g/lib/ld-linux-x86-64.so.2"),
        ("ld-linux-x86-64.so.2", "/opt/o/ld-2.31.so"),
    ]


def test_version_key_orders_glibc_versions_numerically() -> None:
    assert version_key("GLIBC_2.3.4") < version_key("GLIBC_2.17") < version_key("GLIBC_2.34")
    assert version_key("GLIBC_PRIVATE") == ()


def test_patch_ops_round_trip_and_garbage() -> None:
    ops = PatchOps(interpreter="/x/ld.so", rpath=["/a", "/b"], add_needed=["libj.so.2"])
    assert PatchOps.from_text(ops.to_text()) == ops
    with pytest.raises(Exception, match="not a patch description"):
        PatchOps.from_text("2.41")


def test_allocator_names_agree_between_spec_and_runtime() -> None:
    assert tuple(LIBRARY_NAMES) == tuple(ALLOCATOR_NAMES)


def test_allocator_detection_by_file_and_symbol() -> None:
    assert allocator_of_files(["/usr/lib/x86_64-linux-gnu/libc.so.6",
                               "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4.5.10"]) == "tcmalloc"
    assert allocator_of_files(["/usr/lib/libjemalloc.so.2"]) == "jemalloc"
    assert allocator_of_files(["/usr/lib/libc.so.6"]) is None
    assert allocator_of_symbols({"main", "mallctl"}) == "jemalloc"


def test_library_knob_typo_fails_spec_validation(tmp_path: Path) -> None:
    spec = tmp_path / "hone.yaml"
    spec.write_text("benchmark: {command: ['true']}\n"
                    "knobs:\n  - {name: malloc, kind: library, values: [glibc, jemaloc]}\n")
    with pytest.raises(SpecError, match=r"hone.yaml:3.*jemaloc"):
        load_spec(spec)


def test_library_knob_accepts_paths_and_named_paths(tmp_path: Path) -> None:
    spec = tmp_path / "hone.yaml"
    spec.write_text("benchmark: {command: ['true']}\n"
                    "knobs:\n  - {name: m, kind: library, values: [glibc, mine, /opt/libx.so],"
                    " paths: {mine: /opt/liby.so}}\n")
    assert load_spec(spec).spec.knob("m").paths == {"mine": "/opt/liby.so"}


def test_mirror_comes_from_system_sources_not_security(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lst = tmp_path / "sources.list"
    lst.write_text("deb http://sec.example/debian-security bookworm-security main\n"
                   "deb [arch=amd64] http://mirror.example/debian bookworm main\n")
    d = tmp_path / "sources.list.d"
    d.mkdir()
    (d / "x.sources").write_text("Types: deb\nURIs: http://other.example/debian\nSuites: bookworm\n")
    monkeypatch.setattr(debian, "_SOURCES_FILES", (lst, d))
    monkeypatch.delenv("HONE_DEBIAN_MIRROR", raising=False)
    assert debian.mirror_uri() == "http://mirror.example/debian"
    monkeypatch.setenv("HONE_DEBIAN_MIRROR", "http://given.example/debian")
    assert debian.mirror_uri() == "http://given.example/debian"


def test_cache_dir_honours_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hone.core.paths import cache_dir

    monkeypatch.setenv("HONE_CACHE_DIR", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c" and (tmp_path / "c").is_dir()
