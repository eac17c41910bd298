"""Terminal view of ``hone-libswap/1`` (a variant on another glibc or allocator, as its own
loader resolves it) and ``hone-libswap-show/1`` (what a binary or process runs on)."""

from __future__ import annotations

import os
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from hone.linking.glibc import is_glibc_soname


def _inside(path: str, root: str) -> bool:
    """True when ``path`` (symlinks resolved where they exist) lies in the tree ``root``."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip("/") + "/")


def _mark(doc: dict[str, Any], name: str, path: str | None) -> str:
    """Where a resolved library comes from: the private glibc, the system (a glibc variant
    must not load one), or a library bundled with the binary and patched with it."""
    if not path:
        return ""
    if doc.get("glibc") and is_glibc_soname(name):
        return "private glibc" if _inside(path, doc["glibc"]) else "SYSTEM"
    if any(os.path.realpath(path) == os.path.realpath(lib) for lib in doc.get("libs") or []):
        return "bundled (patched)"
    return ""


def render(doc: dict[str, Any]) -> Group:
    """The variant's libraries as its loader resolved them, the smoke line, where it is."""
    table = Table(title=f"{doc['binary']}  ({doc['label']}, resolved by its own loader)")
    table.add_column("library")
    table.add_column("resolved to")
    table.add_column("")
    for lib in doc["resolved"]:
        table.add_row(lib["name"], lib["path"] or "not found", _mark(doc, lib["name"], lib["path"]))
    lines: list[Table | Text] = [table]
    if doc.get("smoke") is not None:
        lines.append(Text(f"smoke: {doc['smoke']}"))
    where = ("patched in place (journaled; `hone rollback` restores the originals)" if doc["in_place"]
             else "variant (originals untouched)")
    lines.append(Text(f"{where}: {doc['binary']}"))
    return Group(*lines)


def render_show(doc: dict[str, Any]) -> Table:
    """Interpreter, glibc (private or the system's), allocator and how it is loaded."""
    table = Table(title=doc["target"], show_header=False)
    table.add_column("what")
    table.add_column("value")
    table.add_row("interpreter", doc["interpreter"] or "none (static)")
    if doc["interpreter"] is None and doc["libc"] is None:
        table.add_row("glibc", "linked in statically (no shared libc)")
    else:
        where = "private" if doc["private_glibc"] else "system"
        table.add_row("glibc", f"{doc['glibc_version'] or '?'} ({where}) {doc['libc'] or ''}".strip())
    table.add_row("allocator", f"{doc['allocator']} ({doc['how']})"
                  + (f" {doc['allocator_file']}" if doc["allocator_file"] else ""))
    table.add_row("libraries", "\n".join(doc["libraries"]) or "-")
    for note in doc["notes"]:
        table.add_row("note", note)
    return table
