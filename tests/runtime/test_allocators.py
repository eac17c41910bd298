"""Allocator variants: a copy with the allocator NEEDED, the ``library`` knob (LD_PRELOAD for
the benchmark only), `hone compare` across allocators, and `hone libswap show --pid`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hone.core.errors import KnobError
from hone.linking.allocators import ALLOCATORS
from hone.linking.elf import read_elf
from hone.run.configure import Configurator
from hone.spec import load_spec
from tests.linking.conftest import build_c, needs_patchelf

pytestmark = [pytest.mark.integration]

CHURN = r"""
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 200000;
    void *slots[1024] = {0};
    unsigned x = 12345; size_t total = 0;
    for (long i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        unsigned k = (x >> 8) & 1023;
        free(slots[k]);
        size_t sz = 16 + ((x >> 4) % 2048);
        slots[k] = malloc(sz);
        memset(slots[k], (int)i, 16);
        total += sz;
    }
    for (int k = 0; k < 1024; k++) free(slots[k]);
    printf("bytes: %zu\n", total);
    return 0;
}
"""

have_all = pytest.mark.skipif(not all(a.path.exists() for a in ALLOCATORS.values()),
                              reason="allocator packages not installed (deps/apt-packages.txt)")


@pytest.fixture(scope="module")
def churn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not Path("/usr/bin/gcc").exists():
        pytest.skip("gcc not installed")
    return build_c(tmp_path_factory.mktemp("churn"), "churn", CHURN)


def _spec(tmp_path: Path, churn: Path) -> Path:
    spec = tmp_path / "hone.yaml"
    spec.write_text(
        "name: churn\n"
        f"benchmark: {{command: ['{churn}', '300000'], timeout: 60}}\n"
        "metrics: [{name: cpu_time}]\n"
        "knobs:\n"
        "  - {name: malloc, kind: library, values: [glibc, jemalloc, tcmalloc, mimalloc], default: glibc}\n"
    )
    return spec


@have_all
def test_library_knob_sets_ld_preload_for_the_benchmark_only(tmp_path: Path, churn: Path) -> None:
    loaded = load_spec(_spec(tmp_path, churn))
    conf = Configurator(loaded)
    assert conf.apply({"malloc": "jemalloc"}).env == {"LD_PRELOAD": str(ALLOCATORS["jemalloc"].path)}
    assert "LD_PRELOAD" not in conf.apply({"malloc": "glibc"}).env
    assert "LD_PRELOAD" not in conf.apply({}).env  # default glibc
    assert "LD_PRELOAD" not in os.environ or os.environ["LD_PRELOAD"] != str(ALLOCATORS["jemalloc"].path)


def test_library_knob_with_a_missing_file_is_a_knob_error(tmp_path: Path, churn: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(f"benchmark: {{command: ['{churn}']}}\n"
                    "knobs: [{name: lib, kind: library, values: [glibc, /nonexistent/libx.so]}]\n")
    with pytest.raises(KnobError, match="does not exist"):
        Configurator(load_spec(spec)).apply({"lib": "/nonexistent/libx.so"})


@have_all
def test_compare_across_allocators(hone, tmp_path: Path, churn: Path) -> None:
    spec = _spec(tmp_path, churn)
    res = hone("compare", spec, "--variant", "glibc:malloc=glibc", "--variant", "jemalloc:malloc=jemalloc",
               "--variant", "tcmalloc:malloc=tcmalloc", "--variant", "mimalloc:malloc=mimalloc",
               "--rounds", "4", "--warmup", "0", "--seed", "1", "--export-json", tmp_path / "c.json",
               timeout=240)
    assert res.code == 0, res.err
    for name in ("glibc", "jemalloc", "tcmalloc", "mimalloc"):
        assert name in res.out
    data = json.loads((tmp_path / "c.json").read_text())
    text = json.dumps(data)
    assert "jemalloc" in text and "mimalloc" in text


@have_all
@needs_patchelf
def test_alloc_variant_loads_the_allocator_first(hone, tmp_path: Path, churn: Path) -> None:
    out = tmp_path / "je"
    res = hone("libswap", "alloc", churn, "--with", "jemalloc", "--out", out, "--smoke", "{bin} 1000")
    assert res.code == 0, res.err
    variant = out / "churn"
    assert read_elf(variant).needed[0] == "libjemalloc.so.2"
    assert read_elf(churn).needed == ["libc.so.6"]  # original untouched
    run = subprocess.run([str(variant), "1000"], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0 and run.stdout.startswith("bytes:")
    shown = hone("libswap", "show", variant, "--json", "-")
    info = json.loads(shown.out)
    assert info["allocator"] == "jemalloc" and info["glibc_version"] == "2.36"


@have_all
def test_show_pid_reports_preloaded_allocator(hone) -> None:
    env = {**os.environ, "LD_PRELOAD": str(ALLOCATORS["mimalloc"].path)}
    proc = subprocess.Popen([sys.executable, "-c", "import time; print('up', flush=True); time.sleep(30)"],
                            env=env, stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"up"
        res = hone("libswap", "show", "--pid", str(proc.pid), "--json", "-")
        assert res.code == 0, res.err
        info = json.loads(res.out)
        assert info["allocator"] == "mimalloc" and info["how"] == "LD_PRELOAD"
        assert info["glibc_version"] == "2.36" and info["private_glibc"] is False
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_show_rejects_both_binary_and_pid(hone) -> None:
    res = hone("libswap", "show", "/usr/bin/sort", "--pid", "1")
    assert res.code == 2 and "exactly one of BINARY or --pid" in res.err
