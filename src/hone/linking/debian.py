"""Fetch one binary package of another Debian suite into hone's cache.

The system's apt sources are never edited (docs/machine-facts.md): each suite gets a private
configuration under ``<cache>/debian/<suite>/`` — its own sources list, package lists and
apt cache — passed to ``apt-get`` with ``-o Dir::Etc::SourceList=…``,
``-o Dir::Etc::SourceParts=/dev/null``, ``-o Dir::State::Lists=…`` and
``-o Dir::Cache=…``. The mirror is the one the system already uses (read from its apt
sources), or ``$HONE_DEBIAN_MIRROR``.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from hone.core.errors import CapabilityError, HoneError
from hone.core.paths import cache_dir
from hone.core.process import run_process
from hone.linking.cache import cache_lock

#: Package lists older than this are fetched again before a lookup (seconds).
LISTS_MAX_AGE_S = 7 * 24 * 3600
APT_TIMEOUT_S = 600.0

_SOURCES_FILES = (Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d"))


def _system_uris() -> list[str]:
    """Archive URIs in the system's apt sources (one-line and deb822), security first excluded."""
    uris: list[str] = []
    files: list[Path] = []
    for p in _SOURCES_FILES:
        if p.is_file():
            files.append(p)
        elif p.is_dir():
            files.extend(sorted(x for x in p.iterdir() if x.suffix in (".list", ".sources")))
    for f in files:
        try:
            text = f.read_text(errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            line = line.strip()
            m = re.match(r"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)", line)
            if m:
                uris.append(m.group(1))
            elif line.startswith("URIs:"):
                uris.extend(line.split(":", 1)[1].split())
    return [u for u in uris if "security" not in u and u.rstrip("/").endswith("/debian")]


def mirror_uri() -> str:
    """The Debian archive to fetch from: ``$HONE_DEBIAN_MIRROR`` or the system's own."""
    env = os.environ.get("HONE_DEBIAN_MIRROR")
    if env:
        return env
    uris = _system_uris()
    if not uris:
        raise CapabilityError(
            "no Debian archive found in the system's apt sources",
            hint="set HONE_DEBIAN_MIRROR to a Debian archive URI, or pass a glibc directory",
        )
    return uris[0]


class SuiteRepo:
    """A private apt configuration for one suite (e.g. ``trixie``) in hone's cache."""

    def __init__(self, suite: str, mirror: str | None = None) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9-]*", suite):
            raise HoneError(f"not a Debian suite name: {suite!r}")
        self.suite = suite
        self.mirror = mirror or mirror_uri()
        self.root = cache_dir() / "debian" / suite
        self.lists = self.root / "lists"
        self.apt_cache = self.root / "apt-cache"
        self.debs = self.root / "debs"
        self.sources = self.root / "sources.list"

    def _ensure_dirs(self) -> None:
        for d in (self.lists / "partial", self.apt_cache / "archives" / "partial", self.debs):
            d.mkdir(parents=True, exist_ok=True)
        line = f"deb {self.mirror} {self.suite} main\n"
        if not self.sources.exists() or self.sources.read_text() != line:
            self.sources.write_text(line)

    def apt_options(self) -> list[str]:
        return [
            "-o", f"Dir::Etc::SourceList={self.sources}",
            "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", f"Dir::State::Lists={self.lists}",
            "-o", f"Dir::Cache={self.apt_cache}",
            "-o", "Acquire::Languages=none",
            "-o", "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false",  # appstream metadata: not needed
            "-o", "Debug::NoLocking=1",  # our own flock (cache_lock) serializes hone processes
            # root: download as root into our cache (the _apt user cannot write there)
            *(["-o", "APT::Sandbox::User=root"] if os.geteuid() == 0 else []),
        ]

    def _lists_age_s(self) -> float:
        files = list(self.lists.glob("*_Packages*"))
        if not files:
            return float("inf")
        return time.time() - max(f.stat().st_mtime for f in files)

    def update(self) -> None:
        """Fetch this suite's package lists (private directory)."""
        self._ensure_dirs()
        res = run_process(["apt-get", *self.apt_options(), "update"], timeout=APT_TIMEOUT_S)
        if not res.ok or not list(self.lists.glob("*_Packages*")):
            raise CapabilityError(
                f"cannot fetch the package lists of Debian {self.suite}: {res.describe_failure()}",
                hint="check network access to the Debian archive, or pass a glibc directory",
            )

    def candidate_version(self, package: str) -> str | None:
        """The version of ``package`` this suite offers (None if it has none)."""
        res = run_process(["apt-cache", *self.apt_options(), "madison", package], timeout=120)
        for line in res.stdout.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) >= 3 and parts[0] == package and "Packages" in parts[2]:
                return parts[1]
        return None

    def fetch(self, package: str) -> Path:
        """Download ``package`` (this suite's version, native architecture) and return
        the ``.deb`` path. Cached: a second call does not touch the network."""
        with cache_lock(f"debian-{self.suite}"):
            self._ensure_dirs()
            if self._lists_age_s() > LISTS_MAX_AGE_S:
                try:
                    self.update()
                except CapabilityError:
                    if self._lists_age_s() == float("inf"):
                        raise
                    # Offline with old lists: what they name may already be cached.
            version = self._remembered_version(package)
            if version is not None:
                return self._deb_for(package, version)  # type: ignore[return-value]
            version = self.candidate_version(package)
            if version is None:
                self.update()
                version = self.candidate_version(package)
            if version is None:
                raise HoneError(f"Debian {self.suite} has no package {package}")
            existing = self._deb_for(package, version)
            if existing is not None:
                self._remember_version(package, version)
                return existing
            res = run_process(
                ["apt-get", *self.apt_options(), "download", f"{package}={version}"],
                timeout=APT_TIMEOUT_S, cwd=self.debs,
            )
            if not res.ok:
                # A superseded version (lists older than the archive): refresh once.
                self.update()
                version = self.candidate_version(package) or version
                res = run_process(
                    ["apt-get", *self.apt_options(), "download", f"{package}={version}"],
                    timeout=APT_TIMEOUT_S, cwd=self.debs,
                )
            deb = self._deb_for(package, version)
            if not res.ok or deb is None:
                raise CapabilityError(f"cannot download {package} from Debian {self.suite}: "
                                      f"{res.describe_failure()}")
            self._remember_version(package, version)
            return deb

    def _remembered_version(self, package: str) -> str | None:
        """The version fetched last time, while the package lists are no newer than that
        fetch and the .deb is still cached (saves reading ~20 MB of lists per call)."""
        memo = self.root / f"{package}.version"
        try:
            version = memo.read_text().strip()
            fresh = memo.stat().st_mtime >= time.time() - self._lists_age_s()
        except OSError:
            return None
        return version if fresh and version and self._deb_for(package, version) else None

    def _remember_version(self, package: str, version: str) -> None:
        (self.root / f"{package}.version").write_text(version + "\n")

    def _deb_for(self, package: str, version: str) -> Path | None:
        # apt writes an epoch "1:2.3" as "1%3a2.3" in file names.
        stem = f"{package}_{version.replace(':', '%3a')}_"
        for p in self.debs.glob(f"{package}_*.deb"):
            if p.name.startswith(stem):
                return p
        return None


def unpack_deb(deb: Path, dest: Path) -> Path:
    """``dpkg -x`` ``deb`` into ``dest`` atomically (a temp dir renamed into place), so a
    crash never leaves a half-unpacked directory that looks complete. Returns ``dest``."""
    if dest.is_dir():
        return dest
    tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    run_process(["dpkg-deb", "-x", str(deb), str(tmp)], timeout=300, check=True)
    os.replace(tmp, dest)
    return dest
