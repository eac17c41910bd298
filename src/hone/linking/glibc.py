"""A glibc in its own directory: fetched from a Debian suite into hone's cache, or a
directory the user unpacked or built. Never unpacked over the system's: the rest of the machine keeps its own glibc."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from hone.core.errors import HoneError
from hone.core.paths import cache_dir
from hone.linking.cache import cache_lock
from hone.linking.debian import SuiteRepo, unpack_deb
from hone.linking.elf import version_definitions, version_key

#: glibc release → the Debian suite that ships it (``libc6``).
KNOWN_VERSIONS: dict[str, str] = {"2.41": "trixie", "2.36": "bookworm", "2.31": "bullseye"}

#: Sonames that belong to glibc itself (any of them loaded from elsewhere mixes two libcs).
GLIBC_SONAMES = frozenset({
    "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libresolv.so.2",
    "libanl.so.1", "libutil.so.1", "libmvec.so.1", "libBrokenLocale.so.1", "libnsl.so.1",
    "libthread_db.so.1", "libc_malloc_debug.so.0", "libmemusage.so", "libpcprofile.so",
    "libnss_files.so.2", "libnss_dns.so.2", "libnss_compat.so.2", "libnss_hesiod.so.2",
    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "ld-linux.so.2", "ld-linux-armhf.so.3",
})

_BANNER = re.compile(rb"release version (\d+\.\d+(?:\.\d+)?)")


def is_glibc_soname(name: str) -> bool:
    return name in GLIBC_SONAMES or name.startswith("ld-linux")


def glibc_version_of(libc: Path) -> str | None:
    """The release of a ``libc.so.6`` from its banner string ("… release version 2.41.")."""
    try:
        data = libc.read_bytes()
    except OSError:
        return None
    m = _BANNER.search(data)
    return m.group(1).decode() if m else None


@dataclass(frozen=True)
class GlibcInstall:
    """A glibc tree: ``root`` owns every file, ``lib_dir`` holds ``libc.so.6`` and the
    loader ``interpreter``; ``version`` like ``"2.41"``; ``origin`` says where it came from."""

    root: Path
    lib_dir: Path
    interpreter: Path
    version: str
    origin: str

    def contains(self, path: str | Path) -> bool:
        """True when ``path`` (symlinks resolved) lies inside this glibc's tree."""
        real = Path(os.path.realpath(path))
        root = Path(os.path.realpath(self.root))
        return real == root or root in real.parents

    @cached_property
    def sonames(self) -> frozenset[str]:
        """glibc sonames this tree provides (files in ``lib_dir``)."""
        return frozenset(p.name for p in self.lib_dir.iterdir() if is_glibc_soname(p.name))

    @cached_property
    def provided(self) -> dict[str, frozenset[str]]:
        """``{soname: {version names it defines}}`` for every glibc library here."""
        out: dict[str, frozenset[str]] = {}
        for name in self.sonames:
            path = self.lib_dir / name
            if path.exists():
                out[name] = frozenset(version_definitions(path))
        return out

    def newest_version(self, soname: str = "libc.so.6") -> str:
        """The newest ``GLIBC_2.xx`` that ``soname`` defines (e.g. ``GLIBC_2.30`` for 2.31)."""
        names = [v for v in self.provided.get(soname, ()) if version_key(v)]
        return max(names, key=version_key) if names else "none"


def _find_lib_dir(root: Path) -> Path | None:
    """The directory under ``root`` holding ``libc.so.6`` next to an ``ld-linux*`` loader."""
    candidates = [root, root / "lib", root / "lib64", root / "usr" / "lib", root / "usr" / "lib64"]
    for base in (root / "lib", root / "usr" / "lib"):
        if base.is_dir():
            candidates += sorted(p for p in base.iterdir() if p.is_dir() and "-linux-gnu" in p.name)
    for d in candidates:
        if (d / "libc.so.6").exists() and any(d.glob("ld-linux*.so.*")):
            return d
    return None


def from_directory(root: Path, origin: str | None = None) -> GlibcInstall:
    """A glibc the user unpacked or built under ``root`` (``lib/``, ``lib64/`` or
    ``usr/lib/<triplet>/`` layouts)."""
    root = root.resolve()
    lib_dir = _find_lib_dir(root)
    if lib_dir is None:
        raise HoneError(f"{root}: no libc.so.6 with an ld-linux loader beside it",
                        hint="give the directory that contains libc.so.6 and ld-linux-*.so.*")
    interp = sorted(lib_dir.glob("ld-linux*.so.*"))[0]
    version = glibc_version_of(lib_dir / "libc.so.6")
    if version is None:
        raise HoneError(f"{lib_dir / 'libc.so.6'}: cannot tell its glibc version (not a GNU libc?)")
    return GlibcInstall(root=root, lib_dir=lib_dir, interpreter=interp, version=version,
                        origin=origin or str(root))


def obtain_glibc(which: str) -> GlibcInstall:
    """A private glibc for ``which``: a release (``2.41``, ``2.31``…), a Debian suite
    name (``trixie``), or a directory. Releases and suites are fetched (``apt-get
    download libc6`` with a private apt config) and unpacked once into
    ``<cache>/glibc/<package-version>/``; later calls reuse it without the network."""
    path = Path(which)
    if which.startswith(("/", ".", "~")) or path.is_dir():
        path = path.expanduser()
        if not path.is_dir():
            raise HoneError(f"glibc directory {which} does not exist")
        return from_directory(path)
    suite = KNOWN_VERSIONS.get(which)
    if suite is None:
        if re.fullmatch(r"[a-z]+", which):
            suite = which
        else:
            known = ", ".join(f"{v} ({s})" for v, s in KNOWN_VERSIONS.items())
            raise HoneError(f"unknown glibc version {which!r}",
                            hint=f"known: {known}; or a Debian suite name, or a directory")
    deb = SuiteRepo(suite).fetch("libc6")
    dest = cache_dir() / "glibc" / deb.stem
    with cache_lock(f"glibc-{deb.stem}"):
        unpack_deb(deb, dest)
    install = from_directory(dest, origin=f"Debian {suite} {deb.name}")
    if which in KNOWN_VERSIONS and install.version != which:
        raise HoneError(f"Debian {suite} now ships glibc {install.version}, not {which}",
                        hint=f"use --version {install.version} or --version {suite}")
    return install
