"""``hone-libswap`` (``hone libswap glibc|alloc --json`` and VARIANT_DIR/variant.json) and
``hone-libswap-show`` (``hone libswap show --json``)."""

from __future__ import annotations

from typing import Literal, NotRequired

from typing_extensions import TypedDict


class ResolvedLib(TypedDict):
    """A library as the variant's own loader resolved it (``path`` null: not found)."""

    name: str
    path: str | None


class LibswapV1(TypedDict):
    format: Literal["hone-libswap/1"]
    kind: Literal["glibc", "alloc"]
    binary: str
    original: str
    libs: list[str]
    label: str
    in_place: bool
    resolved: list[ResolvedLib]
    smoke: str | None
    # kind glibc: the private glibc's tree and where it came from
    glibc: NotRequired[str]
    origin: NotRequired[str]
    # kind alloc: the allocator and the library the variant loads
    allocator: NotRequired[str]
    library: NotRequired[str | None]


class LibswapShowV1(TypedDict):
    format: Literal["hone-libswap-show/1"]
    target: str
    interpreter: str | None
    glibc_version: str | None
    libc: str | None
    private_glibc: bool
    allocator: str
    allocator_file: str | None
    how: str
    libraries: list[str]
    notes: list[str]
