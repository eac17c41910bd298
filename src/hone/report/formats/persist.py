"""``hone-verify`` (``hone verify --json``): each knob's expected and actual value."""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict


class VerifyCheck(TypedDict):
    """One knob: what it should hold, what it holds, and where the expectation comes from."""

    knob: str
    expected: str
    actual: str | None
    source: str
    status: Literal["ok", "drifted", "unreadable"]
    detail: str


class VerifyV1(TypedDict):
    format: Literal["hone-verify/1"]
    source: str
    ok: bool
    checks: list[VerifyCheck]
