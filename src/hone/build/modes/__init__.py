"""Profile modes (one file each) and the post-link BOLT pass."""

from __future__ import annotations

from hone.build.modes.autofdo import AutoFdo, AutoFdoClang, AutoFdoMode, EmptyProfileError, check_lbr
from hone.build.modes.base import ProfileMode
from hone.build.modes.bolt import BoltPass
from hone.build.modes.instr_clang import InstrClang
from hone.build.modes.instr_gcc import InstrGcc
from hone.build.modes.instr_rust import InstrRust
from hone.build.modes.lto import add_lto

PROFILE_MODES: dict[str, type[ProfileMode]] = {
    "instr-gcc": InstrGcc,
    "instr-clang": InstrClang,
    "instr-rust": InstrRust,
    "autofdo": AutoFdo,
    "autofdo-clang": AutoFdoClang,
}

__all__ = ["PROFILE_MODES", "AutoFdo", "AutoFdoClang", "AutoFdoMode", "BoltPass", "EmptyProfileError", "InstrClang",
           "InstrGcc", "InstrRust", "ProfileMode", "add_lto", "check_lbr"]
