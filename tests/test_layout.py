"""tests/ mirrors src/hone/ (tests/README.md): every test module sits in the folder of the source
package it tests, and every folder of tests is a package."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Folders of tests with no source package of that name.
EXTRA_FOLDERS = {"examples"}  # examples/ end to end
# Test modules at the top of tests/: they test the tree as a whole, not one package.
TOP_LEVEL = {"test_layout.py", "test_layers.py", "test_packaging.py"}


def _test_modules(tests: Path) -> list[Path]:
    # pytest's default python_files: test_*.py and *_test.py
    found = {*tests.rglob("test_*.py"), *tests.rglob("*_test.py")}
    return sorted(p for p in found if "__pycache__" not in p.parts)


def misplaced(tests: Path, src: Path) -> list[str]:
    """Test modules in a folder that matches no package under ``src`` (or at the top, unlisted)."""
    bad = []
    for path in _test_modules(tests):
        folder = path.relative_to(tests).parts[:-1]
        if not folder:
            if path.name not in TOP_LEVEL:
                bad.append(f"{path.relative_to(tests)}: move it to tests/<package>/ of what it tests")
        elif folder[0] not in EXTRA_FOLDERS and not src.joinpath(*folder, "__init__.py").is_file():
            bad.append(f"{path.relative_to(tests)}: no package hone.{'.'.join(folder)}")
    return bad


def without_init(tests: Path) -> list[str]:
    """Folders holding Python files, or above one, with no ``__init__.py`` (their modules would
    import under bare names, and ``from tests.<package>… import`` would fail)."""
    folders = set()
    for path in tests.rglob("*.py"):
        if "__pycache__" not in path.parts:
            folders |= {path.parent, *(f for f in path.parent.parents if tests in f.parents)}
    return sorted(str(f.relative_to(tests.parent)) for f in folders if not (f / "__init__.py").is_file())


def test_every_test_module_sits_in_the_folder_of_its_source_package() -> None:
    assert misplaced(REPO / "tests", REPO / "src" / "hone") == []


def test_every_folder_of_tests_is_a_package() -> None:
    assert without_init(REPO / "tests") == []


def test_a_module_outside_the_mirror_is_caught(tmp_path: Path) -> None:
    src, tests = tmp_path / "src" / "hone", tmp_path / "tests"
    for pkg in (src / "run", src / "report" / "formats", tests / "run", tests / "report" / "formats",
                tests / "examples", tests / "formats", tests / "nosuch"):
        pkg.mkdir(parents=True, exist_ok=True)
    for ok in ("run/__init__.py", "report/__init__.py", "report/formats/__init__.py"):
        (src / ok).touch()
    for name in ("__init__.py", "conftest.py", "helpers.py", "test_layout.py", "test_journal.py",
                 "run/test_journal.py", "report/formats/test_formats.py", "examples/test_ci_gate.py",
                 "formats/test_formats.py", "nosuch/journal_test.py"):
        (tests / name).touch()
    assert misplaced(tests, src) == [
        "formats/test_formats.py: no package hone.formats",
        "nosuch/journal_test.py: no package hone.nosuch",
        "test_journal.py: move it to tests/<package>/ of what it tests",
    ]
    assert without_init(tests) == ["tests/examples", "tests/formats", "tests/nosuch", "tests/report",
                                    "tests/report/formats", "tests/run"]
