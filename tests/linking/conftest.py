"""Fixtures for linking (and runtime) tests: the real glibc 2.41 / 2.31 (fetched once into the shared
cache, $HONE_CACHE_DIR or /var/cache/hone) and tiny C programs built on the spot."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from hone.linking.glibc import GlibcInstall, obtain_glibc

needs_patchelf = pytest.mark.skipif(shutil.which("patchelf") is None, reason="patchelf not installed")
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")


@pytest.fixture(scope="session")
def glibc241() -> GlibcInstall:
    return obtain_glibc("2.41")


@pytest.fixture(scope="session")
def glibc231() -> GlibcInstall:
    return obtain_glibc("2.31")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_c(tmp: Path, name: str, source: str, *flags: str) -> Path:
    """Compile ``source`` with gcc into ``tmp/name``."""
    src = tmp / f"{name}.c"
    src.write_text(source)
    out = tmp / name
    subprocess.run(["gcc", "-O2", "-o", str(out), str(src), *flags], check=True, timeout=120)
    return out


def loader_paths(interp: str, binary: Path) -> dict[str, str]:
    """``{soname: resolved path}`` straight from ``<interp> --list`` (independent of hone)."""
    out = subprocess.run([interp, "--list", str(binary)], capture_output=True, text=True, timeout=30, check=True)
    paths: dict[str, str] = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if "=>" in parts and parts[parts.index("=>") + 1].startswith("/"):
            paths[parts[0]] = parts[parts.index("=>") + 1]
        elif parts and parts[0].startswith("/"):
            paths[Path(parts[0]).name] = parts[0]
    return paths
