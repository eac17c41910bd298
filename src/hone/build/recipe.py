"""What a ``--mode`` string asks for: ``instr-clang+lto-thin`` → a :class:`Recipe`.

A mode is one or more tokens joined by ``+``. The tokens decide the compiler family
(gcc, clang or rust), the profile kind, the LTO kind and whether BOLT runs last.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from hone.core.errors import HoneError

Family = Literal["gcc", "clang", "rust"]
ProfileKind = Literal["instr-gcc", "instr-clang", "instr-rust", "autofdo", "autofdo-clang"]

TOKENS = ("clang", "instr-gcc", "instr-clang", "instr-rust", "autofdo", "autofdo-clang", "lto", "lto-full",
          "lto-thin", "bolt")
# autofdo is gcc's (like instr-gcc); autofdo-clang (also spelled clang+autofdo) is clang's.
PROFILE_TOKENS: tuple[str, ...] = ("instr-gcc", "instr-clang", "instr-rust", "autofdo", "autofdo-clang")
# The modes listed by `hone pgo --help` and offered when a mode cannot work here.
EXAMPLE_MODES = ("instr-gcc", "instr-clang", "instr-rust", "lto", "lto-thin", "instr-gcc+lto",
                 "instr-clang+lto-thin", "bolt", "instr-gcc+bolt", "autofdo", "autofdo-clang")


@dataclass(frozen=True)
class Recipe:
    """How one variant is built. ``name`` is the normalized mode string."""

    name: str
    family: Family
    profile: ProfileKind | None = None
    lto: Literal["full", "thin"] | None = None
    bolt: bool = False

    @property
    def is_default(self) -> bool:
        return self.profile is None and self.lto is None and not self.bolt and self.name == "default"


def default_recipe(system: str) -> Recipe:
    """The reference build: the project's own compiler and flags (rustc for cargo, gcc else)."""
    return Recipe("default", "rust" if system == "cargo" else "gcc")


def parse_mode(mode: str, system: str) -> Recipe:
    """Parse ``mode`` for a project built by ``system`` (make, cmake, autotools, meson, cargo, command).

    Raises HoneError for unknown tokens or combinations that cannot be built
    (two profiles, thin LTO with gcc, a C profile on a cargo project …).
    """
    tokens = [t.strip() for t in mode.strip().lower().split("+") if t.strip()]
    if not tokens:
        raise HoneError(f"empty --mode {mode!r}", hint=f"modes: {', '.join(EXAMPLE_MODES)}")
    for t in tokens:
        if t not in TOKENS:
            raise HoneError(f"unknown mode {t!r} in {mode!r}", hint=f"modes: {', '.join(EXAMPLE_MODES)}")
    if len(set(tokens)) != len(tokens):
        raise HoneError(f"mode {mode!r} names a part twice")
    profiles = [t for t in tokens if t in PROFILE_TOKENS]
    if len(profiles) > 1:
        raise HoneError(f"mode {mode!r} combines two profiles ({' and '.join(profiles)}); pick one")
    ltos = [t for t in tokens if t.startswith("lto")]
    if len(ltos) > 1:
        raise HoneError(f"mode {mode!r} names two kinds of LTO")
    profile = profiles[0] if profiles else None
    lto: Literal["full", "thin"] | None = None
    if ltos:
        lto = "thin" if ltos[0] == "lto-thin" else "full"
    family: Family
    if system == "cargo":
        family = "rust"
        bad = [t for t in tokens if t in ("clang", "instr-gcc", "instr-clang", "autofdo", "autofdo-clang")]
        if bad:
            raise HoneError(f"mode {mode!r} does not apply to a cargo project ({', '.join(bad)})",
                            hint="cargo projects take instr-rust, lto, lto-thin, bolt")
    else:
        if profile == "instr-rust":
            raise HoneError(f"mode {mode!r}: instr-rust needs a cargo project (--cargo DIR)")
        wants_clang = "clang" in tokens or profile in ("instr-clang", "autofdo-clang") or lto == "thin"
        if wants_clang and profile == "autofdo":  # clang+autofdo, autofdo+lto-thin: clang's AutoFDO
            profile = "autofdo-clang"
            tokens = ["autofdo-clang" if t == "autofdo" else t for t in tokens if t != "clang"]
        if wants_clang and profile == "instr-gcc":
            why = "thin LTO" if lto == "thin" else "clang"
            raise HoneError(f"mode {mode!r}: instr-gcc is a gcc profile and {why} needs clang",
                            hint="use instr-clang+lto-thin, or instr-gcc+lto (gcc's full LTO)")
        family = "clang" if wants_clang else "gcc"
    # Canonical order so "lto+instr-gcc" and "instr-gcc+lto" are one variant.
    order = {t: i for i, t in enumerate(("clang", *PROFILE_TOKENS, "lto", "lto-full", "lto-thin", "bolt"))}
    canon = [("lto" if t == "lto-full" and family != "clang" else t) for t in sorted(tokens, key=order.__getitem__)]
    return Recipe("+".join(canon), family, profile, lto, "bolt" in tokens)  # type: ignore[arg-type]


def parse_modes(modes: list[str], system: str) -> list[Recipe]:
    """Every ``--mode`` (comma-separated lists allowed), duplicates dropped, order kept."""
    out: list[Recipe] = []
    for item in modes:
        for part in item.split(","):
            if part.strip():
                r = parse_mode(part, system)
                if r.name not in {o.name for o in out}:
                    out.append(r)
    if not out:
        raise HoneError("no --mode given", hint=f"modes: {', '.join(EXAMPLE_MODES)}")
    return out
