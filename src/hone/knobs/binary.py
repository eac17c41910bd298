"""``binary`` knobs: an ELF file patched in place (``hone libswap … --in-place``).

The snapshot is a byte-exact backup named by its sha256 (fsync'd before the journal
records it), so ``hone rollback`` after a ``kill -9`` at any point restores the original
bytes and checks the checksum. Both the patch and the restore write a temp file in the
same directory and ``rename`` it over the target: the file is always either old or new,
never torn, and a program running from it keeps its old inode.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

from hone.core.errors import KnobError
from hone.core.paths import state_dir
from hone.knobs.base import KnobDriver
from hone.linking.patch import PatchOps, apply_patch

_CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    """``"sha256:<hex>"`` of the file's bytes."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _replace_from(source: Path, target: Path, mode: int, uid: int, gid: int) -> None:
    """Copy ``source`` next to ``target``, fsync, and rename it over ``target``."""
    tmp = target.with_name(f".{target.name}.hone-{os.getpid()}")
    shutil.copyfile(source, tmp)
    os.chmod(tmp, mode)
    try:
        os.chown(tmp, uid, gid)
    except PermissionError:
        pass
    with tmp.open("rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, target)
    _fsync_dir(target.parent)


class BinaryDriver(KnobDriver):
    kind = "binary"

    @property
    def path(self) -> Path:
        return Path(self.model.path)  # type: ignore[attr-defined]

    @property
    def backup_dir(self) -> Path:
        given = getattr(self.model, "backup_dir", None)
        return Path(given) if given else state_dir() / "backups"

    def ident(self) -> str:
        return f"binary:{self.path}"

    def check(self) -> None:
        if not self.path.is_file():
            raise KnobError(f"{self.path}: no such file")

    def read(self) -> str | None:
        """The file's checksum (``sha256:…``), None when it does not exist."""
        try:
            return sha256_file(self.path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise KnobError(f"cannot read {self.path}: {exc.strerror}") from None

    def snapshot(self) -> dict[str, Any]:
        """Back the file up as ``<backup_dir>/<sha256>`` (fsync'd) and describe it."""
        self.check()
        st = self.path.stat()
        digest = sha256_file(self.path)
        self.backup_dir.mkdir(parents=True, exist_ok=True)
        backup = self.backup_dir / digest.split(":", 1)[1]
        if not backup.exists() or sha256_file(backup) != digest:
            tmp = backup.with_name(backup.name + ".tmp")
            shutil.copyfile(self.path, tmp)
            with tmp.open("rb+") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, backup)
            _fsync_dir(self.backup_dir)
        return {"value": digest, "backup": str(backup), "mode": st.st_mode & 0o7777,
                "uid": st.st_uid, "gid": st.st_gid, "size": st.st_size}

    def write(self, text: str) -> None:
        """Apply the patch described by ``text`` (a :class:`~hone.linking.patch.PatchOps`
        JSON) to a temp copy and rename it over the file."""
        self.check()
        ops = PatchOps.from_text(text)
        st = self.path.stat()
        work = self.path.with_name(f".{self.path.name}.hone-patch-{os.getpid()}")
        shutil.copyfile(self.path, work)
        try:
            apply_patch(work, ops)
            _replace_from(work, self.path, st.st_mode & 0o7777, st.st_uid, st.st_gid)
        finally:
            work.unlink(missing_ok=True)

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Put the backed-up bytes back and prove it with the checksum."""
        backup = Path(snapshot["backup"])
        want = snapshot["value"]
        if not backup.exists():
            raise KnobError(f"backup {backup} of {self.path} is missing")
        if sha256_file(backup) != want:
            raise KnobError(f"backup {backup} of {self.path} does not match its checksum {want}")
        if self.path.exists() and sha256_file(self.path) == want:
            return
        _replace_from(backup, self.path, int(snapshot.get("mode", 0o755)), int(snapshot.get("uid", -1)),
                      int(snapshot.get("gid", -1)))
        if sha256_file(self.path) != want:
            raise KnobError(f"{self.path}: restored bytes do not match {want}")

    def matches(self, snapshot: dict[str, Any]) -> bool:
        return self.read() == snapshot.get("value")

    def describe(self) -> str:
        return f"binary {self.path}"
