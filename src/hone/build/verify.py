"""Check that a built binary carries its mode, i.e. that hone's flags reached the compiler.

An instrumented gcc build links gcc's profiling runtime (``__gcov_*`` symbols; in a
stripped binary the ``.gcda`` names stay in its data); an instrumented clang or rustc
build has ``__llvm_profile_*`` symbols and ``__llvm_prf_*`` sections. A profile-use build
leaves no such mark; where the binary records its command line (``.GCC.command.line``
from ``-frecord-gcc-switches``, or gcc's DWARF ``DW_AT_producer`` with ``-g``) the
profile-use flag must be in it, and where it records none the build is "not verifiable".

A build whose flags did not arrive is a :class:`FlagsNotAppliedError`, explained from what
the compiler wrappers saw (:class:`~hone.build.systems.wrappers.WrapperCalls`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hone.build.systems.base import BuildLog
from hone.build.systems.wrappers import WRAPPERS_OFF
from hone.core.errors import HoneError
from hone.linking.elf import build_marks

Status = Literal["ok", "missing", "not verifiable"]

_PREFIX = {"gcov": "__gcov_", "llvm": "__llvm_profile_"}
_WHAT = {"gcov": "gcc's profiling runtime (__gcov_* symbols, linked by -fprofile-generate)",
         "llvm": "LLVM's profiling runtime (__llvm_profile_* symbols, __llvm_prf_* sections)"}
_TELLING = ("__gcov_merge_add", "__gcov_exit", "__gcov_init", "__gcov_dump", "__llvm_profile_runtime",
            "__llvm_profile_write_file", "__llvm_profile_init")
BUILD_COMMAND_HINT = "--build-command 'make CC={cc} CFLAGS={cflags} LDFLAGS={ldflags}' (build.command in a spec)"
# Where each build system's own files override the CC/CFLAGS hone gives it: (question, remedy).
_OVERRIDES = {
    "cmake": ("does CMakeLists.txt set() CMAKE_C_FLAGS or CMAKE_C_COMPILER itself?",
              "let CMakeLists.txt append to CMAKE_C_FLAGS instead of replacing it"),
    "autotools": ("does configure.ac assign CFLAGS=… or CC=… itself?",
                  "let configure.ac keep the CFLAGS it is given (AC_PROG_CC only sets a default)"),
    "meson": ("does meson.build set c_args in project()'s default_options (they beat CFLAGS)?",
              "add the project's own flags with add_project_arguments() instead"),
}


class FlagsNotAppliedError(HoneError):
    """A variant's binary lacks what its mode's flags put there: they never reached the compiler.
    ``other_family``: the project compiles with the other compiler family, so only the variants
    of this family fail; otherwise no variant can get its flags."""

    other_family: bool = False


@dataclass(frozen=True)
class Verification:
    status: Status
    detail: str

    @property
    def line(self) -> str:
        return f"{self.status}: {self.detail}"

    def to_dict(self) -> dict[str, str]:
        return {"status": self.status, "detail": self.detail}


def check_instrumented(binary: Path, marker: str) -> Verification:
    """Does ``binary`` carry the profiling runtime of ``marker`` ("gcov" or "llvm")?"""
    marks = build_marks(binary, (_PREFIX[marker],))
    found = sorted(marks.symbols, key=lambda s: (s not in _TELLING, s))
    if found:
        return Verification("ok", f"instrumented: {', '.join(found[:3])} in the symbol table")
    if marker == "llvm":
        prf = sorted(s for s in marks.sections if s.startswith("__llvm_prf_"))
        if prf:
            return Verification("ok", f"instrumented: sections {', '.join(prf[:3])}")
    elif ".symtab" not in marks.sections and b".gcda\0" in binary.read_bytes():
        return Verification("ok", "instrumented: .gcda file names in the (stripped) binary")
    return Verification("missing", f"lacks {_WHAT[marker]}")


def _has_flag(record: str, flag: str) -> bool:
    return any(tok == flag or tok.startswith(flag + "=") for tok in record.split())


def check_profile_use(binary: Path, flag: str) -> Verification:
    """Does the command line ``binary`` records (if it records one) contain ``flag``?"""
    marks = build_marks(binary)
    # clang's and rustc's DW_AT_producer name the compiler only; gcc's lists the switches.
    producers = [p for p in marks.producers if any(t.startswith("-") for t in p.split())]
    for where, records in ((".GCC.command.line", marks.command_lines), ("DW_AT_producer", producers)):
        if any(_has_flag(r, flag) for r in records):
            return Verification("ok", f"{flag} in the recorded command line ({where})")
    if marks.command_lines or producers:
        n = len(marks.command_lines) + len(producers)
        return Verification("missing", f"none of the {n} recorded command line(s) (.GCC.command.line, DW_AT_producer)"
                                       f" contains {flag}")
    return Verification("not verifiable", f"the binary records no command line to look for {flag} in (it would"
                                          " with -frecord-gcc-switches, or -g under gcc)")


def explain(variant: str, stage: str, binary: Path, check: Verification, log: BuildLog, family: str,
            flags: list[str], log_path: Path | None = None, system: str = "") -> FlagsNotAppliedError:
    """The error for a ``stage`` build of ``variant`` whose flags did not arrive, with the
    likely cause read from what the compiler wrappers saw."""
    calls = log.wrapper_calls
    shown = " ".join(flags) or "(none)"
    other_family = False
    hint = ("let the build take CC/CFLAGS/LDFLAGS from the environment (CC ?= gcc, CFLAGS ?= -O2), call the"
            f" compiler by name rather than by path, or pass the flags on the build command: {BUILD_COMMAND_HINT}")
    question, remedy = _OVERRIDES.get(system, ("does its Makefile assign CC = … and CFLAGS = … itself?", ""))
    if remedy:
        hint = f"{remedy}; {hint}"
    if system == "cargo" or family == "rust":
        cause = ("hone's flags travel to rustc in RUSTFLAGS and CARGO_ENCODED_RUSTFLAGS, and this build did not"
                 " pass them on: does build.command clear the environment or call rustc itself, or is --binary a"
                 " program this build does not link (a stale copy, another profile's directory)?")
        hint = ("let build.command run cargo build with the environment it is given (RUSTFLAGS), and --binary"
                " name target/release/NAME")
    elif calls is None:
        what = "-D cache entries" if system == "cmake" else "CC/CFLAGS/LDFLAGS"
        cause = (f"the compiler wrappers are switched off ({WRAPPERS_OFF}=1), so hone's flags could only travel in"
                 f" {what}, and the build ignored those ({question})")
        hint = f"unset {WRAPPERS_OFF} (a diagnostic switch); or {hint}"
    elif not calls.counts and system == "cmake":
        cause = ("no compile or link went through hone's launcher (CMAKE_C_COMPILER_LAUNCHER,"
                 " CMAKE_C_LINKER_LAUNCHER): does CMakeLists.txt set these launchers (or RULE_LAUNCH_COMPILE) itself?")
    elif not calls.counts:
        cause = ("the build ignored CC/CFLAGS from the environment and the wrappers were bypassed: no compiler was"
                 " called by name through PATH. Does the Makefile call a compiler by absolute path"
                 " (CC = /usr/bin/gcc), or set PATH itself?")
    elif not calls.names("appended", "present"):
        used = ", ".join(calls.names("passed"))
        cause = (f"the build compiled with {used}, which a {family} variant runs unchanged: the"
                 f" project picks its own compiler and {variant} needs {family}")
        hint = ("build the mode of the project's compiler (instr-gcc for gcc, instr-clang for clang), or let the"
                " Makefile use $(CC) (CC ?= cc)")
        other_family = True
    else:
        cause = (f"the wrappers added hone's flags to {calls.total('appended', 'present')} compiler call(s)"
                 f" ({calls.summary()}), yet the binary lacks them: is --binary the program this build links, and"
                 " does the build link it with the compiler (not ld directly) rather than copy a prebuilt one?")
        hint = f"see the build log; {hint}"
    err = FlagsNotAppliedError(
        f"{variant}: the {stage} did not get hone's flags ({shown}) — {binary.name}: {check.detail}. "
        f"Likely cause: {cause}" + (f" (log: {log_path})" if log_path else ""), hint=hint)
    err.other_family = other_family
    return err
