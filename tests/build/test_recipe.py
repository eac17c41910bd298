"""Mode strings → recipes: families, canonical names, refused combinations."""

from __future__ import annotations

import pytest

from hone.build.recipe import parse_mode, parse_modes
from hone.core.errors import HoneError


def test_profile_and_lto_order_does_not_matter() -> None:
    a = parse_mode("lto+instr-gcc", "make")
    b = parse_mode("instr-gcc+lto", "make")
    assert a == b
    assert (a.name, a.family, a.profile, a.lto, a.bolt) == ("instr-gcc+lto", "gcc", "instr-gcc", "full", False)


def test_thin_lto_and_clang_profiles_pick_clang() -> None:
    assert parse_mode("lto-thin", "make").family == "clang"
    r = parse_mode("instr-clang+lto-thin", "cmake")
    assert (r.family, r.lto) == ("clang", "thin")
    assert parse_mode("bolt", "make").family == "gcc"


def test_instr_gcc_with_thin_lto_is_refused_with_a_hint() -> None:
    with pytest.raises(HoneError) as exc:
        parse_mode("instr-gcc+lto-thin", "make")
    assert "clang" in exc.value.message and exc.value.hint


@pytest.mark.parametrize("mode", ["instr-gcc+instr-clang", "lto+lto-thin", "bolt+bolt", "pgo", ""])
def test_nonsense_modes_are_refused(mode: str) -> None:
    with pytest.raises(HoneError):
        parse_mode(mode, "make")


def test_cargo_takes_rust_modes_only() -> None:
    assert parse_mode("instr-rust+lto", "cargo").family == "rust"
    with pytest.raises(HoneError, match="cargo"):
        parse_mode("instr-clang", "cargo")
    with pytest.raises(HoneError, match="cargo project"):
        parse_mode("instr-rust", "make")


def test_comma_lists_and_duplicates() -> None:
    names = [r.name for r in parse_modes(["instr-gcc,lto", "lto+instr-gcc", "instr-gcc"], "make")]
    assert names == ["instr-gcc", "lto", "instr-gcc+lto"]
