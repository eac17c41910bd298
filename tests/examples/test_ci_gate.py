"""examples/ci: the pull-request gate its CI files run, here on real builds of work.c.

The command line is read from the GitHub workflow (and must be the GitLab job's too), then
run with the builds where the workflow puts them: a build doing 15% more work must fail
the gate (exit 4, naming the slower build); the same program twice must pass (exit 0)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "ci"


def gate_argv() -> list[str]:
    """The `hone compare` arguments of the workflow, checked to be the GitLab job's."""
    steps = yaml.safe_load((EXAMPLE / "github-actions.yml").read_text())["jobs"]["compare"]["steps"]
    github = [shlex.split(s["run"]) for s in steps if "hone compare" in s.get("run", "")]
    script = yaml.safe_load((EXAMPLE / "gitlab-ci.yml").read_text())["perf-gate"]["script"]
    gitlab = [shlex.split(line) for line in script if "hone compare" in line]
    assert len(github) == 1 and gitlab == github
    argv = github[0]
    assert argv[:2] == ["hone", "compare"] and "--fail-on" in argv and "--summary" in argv
    return argv[1:]


def _make(out: Path, *extra: str) -> None:
    subprocess.run(["make", "-s", "-C", str(EXAMPLE), f"OUT={out}", *extra], check=True, timeout=120,
                   capture_output=True)


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """base/work as in main and slower/work with 15% more work (a pull request's build)."""
    if not (shutil.which("make") and (shutil.which("cc") or shutil.which("gcc"))):
        pytest.skip("needs make and a C compiler")
    d = tmp_path_factory.mktemp("ci-builds")
    _make(d / "base")
    _make(d / "slower", "CPPFLAGS=-DWORK_PERCENT=115")
    return d


def _checkout(tmp_path: Path, old: Path, new: Path) -> Path:
    """A job's working directory: the builds at build/old/work and build/new/work."""
    for name, binary in (("old", old), ("new", new)):
        (tmp_path / "build" / name).mkdir(parents=True)
        shutil.copy2(binary, tmp_path / "build" / name / "work")
    return tmp_path


def test_a_fifteen_percent_slow_down_fails_the_gate_naming_it(hone, builds: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    job = _checkout(tmp_path, builds / "base" / "work", builds / "slower" / "work")
    step_summary = tmp_path / "step-summary.md"
    r = hone(*gate_argv(), cwd=job, env={"GITHUB_STEP_SUMMARY": str(step_summary)})
    assert r.code == 4, r.out + r.err
    assert "--fail-on slower: new is slower than old" in r.err
    summary = (job / "hone-summary.md").read_text()
    assert "**new** vs old: **slower**" in summary and "**Gate `--fail-on slower`: failed**" in summary
    assert step_summary.read_text() == summary + "\n"  # the job page gets the same text


def test_the_same_program_twice_passes_the_gate(hone, builds: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    job = _checkout(tmp_path, builds / "base" / "work", builds / "base" / "work")
    r = hone(*gate_argv(), cwd=job)
    assert r.code == 0, r.out + r.err
    summary = (job / "hone-summary.md").read_text()
    assert "**Gate `--fail-on slower`: passed**" in summary
    assert "**slower**" not in summary
