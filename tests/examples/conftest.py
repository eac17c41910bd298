"""What the example tests share: a private stand-in for the repository root."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.fixture
def root() -> Iterator[Path]:
    """A private stand-in for the repository root, outside pytest's 0700 tmp tree: a server
    running as another user (postgres) must reach what is under it."""
    path = Path(tempfile.mkdtemp(prefix="hone-example-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def copy_example(name: str, root: Path, edits: dict[str, str]) -> Path:
    """examples/NAME under ``root``/examples with each of ``edits`` replaced in every file."""
    dst = root / "examples" / name
    shutil.copytree(REPO / "examples" / name, dst)
    for path in dst.iterdir():
        text = path.read_text()
        for old, new in edits.items():
            text = text.replace(old, new)
        path.write_text(text)
    return dst
