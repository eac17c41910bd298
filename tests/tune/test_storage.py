"""Storage URLs: masking, and one clear line for each way a database can refuse us."""

from __future__ import annotations

import optuna
import pytest

from hone.tune.storage import StorageError, mask_url, open_storage, scrub

pytestmark = pytest.mark.integration


def test_mask_url_hides_password_keeps_the_rest() -> None:
    assert mask_url("postgresql://u:pa%40ss@h:5433/db") == "postgresql://u:***@h:5433/db"
    assert mask_url("postgresql://u@h/db") == "postgresql://u@h/db"
    assert mask_url("sqlite:////tmp/x.db") == "sqlite:////tmp/x.db"


def test_scrub_removes_url_password_and_pgpassword(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSWORD", "envsecret")
    text = scrub("a postgresql://u:urlsecret@h/db and envsecret and urlsecret", "postgresql://u:urlsecret@h/db")
    assert "urlsecret" not in text and "envsecret" not in text


def test_open_storage_creates_schema(pg) -> None:  # type: ignore[no-untyped-def]
    url = pg.createdb("storage_ok")
    storage = open_storage(url)
    study = optuna.create_study(storage=storage, study_name="s")
    assert study.study_name == "s"


def test_wrong_password_is_one_masked_line(pg) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(StorageError) as info:
        open_storage(pg.url("postgres", password="wrong-pw-123"))
    assert "password authentication failed" in info.value.message
    assert "wrong-pw-123" not in info.value.message and "\n" not in info.value.message


def test_password_from_pgpassword_env(pg, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    url = pg.createdb("storage_env")
    from tests.pg import PG_PASSWORD

    monkeypatch.setenv("PGPASSWORD", PG_PASSWORD)
    open_storage(url.replace(f":{PG_PASSWORD}@", "@"))


def test_password_from_pgpass_file(pg, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from tests.pg import PG_PASSWORD

    url = pg.createdb("storage_pgpass")
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{pg.port}:*:hone:{PG_PASSWORD}\n")
    pgpass.chmod(0o600)  # libpq ignores a .pgpass others can read
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    open_storage(url.replace(f":{PG_PASSWORD}@", "@"))


def test_unreachable_server(pg) -> None:  # type: ignore[no-untyped-def]
    from tests.net import free_port

    with pytest.raises(StorageError) as info:
        open_storage(f"postgresql://hone:x@127.0.0.1:{free_port()}/db")
    assert "unreachable" in info.value.message


def test_schema_from_newer_optuna(pg) -> None:  # type: ignore[no-untyped-def]
    url = pg.createdb("storage_newer")
    open_storage(url)
    pg.psql("UPDATE alembic_version SET version_num = 'v99.0.0.a'", db="storage_newer")
    pg.psql("UPDATE version_info SET library_version = '99.0.0'", db="storage_newer")
    with pytest.raises(StorageError) as info:
        open_storage(url)
    assert "newer Optuna" in info.value.message


def test_study_lock_survives_a_dropped_connection(pg) -> None:  # type: ignore[no-untyped-def]
    import sqlalchemy

    from hone.fleet.lock import StudyLock

    url = pg.createdb("storage_lock")
    lock = StudyLock(url, "s", open_storage(url).engine)
    with lock:
        pid = lock._conn.execute(sqlalchemy.text("SELECT pg_backend_pid()")).scalar()  # type: ignore[union-attr]
    pg.psql(f"SELECT pg_terminate_backend({pid})")  # an idle connection cut by the server
    with lock:
        held = pg.psql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")
    assert held.strip() == "1"
    lock.close()
