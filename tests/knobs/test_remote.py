"""Knobs with ``hosts:`` applied over SSH, against two real sshd on loopback addresses.

Each sshd gives its sessions ``HONE_TEST_HOST`` (sshd ``SetEnv``), so the "hosts" keep
their state in different files although they share this machine's filesystem. For file
knobs, whose path is one for all hosts, each sshd runs in a mount namespace of its own
where ``SshHosts.etc`` is that host's own directory (``SshHosts.files(name)`` here).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hone.core.errors import SpecError
from hone.knobs import check_spec
from hone.knobs._files import TEMP_PREFIX
from hone.knobs.remote import _WRITE, split_host, ssh_argv
from hone.spec import load_spec
from tests.conftest import block_readahead
from tests.net import free_port
from tests.procs import MARK_ENV, marked, new_mark, with_arg

pytestmark = pytest.mark.integration
SSHD = "/usr/sbin/sshd"


@dataclass
class SshHosts:
    dir: Path
    hosts: list[str]  # root@127.0.0.1:PORT, root@127.0.0.2:PORT
    options: list[str]

    def state(self, name: str) -> Path:
        return self.dir / f"state-{name}"

    @property
    def etc(self) -> Path:
        """One path, a different directory on each host (empty here)."""
        return self.dir / "etc"

    def files(self, name: str) -> Path:
        """What host ``name`` ("a", "b") sees at :attr:`etc`, as this machine sees it."""
        return self.dir / f"etc-{name}"


@pytest.fixture(scope="module")
def ssh_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshHosts]:
    if not os.path.exists(SSHD) or shutil.which("ssh") is None:
        pytest.fail("openssh-server not installed (Debian openssh-server; `make setup` installs it)")
    if os.geteuid() != 0:
        pytest.skip("sshd with a root login needs root")
    top = tmp_path_factory.mktemp("sshd")
    for key in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(top / key)], check=True, timeout=30)
    shutil.copy(top / "client.pub", top / "authorized_keys")
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation directory
    procs, hosts, known = [], [], []
    host_pub = " ".join((top / "host.pub").read_text().split()[:2])
    (top / "etc").mkdir()
    for name, addr in (("a", "127.0.0.1"), ("b", "127.0.0.2")):
        (top / f"etc-{name}").mkdir()
        port = free_port(addr)
        cfg = top / f"sshd-{name}.conf"
        cfg.write_text("\n".join([
            f"Port {port}", f"ListenAddress {addr}", f"HostKey {top / 'host'}",
            f"AuthorizedKeysFile {top / 'authorized_keys'}", "PermitRootLogin prohibit-password",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no",
            f"PidFile {top / f'sshd-{name}.pid'}", f"SetEnv HONE_TEST_HOST={name}", ""]))
        with (top / f"sshd-{name}.log").open("wb") as log:
            # sshd (unshare and sh exec into it) in a mount namespace where etc is etc-NAME
            procs.append(subprocess.Popen(
                ["unshare", "--mount", "--propagation", "private", "sh", "-c", 'mount --bind "$1" "$2" && shift 2 && '
                 'exec "$@"', "sh", str(top / f"etc-{name}"), str(top / "etc"), SSHD, "-D", "-e", "-f", str(cfg)],
                stderr=log, start_new_session=True))
        hosts.append(f"root@{addr}:{port}")
        known.append(f"[{addr}]:{port} {host_pub}")
    (top / "known_hosts").write_text("\n".join(known) + "\n")
    options = [f"IdentityFile={top / 'client'}", f"UserKnownHostsFile={top / 'known_hosts'}",
               "StrictHostKeyChecking=yes"]
    for host in hosts:
        deadline = time.monotonic() + 20
        while subprocess.run(ssh_argv(host, options, ["true"]), capture_output=True, timeout=20).returncode:
            assert time.monotonic() < deadline, f"sshd for {host} did not come up"
            time.sleep(0.2)
    try:
        yield SshHosts(top, hosts, options)
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGKILL)  # sshd and its session children
            p.wait(timeout=10)


def _spec(tmp: Path, ssh: SshHosts, knob: str, command: str = '["true"]') -> Path:
    path = tmp / "hone.yaml"
    path.write_text(f"name: remote\nbenchmark: {{command: {command}}}\nknobs:\n{knob}\n")
    return path


def _script_knob(ssh: SshHosts, hosts: list[str]) -> str:
    state = ssh.dir / "state-$HONE_TEST_HOST"
    return (
        "  - name: level\n    kind: script\n    shell: true\n"
        f"    get: 'cat \"{state}\"'\n    set: 'printf %s \"$value\" > \"{state}\"'\n"
        f"    values: [1, 2, 3, \"x y\"]\n    hosts: {json.dumps(hosts)}\n    ssh_options: {json.dumps(ssh.options)}"
    )


def test_split_host_and_argv_quote_the_remote_side() -> None:
    assert split_host("root@node1:2222") == ("root@node1", "2222")
    assert split_host("node1") == ("node1", None)
    assert split_host("[::1]:22") == ("::1", "22")
    argv = ssh_argv("n1", ["Port=1"], ["tee", "/a b;rm -rf /"])
    assert argv[argv.index("BatchMode=yes") - 1] == "-o"
    assert argv[-1] == "tee '/a b;rm -rf /'" and argv[-3] == "--"


def test_hosts_are_validated(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("benchmark: {command: [\"true\"]}\nknobs:\n"
                   "  - {name: v, kind: sysctl, key: vm.swappiness, range: [0, 100], hosts: ['-oProxyCommand=x']}\n")
    with pytest.raises(SpecError, match=r"hosts"):
        load_spec(bad)
    bad.write_text("benchmark: {command: [\"true\"]}\nknobs:\n"
                   "  - {name: p, kind: param, range: [0, 5], hosts: [node1]}\n")
    with pytest.raises(SpecError, match=r"no hosts on a param knob"):
        load_spec(bad)


def test_a_remote_knob_is_as_dangerous_as_a_local_one(tmp_path: Path) -> None:
    spec = tmp_path / "hone.yaml"
    spec.write_text("benchmark: {command: [\"true\"]}\nknobs:\n"
                    "  - {name: cpu1, kind: sysfs, path: /sys/devices/system/cpu/cpu1/online, values: [0, 1],"
                    " hosts: [node1, node2]}\n")
    with pytest.raises(SpecError, match=r"takes a CPU offline"):
        check_spec(load_spec(spec))  # refused before any ssh connection is tried


def test_apply_on_two_hosts_journals_each_and_rollback_restores(ssh_hosts: SshHosts, hone, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                state_dir: Path) -> None:
    ssh_hosts.state("a").write_text("1")
    ssh_hosts.state("b").write_text("2")
    spec = _spec(tmp_path, ssh_hosts, _script_knob(ssh_hosts, ssh_hosts.hosts))
    res = hone("apply", spec, "--set", "level=x y")
    assert res.code == 0, res.err
    assert ssh_hosts.state("a").read_text() == "x y" and ssh_hosts.state("b").read_text() == "x y"
    originals = [json.loads(line) for line in (state_dir / "journal.jsonl").read_text().splitlines()]
    originals = {r["id"]: r["snapshot"]["value"] for r in originals if r["op"] == "original"}
    assert originals == {f"script:level@{ssh_hosts.hosts[0]}": "1", f"script:level@{ssh_hosts.hosts[1]}": "2"}
    res = hone("rollback")
    assert res.code == 0, res.err
    assert ssh_hosts.state("a").read_text() == "1" and ssh_hosts.state("b").read_text() == "2"


def test_run_with_a_remote_sysfs_knob_restores_after(ssh_hosts: SshHosts, hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # a sysfs knob must name a file under /sys, also on a remote host: the "host" here is
    # this machine, so a real block queue attribute is set and put back
    target = block_readahead()
    if target is None:
        pytest.skip("needs a block device queue in sysfs")
    original = target.read_text().strip()
    other = "4096" if original != "4096" else "2048"
    knob = (f"  - name: ra\n    kind: sysfs\n    path: {target}\n    values: [{original}, {other}]\n"
            f"    hosts: [{json.dumps(ssh_hosts.hosts[1])}]\n    ssh_options: {json.dumps(ssh_hosts.options)}")
    spec = _spec(tmp_path, ssh_hosts, knob, command=json.dumps(["cat", str(target)]))
    res = hone("run", spec, "--set", f"ra={other}", "--json", "-")
    assert res.code == 0, res.err
    assert target.read_text().strip() == original
    doc = json.loads(res.out[res.out.index("{"):])
    assert doc["config"]["ra"] == int(other)
    assert [r["returncode"] for r in doc["runs"]] == [0]


def test_unreachable_host_is_one_clear_error(ssh_hosts: SshHosts, hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dead = f"root@127.0.0.1:{free_port('127.0.0.1')}"
    spec = _spec(tmp_path, ssh_hosts, _script_knob(ssh_hosts, [dead]))
    res = hone("apply", spec, "--set", "level=2")
    assert res.code == 2
    assert f"ssh to {dead} failed" in res.err and "Connection refused" in res.err
    assert "Traceback" not in res.err


def test_one_shared_connection_per_host_and_none_left_after_hone(ssh_hosts: SshHosts, hone,  # type: ignore[no-untyped-def]
                                                                 tmp_path: Path) -> None:
    ssh_hosts.state("a").write_text("1")
    spec = _spec(tmp_path, ssh_hosts, _script_knob(ssh_hosts, ssh_hosts.hosts[:1]))
    log = ssh_hosts.dir / "sshd-a.log"
    before = log.read_text().count("Accepted publickey")
    mark = new_mark()
    control_dir = Path(tempfile.mkdtemp(prefix="h", dir="/tmp"))  # short: a socket path has at most 107 bytes
    try:
        res = hone("apply", spec, "--set", "level=2", env={MARK_ENV: mark, "TMPDIR": str(control_dir)})
        assert res.code == 0, res.err
        assert ssh_hosts.state("a").read_text() == "2"
        # the reads and the write of one hone process share one connection
        assert log.read_text().count("Accepted publickey") - before == 1
        # its ssh connection master (named after its socket in control_dir) stopped with hone
        assert marked(mark) == [] and with_arg(str(control_dir)) == []
        assert list(control_dir.iterdir()) == []  # and took its socket along
    finally:
        for pid, _ in marked(mark) + with_arg(str(control_dir)):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(control_dir, ignore_errors=True)
        hone("rollback")


def _file_knobs(ssh: SshHosts, hosts: list[str], *knobs: str, restart: str = "") -> str:
    """File knobs on ``hosts`` (each knob: "name key values-yaml")."""
    out = []
    for knob in knobs:
        name, key, values = knob.split(" ", 2)
        out.append(f"  - name: {name}\n    kind: file\n    path: {ssh.etc / 'nginx.conf'}\n    key: {key}\n"
                   f"    values: {values}\n    hosts: {json.dumps(hosts)}\n    ssh_options: {json.dumps(ssh.options)}"
                   + (f"\n    restart: {restart}" if restart else ""))
    return "\n".join(out)


NGINX_A = "# host a\nevents {}\nhttp {\n    keepalive_timeout 65;\n    server { listen 8080; }\n}\n"
NGINX_B = "# host b: other bytes\nevents {}\nhttp {\n\tkeepalive_timeout 30;  # short\n\tserver { listen 8080; }\n}\n"


def test_a_file_knob_on_two_hosts_journals_each_and_rollback_restores_both(ssh_hosts: SshHosts, hone,  # type: ignore[no-untyped-def]
                                                                            tmp_path: Path, state_dir: Path) -> None:
    a, b = ssh_hosts.files("a") / "nginx.conf", ssh_hosts.files("b") / "nginx.conf"
    a.write_text(NGINX_A)
    b.write_text(NGINX_B)
    os.chmod(a, 0o640)
    os.chown(b, 65534, 65534)
    for name in ("a", "b"):
        (ssh_hosts.files(name) / "restarts").unlink(missing_ok=True)
    restart = json.dumps(["sh", "-c", f"echo restarted >> {ssh_hosts.etc / 'restarts'}"])
    knobs = _file_knobs(ssh_hosts, ssh_hosts.hosts, "keepalive http.keepalive_timeout [0, 65]", restart=restart)
    spec = _spec(tmp_path, ssh_hosts, knobs)
    res = hone("apply", spec, "--set", "keepalive=0")
    assert res.code == 0, res.err
    assert a.read_text() == NGINX_A.replace("timeout 65;", "timeout 0;")
    assert b.read_text() == NGINX_B.replace("timeout 30;", "timeout 0;")
    assert (a.stat().st_mode & 0o7777, (b.stat().st_uid, b.stat().st_gid)) == (0o640, (65534, 65534))
    # the restart ran once on each host
    assert [(ssh_hosts.files(n) / "restarts").read_text() for n in ("a", "b")] == ["restarted\n"] * 2
    originals = {r["res"]: r for r in (json.loads(x) for x in (state_dir / "journal.jsonl").read_text().splitlines())
                 if r["op"] == "original"}
    res_a, res_b = (f"file:{ssh_hosts.etc / 'nginx.conf'}@{h}" for h in ssh_hosts.hosts)
    assert set(originals) == {res_a, res_b}
    assert base64.b64decode(originals[res_a]["snapshot"]["bytes_b64"]) == NGINX_A.encode()
    assert base64.b64decode(originals[res_b]["snapshot"]["bytes_b64"]) == NGINX_B.encode()
    assert originals[res_a]["snapshot"]["mode"] == 0o640 and originals[res_b]["snapshot"]["uid"] == 65534
    assert ssh_hosts.hosts[0].split(":")[0] in " ".join(originals[res_a]["restarts"][0][0])  # run on its host
    diff = hone("status", "--diff")
    assert f"--- {res_a.removeprefix('file:')} (original)" in diff.out, diff.out
    assert "-    keepalive_timeout 65;" in diff.out and "+    keepalive_timeout 0;" in diff.out
    a.write_text(NGINX_A.replace("65", "66"))  # a change outside hone on host a is undone too
    os.chmod(a, 0o600)
    (ssh_hosts.files("a") / f"{TEMP_PREFIX}nginx.conf.x1y2z3").write_text("half")  # left by a killed hone
    res = hone("rollback")
    assert res.code == 0, res.err
    assert a.read_bytes() == NGINX_A.encode() and b.read_bytes() == NGINX_B.encode()
    assert (a.stat().st_mode & 0o7777, (b.stat().st_uid, b.stat().st_gid)) == (0o640, (65534, 65534))
    assert [(ssh_hosts.files(n) / "restarts").read_text() for n in ("a", "b")] == ["restarted\n" * 2] * 2
    assert sorted(p.name for p in ssh_hosts.files("a").iterdir()) == ["nginx.conf", "restarts"]  # no temp file


def test_a_script_knob_keeps_the_files_its_set_edits_on_each_host_and_rollback_writes_them_back(  # type: ignore[no-untyped-def]
        ssh_hosts: SshHosts, hone, tmp_path: Path, state_dir: Path) -> None:
    conf = ssh_hosts.etc / "server.properties"
    a, b = (ssh_hosts.files(n) / "server.properties" for n in ("a", "b"))
    a_text, b_text = "# broker a\nnum.io.threads=8\n# set by hand\n", "# broker b\nnum.io.threads=4\n"
    a.write_text(a_text)
    b.write_text(b_text)
    os.chmod(a, 0o640)
    os.chown(b, 65534, 65534)
    # a one-way set: its sed also deletes the comments, which no later set can bring back
    knob = ("  - name: io\n    kind: script\n    shell: true\n"
            f"    get: \"sed -n 's/^num.io.threads=//p' {conf}\"\n"
            f"    set: \"sed -i -e 's/^num.io.threads=.*/num.io.threads=$value/' -e '/^#/d' {conf}\"\n"
            f"    files: [{conf}]\n    values: [4, 8, 16]\n"
            f"    hosts: {json.dumps(ssh_hosts.hosts)}\n    ssh_options: {json.dumps(ssh_hosts.options)}")
    spec = _spec(tmp_path, ssh_hosts, knob)
    res = hone("apply", spec, "--set", "io=16")
    assert res.code == 0, res.err
    assert a.read_text() == b.read_text() == "num.io.threads=16\n"
    originals = {r["id"]: r["snapshot"] for r in (json.loads(x) for x in
                                                  (state_dir / "journal.jsonl").read_text().splitlines())
                 if r["op"] == "original"}
    for host, text in zip(ssh_hosts.hosts, (a_text, b_text), strict=True):
        kept = originals[f"script:io@{host}"]
        assert kept["value"] == text.split("=")[1].split("\n")[0]
        assert base64.b64decode(kept["files"][str(conf)]["bytes_b64"]) == text.encode()
    res = hone("rollback")
    assert res.code == 0, res.err
    assert a.read_text() == a_text and b.read_text() == b_text  # the comments too, on each host
    assert a.stat().st_mode & 0o7777 == 0o640 and (b.stat().st_uid, b.stat().st_gid) == (65534, 65534)
    assert hone("status").out.strip() == "nothing changed by hone on this machine"


def test_a_run_renders_two_keys_of_a_remote_file_on_each_host_and_restores(ssh_hosts: SshHosts, hone,  # type: ignore[no-untyped-def]
                                                                            tmp_path: Path) -> None:
    a, b = ssh_hosts.files("a") / "nginx.conf", ssh_hosts.files("b") / "nginx.conf"
    a.write_text(NGINX_A)
    b.write_text(NGINX_B)
    knobs = _file_knobs(ssh_hosts, ssh_hosts.hosts, "keepalive http.keepalive_timeout [0, 65]",
                        'gzip http.gzip ["on", "off"]')
    check = f"grep -q 'timeout 0;' {a} && grep -q 'gzip on;' {a} && grep -q 'timeout 0;' {b} && grep -q 'gzip on;' {b}"
    spec = _spec(tmp_path, ssh_hosts, knobs, command=json.dumps(["sh", "-c", check]))
    res = hone("run", spec, "--set", "keepalive=0", "--set", "gzip=on", "--json", "-")
    assert res.code == 0, res.err
    doc = json.loads(res.out[res.out.index("{"):])
    assert [r["returncode"] for r in doc["runs"]] == [0]  # both keys on both hosts while it ran
    assert a.read_bytes() == NGINX_A.encode() and b.read_bytes() == NGINX_B.encode()


def test_a_remote_key_in_an_included_file_is_edited_and_journaled_there(ssh_hosts: SshHosts, hone,  # type: ignore[no-untyped-def]
                                                                        tmp_path: Path, state_dir: Path) -> None:
    top = ssh_hosts.files("b")
    (top / "conf.d").mkdir(exist_ok=True)
    (top / "nginx.conf").write_text("events {}\nhttp {\n    include conf.d/*.conf;\n}\n")
    site = "server {\n    listen 8080;\n}\n"
    (top / "conf.d" / "site.conf").write_text(site)
    spec = _spec(tmp_path, ssh_hosts, _file_knobs(ssh_hosts, ssh_hosts.hosts[1:], 'listen http.server.listen ["9090"]'))
    res = hone("apply", spec, "--set", "listen=9090")
    assert res.code == 0, res.err
    assert (top / "conf.d" / "site.conf").read_text() == site.replace("8080", "9090")
    records = [json.loads(x) for x in (state_dir / "journal.jsonl").read_text().splitlines()]
    assert [r["res"] for r in records if r["op"] == "original"] == [
        f"file:{ssh_hosts.etc / 'conf.d' / 'site.conf'}@{ssh_hosts.hosts[1]}"]
    assert hone("rollback").code == 0
    assert (top / "conf.d" / "site.conf").read_text() == site


def test_a_remote_write_cut_short_leaves_the_file_as_it_was(ssh_hosts: SshHosts) -> None:
    target = ssh_hosts.files("a") / "cut.conf"
    target.write_text("x = 1\n")
    data = b"x = 2\n"
    # the script announces more bytes than arrive, as when hone dies mid-transfer
    argv = ssh_argv(ssh_hosts.hosts[0], ssh_hosts.options,
                    ["sh", "-c", _WRITE, "sh", str(ssh_hosts.etc / "cut.conf"), str(len(data) + 10), "", "",
                     TEMP_PREFIX])
    res = subprocess.run(argv, input=data, capture_output=True, timeout=30)
    assert res.returncode != 0 and b"received 6 of 16 bytes" in res.stderr
    assert target.read_text() == "x = 1\n"
    assert [p.name for p in ssh_hosts.files("a").iterdir() if p.name.startswith(TEMP_PREFIX)] == []


def test_a_remote_file_knob_needs_an_absolute_path(ssh_hosts: SshHosts, hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    knob = (f"  - {{name: k, kind: file, path: etc/app.conf, key: k, values: [1], hosts: {json.dumps(ssh_hosts.hosts)},"
            f" ssh_options: {json.dumps(ssh_hosts.options)}}}")
    res = hone("apply", _spec(tmp_path, ssh_hosts, knob), "--set", "k=1")
    assert res.code == 2
    assert "expected an absolute path on a remote host, got 'etc/app.conf'" in res.err and "Traceback" not in res.err
