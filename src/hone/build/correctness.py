"""Correctness before speed: a variant must give the default binary's answers.

Each variant runs every train and evaluate scenario once; its exit code and stdout must
equal the default's, or the user's ``check`` command must accept its output. BOLT 16
can produce a wrong-answer binary without any warning (docs/machine-facts.md), so this is
not optional.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hone.build.scenario import Scenario, run_scenario
from hone.core.process import ProcessResult, run_process


@dataclass
class Reference:
    """What the default binary did on one scenario."""

    returncode: int
    stdout: str


@dataclass
class Mismatch:
    scenario: str
    detail: str


def reference_of(result: ProcessResult) -> Reference:
    return Reference(result.returncode, result.stdout)


def difference(reference: Reference, result: ProcessResult) -> str | None:
    """None when ``result`` matches; else one line saying how it differs."""
    if result.timed_out:
        return f"timed out after {result.wall_s:.1f} s"
    if result.returncode != reference.returncode:
        return f"exit code {result.returncode}, default gave {reference.returncode}"
    if result.stdout != reference.stdout:
        diff = list(difflib.unified_diff(reference.stdout.splitlines(), result.stdout.splitlines(), lineterm="", n=0))
        shown = " | ".join(d for d in diff[2:6])
        return f"stdout differs from the default's: {shown}"
    return None


def run_check(check: str, scenario: Scenario, binary: Path, result: ProcessResult, reference: Reference,
              *, timeout: float, cwd: Path | None) -> str | None:
    """The user's ``check`` shell command: stdin = the variant's stdout; environment
    ``HONE_BINARY``, ``HONE_SCENARIO``, ``HONE_EXIT_CODE``, ``HONE_REFERENCE_OUTPUT``
    (a file with the default's stdout). Exit 0 = correct."""
    with tempfile.NamedTemporaryFile("w", prefix="hone-ref-", delete=False) as f:
        f.write(reference.stdout)
        ref_path = f.name
    try:
        env = {**os.environ, "HONE_BINARY": str(binary), "HONE_SCENARIO": scenario.name,
               "HONE_EXIT_CODE": str(result.returncode), "HONE_REFERENCE_OUTPUT": ref_path}
        res = run_process(["sh", "-c", check], timeout=timeout, env=env, cwd=cwd, stdin=result.stdout)
    finally:
        os.unlink(ref_path)
    if res.ok:
        return None
    return f"check command rejected it ({res.describe_failure()})"


def verify(binary: Path, scenarios: list[Scenario], references: dict[str, Reference], *, check: str | None,
           timeout: float, cwd: Path | None) -> list[Mismatch]:
    """Run every scenario on ``binary``; return the scenarios where it is wrong."""
    bad: list[Mismatch] = []
    for scn in scenarios:
        res = run_scenario(scn, binary, timeout=timeout, cwd=cwd)
        ref = references[scn.name]
        why = run_check(check, scn, binary, res, ref, timeout=timeout, cwd=cwd) if check else difference(ref, res)
        if why:
            bad.append(Mismatch(scn.name, why))
    return bad
