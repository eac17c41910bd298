"""A manifest per variant: what was built, how, from which profile — enough to rebuild it."""

from __future__ import annotations

import json
import platform
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hone.build.profiles import sha256_path

MANIFEST_FORMAT = "hone-pgo-manifest/1"


@dataclass
class Stage:
    """One build of the variant (training build, optimizing build, BOLT pass)."""

    name: str
    flags: dict[str, Any]
    command: list[str]
    seconds: float
    profile_problems: list[str] = field(default_factory=list)
    # What hone.build.verify found in the binary ("ok: …", "not verifiable: …"; "" when not checked).
    verification: str = ""


@dataclass
class Manifest:
    variant: str
    mode: str
    family: str
    system: str
    project: str
    binary: str
    binary_sha256: str = ""
    tools: dict[str, str] = field(default_factory=dict)
    stages: list[Stage] = field(default_factory=list)
    profiles: list[dict[str, Any]] = field(default_factory=list)
    scenarios: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    host: dict[str, str] = field(default_factory=lambda: {"machine": platform.machine(), "kernel": platform.release()})

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["format"] = MANIFEST_FORMAT
        return d

    def write(self, path: Path) -> None:
        if self.binary and Path(self.binary).exists():
            self.binary_sha256 = sha256_path(Path(self.binary))
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n")
