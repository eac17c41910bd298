"""hone export (sysctl.d files, config diffs) and hone verify (drift), through the real console
script: the sysctl.d file applies with `sysctl -p`, the diff with `patch`, and a knob changed by
hand afterwards is named as drifted."""

from __future__ import annotations

import json
import os
import textwrap
import uuid
from pathlib import Path

from hone.core.process import run_process
from tests.conftest import REPO, needs_root

SYSCTL = Path("/proc/sys/vm/dirty_writeback_centisecs")  # harmless; other tests set and restore it too
KEY = "vm.dirty_writeback_centisecs"


def _spec(tmp_path: Path) -> Path:
    (tmp_path / "app.conf").write_text("# app\nworkers = 1\ncache = 64\n")
    (tmp_path / "other.env").write_text("MODE=fast")  # no final newline
    path = tmp_path / "hone.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: persist
        benchmark: {{command: ['true']}}
        metrics: [{{name: wall_time}}]
        knobs:
          - {{name: {KEY}, kind: sysctl, values: [300, 450, 600]}}
          - {{name: workers, kind: file, path: app.conf, key: workers, values: [1, 2, 4]}}
          - {{name: cache, kind: file, path: app.conf, key: cache, values: [64, 128]}}
          - {{name: mode, kind: file, path: other.env, key: MODE, values: [fast, safe]}}
          - {{name: n, kind: param, values: [1, 2]}}
        """))
    return path


@needs_root
def test_sysctl_d_applies_with_sysctl_p_then_verify_names_the_drifted_knob(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = _spec(tmp_path)
    original = SYSCTL.read_text().strip()
    value = "450" if original != "450" else "600"
    out = tmp_path / "99-hone.conf"
    try:
        res = hone("export", spec, "--set", f"{KEY}={value}", "--set", "workers=4", "--set", "n=2",
                   "--sysctl-d", out)
        assert res.code == 0, res.err
        lines = out.read_text().splitlines()
        assert lines[0].startswith("# Written by hone export from the spec") and lines[-1] == f"{KEY} = {value}"
        assert "skipped workers (file knob)" in res.err and "skipped n (param knob)" in res.err
        assert SYSCTL.read_text().strip() == original  # export writes only FILE

        applied = run_process(["sysctl", "-p", str(out)], timeout=10)
        assert applied.returncode == 0, applied.stderr
        assert SYSCTL.read_text().strip() == value
        ok = hone("verify", out, "--json", tmp_path / "ok.json")
        assert ok.code == 0, ok.err
        checks = json.loads((tmp_path / "ok.json").read_text())["checks"]
        assert checks == [{"knob": KEY, "expected": value, "actual": value, "source": f"{out}:3", "status": "ok",
                           "detail": ""}]

        SYSCTL.write_text("310")  # by hand, as an admin or another tool would
        drift = hone("verify", out, "--json", "-")
        assert drift.code == 5, drift.err
        doc = json.loads(drift.out)
        assert doc["format"] == "hone-verify/1" and doc["ok"] is False
        assert doc["checks"][0] | {"detail": ""} == {"knob": KEY, "expected": value, "actual": "310",
                                                     "source": f"{out}:3", "status": "drifted", "detail": ""}
        assert f"{KEY} (drifted)" in drift.err
    finally:
        SYSCTL.write_text(original)


def test_config_diff_applies_with_patch_and_changes_nothing(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = _spec(tmp_path)
    before = {p: p.read_bytes() for p in (tmp_path / "app.conf", tmp_path / "other.env")}
    out = tmp_path / "settings.diff"
    res = hone("export", spec, "--set", "workers=4", "--set", "cache=128", "--set", "mode=safe",
               "--set", f"{KEY}=300", "--config-diff", out)
    assert res.code == 0, res.err
    assert f"skipped {KEY} (sysctl knob)" in res.err
    assert {p: p.read_bytes() for p in before} == before
    text = out.read_text()
    assert "-workers = 1\n-cache = 64\n+workers = 4\n+cache = 128\n" in text
    assert "+MODE=safe\n\\ No newline at end of file\n" in text
    dry = run_process(["patch", "-d", "/", "-p1", "--dry-run", "-i", str(out)], timeout=10)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert {p: p.read_bytes() for p in before} == before

    # Applied for real, the files hold what verify expects from the same settings.
    done = run_process(["patch", "-d", "/", "-p1", "-i", str(out)], timeout=10)
    assert done.returncode == 0, done.stdout + done.stderr
    ok = hone("verify", spec, "--set", "workers=4", "--set", "cache=128", "--set", "mode=safe")
    assert ok.code == 0, ok.out + ok.err
    assert ok.out.count(" ok ") == 3


def test_export_and_verify_from_a_tune_result(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _spec(tmp_path)
    result = json.loads((REPO / "tests/report/formats/samples/hone-tune-2.json").read_text())
    result.update(spec="hone.yaml", recommended={"workers": 2, "n": 1})
    path = tmp_path / "result.json"
    path.write_text(json.dumps(result))
    out = tmp_path / "settings.diff"
    res = hone("export", path, "--config-diff", out)  # the spec found from the result's directory
    assert res.code == 0, res.err
    assert "+workers = 2\n" in out.read_text() and "from the hone tune result" in out.read_text()

    drift = hone("verify", path)
    assert drift.code == 5
    assert "workers" in drift.out and f"{path}: recommended.workers" in drift.out and "drifted" in drift.out
    assert "skipped n (param knob)" in drift.err


def test_bad_input_is_one_error_naming_file_and_line_and_nothing_is_written(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = _spec(tmp_path)
    bad = tmp_path / "bad.conf"
    bad.write_text("# ok\nvm.swappiness = 10\nvm.dirty_ratio\n")
    res = hone("verify", bad)
    assert res.code == 2
    assert res.err.strip() == f"hone: error: {bad}:3: expected 'key = value' (a sysctl.d line), got 'vm.dirty_ratio'"

    result = json.loads((REPO / "tests/report/formats/samples/hone-tune-2.json").read_text())
    result.update(spec=str(spec), recommended={"workers": 3})
    path = tmp_path / "result.json"
    path.write_text(json.dumps(result))
    out = tmp_path / "never.conf"
    res = hone("export", path, "--sysctl-d", out)
    assert res.code == 2 and f"{path}: field 'recommended.workers': expected one of 1, 2, 4, got 3" in res.err
    result["recommended"] = None
    path.write_text(json.dumps(result))
    res = hone("export", path, "--sysctl-d", out)
    assert res.code == 2 and "field 'recommended' is null" in res.err
    res = hone("export", spec, "--set", "workers=2", "--sysctl-d", out)
    assert res.code == 2 and "no sysctl knob among the settings" in res.err
    res = hone("export", spec, "--set", "workers=2")
    assert res.code == 2 and "--sysctl-d FILE or --config-diff FILE" in res.err
    assert not out.exists()


@needs_root
def test_overwriting_a_file_under_etc_is_journaled_and_rolled_back(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = _spec(tmp_path)
    target = Path("/etc") / f"hone-test-{uuid.uuid4().hex[:8]}.conf"
    target.write_text("vm.dirty_writeback_centisecs = 500\n")
    os.chmod(target, 0o640)
    try:
        res = hone("export", spec, "--set", f"{KEY}=600", "--sysctl-d", target)
        assert res.code == 0 and "journaled" in res.out, res.err
        assert target.read_text().endswith(f"{KEY} = 600\n")
        status = hone("status", "--diff")
        assert f"file:{target}" in status.out and f"+{KEY} = 600" in status.out
        back = hone("rollback")
        assert back.code == 0, back.err
        assert target.read_text() == "vm.dirty_writeback_centisecs = 500\n"
        assert target.stat().st_mode & 0o777 == 0o640
    finally:
        target.unlink(missing_ok=True)


# ---------------------------------------------------------------- PRESET as a source


def _user_preset(tmp_path: Path, value: str) -> Path:
    path = tmp_path / "wb.yaml"
    path.write_text(textwrap.dedent(f"""\
        preset: wb
        version: 3
        description: a test preset on a harmless sysctl
        classes: [io-sequential]
        include: throughput-server
        exclude: [vm.swappiness, vm.dirty_ratio, vm.dirty_background_ratio]
        files:
          app: {{format: conf, match: [app.conf]}}
        settings:
          - {{sysctl: {KEY}, value: {value}, source: "A-Tune: test", why: "a harmless sysctl for the test"}}
          - {{sysctl: net.ipv4.tcp_rmem, value: "4096 131072 6291456", source: "tuned: test",
             why: "a value with spaces"}}
          - {{sysfs: kernel/mm/transparent_hugepage/enabled, value: never, source: "tuned: test", why: "tuned's [vm]"}}
          - {{file: app, key: workers, value: 8, source: "tuned: test", why: "no tuned plugin for a config key"}}
        """))
    return path


@needs_root
def test_preset_sysctl_d_applies_with_sysctl_p_and_verify_names_drift(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    original, rmem = SYSCTL.read_text().strip(), Path("/proc/sys/net/ipv4/tcp_rmem").read_text()
    value = "460" if original != "460" else "470"
    preset = _user_preset(tmp_path, value)
    out = tmp_path / "99-wb.conf"
    try:
        res = hone("export", preset, "--sysctl-d", out, "--device", "vda")
        assert res.code == 0, res.err
        lines = out.read_text().splitlines()
        assert lines[0] == "# Written by hone export from the preset wb v3"
        somaxconn = Path("/proc/sys/net/core/somaxconn").read_text().strip()
        # at_least (tuned's '>2048'): never lower what the machine has
        assert f"net.core.somaxconn = {max(int(somaxconn), 2048)}" in lines
        assert f"{KEY} = {value}" in lines and "net.ipv4.tcp_rmem = 4096 131072 6291456" in lines
        assert "skipped app.workers: file app is not bound" in res.err
        assert SYSCTL.read_text().strip() == original  # export writes only FILE
        applied = run_process(["sysctl", "-p", str(out)], timeout=10)
        assert applied.returncode == 0, applied.stderr
        assert SYSCTL.read_text().strip() == value
        ok = hone("verify", preset, "--json", "-")
        checks = {c["knob"]: c for c in json.loads(ok.out)["checks"]}
        assert checks[KEY]["status"] == "ok" and checks["net.ipv4.tcp_rmem"]["status"] == "ok"
        assert checks["net.core.somaxconn"]["expected"] == ">= 2048" and checks["net.core.somaxconn"]["status"] == "ok"
        assert checks[KEY]["source"] == "preset wb v3"
        assert checks["net.core.somaxconn"]["source"] == "preset wb v3, from throughput-server"
        SYSCTL.write_text("311")
        drift = hone("verify", preset)
        assert drift.code == 5 and f"{KEY} (drifted)" in drift.err
    finally:
        SYSCTL.write_text(original)
        Path("/proc/sys/net/ipv4/tcp_rmem").write_text(rmem)


def test_preset_tuned_profile_is_a_tuned_profile_layout(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import configparser

    preset = _user_preset(tmp_path, "450")
    out = tmp_path / "wb-profile"
    res = hone("export", preset, "--tuned-profile", out, "--device", "vda", "--config", f"app={_app(tmp_path)}")
    assert res.code == 0, res.err
    assert "skipped app.workers (file knob): a config-file key: tuned has no plugin" in res.err
    assert sorted(p.name for p in out.iterdir()) == ["tuned.conf"]
    # read as tuned's profile loader reads tuned.conf (tuned/profiles/loader.py)
    parser = configparser.ConfigParser(delimiters=("=",), inline_comment_prefixes=("#",), strict=False)
    parser.optionxform = str  # type: ignore[assignment, method-assign]
    parser.read_string((out / "tuned.conf").read_text())
    assert parser.sections() == ["main", "sysctl", "vm", "disk_vda"]
    assert parser["main"]["include"] == "throughput-performance"  # throughput-server's tuned profile
    assert parser["main"]["summary"] == "hone: preset wb v3"
    assert dict(parser["sysctl"]) == {"net.core.somaxconn": ">2048", KEY: "450",
                                      "net.ipv4.tcp_rmem": '"4096 131072 6291456"'}
    assert dict(parser["vm"]) == {"transparent_hugepages": "never"}  # tuned's vm plugin option
    assert dict(parser["disk_vda"]) == {"type": "disk", "devices": "vda", "readahead": ">4096"}
    none = hone("export", preset, "--tuned-profile", tmp_path / "p2", "--tuned-include", "none")
    assert none.code == 0 and "include=" not in (tmp_path / "p2" / "tuned.conf").read_text()


def _app(tmp_path: Path) -> Path:
    (tmp_path / "app.conf").write_text("workers = 1\n")
    return tmp_path / "app.conf"


def test_preset_source_bad_input_is_one_line(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    preset = _user_preset(tmp_path, "450")
    for args, message in (((preset, "--set", "x=1", "--sysctl-d", tmp_path / "o"), "--set goes with a spec"),
                          ((preset, "--device", "nope", "--sysctl-d", tmp_path / "o"), "--device nope"),
                          (("nonesuch-preset", "--sysctl-d", tmp_path / "o"), "nonesuch-preset: no such file"),
                          ((preset, "--tuned-include", "x", "--sysctl-d", tmp_path / "o"),
                           "--tuned-include goes with --tuned")):
        res = hone("export", *args)
        assert res.code == 2 and message in res.err.splitlines()[0], res.err
        assert not (tmp_path / "o").exists()
