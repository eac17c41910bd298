"""``hone tune --storage`` with a URL that cannot hold studies: one line naming the storage,
exit 2, before anything is measured."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tune.conftest import write_workload


@pytest.mark.parametrize(("url", "expected"), [
    ("sqlite:///{dir}/no/such/dir/studies.db", "unable to open database file"),
    ("sqlite:///{dir}", "unable to open database file"),  # a directory
    ("sqlite:///{dir}/not-a-db.txt", "file is not a database"),
    ("mysql://hone@127.0.0.1/studies", "no database driver for this URL is installed"),
])
def test_unusable_storage_is_one_line_and_nothing_runs(hone, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                                       url: str, expected: str) -> None:
    monkeypatch.setenv("HONE_TEST_LOG", str(tmp_path / "runs.log"))
    spec = write_workload(tmp_path, trials=2)
    (tmp_path / "not-a-db.txt").write_text("just text, long enough to be read as a header " * 4)
    url = url.format(dir=tmp_path)
    res = hone("tune", spec, "--storage", url)
    assert res.code == 2 and "Traceback" not in res.err, res.err
    assert res.err.startswith(f"hone: error: storage {url}: {expected}")
    assert not (tmp_path / "runs.log").exists()  # not even the baseline ran
    assert (tmp_path / "not-a-db.txt").read_text().startswith("just text")
