#!/usr/bin/env python3
"""Build seekread twice into build/:

* ``seekread`` is linked against Debian bullseye's glibc 2.31 (libc6 + libc6-dev fetched
  into hone's cache with a private apt config). It needs nothing newer than GLIBC_2.17,
  so the *same bytes* run on 2.31, on this system's 2.36 and on 2.41: only the C library
  differs between the arms of the comparison.
* ``seekread-host`` is a plain build on this system (needs GLIBC_2.34): `hone libswap
  glibc build/seekread-host --version 2.31` is refused, naming GLIBC_2.34.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hone.linking.cache import runtime_cache_dir
from hone.linking.debian import SuiteRepo, unpack_deb
from hone.linking.glibc import obtain_glibc

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"


def sh(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True, timeout=300).stdout.strip()


def main() -> int:
    BUILD.mkdir(exist_ok=True)
    src = HERE / "seekread.c"
    sh("gcc", "-O2", "-pthread", "-o", str(BUILD / "seekread-host"), str(src))

    glibc = obtain_glibc("2.31")
    deb = SuiteRepo("bullseye").fetch("libc6-dev")
    dev = unpack_deb(deb, runtime_cache_dir() / "glibc" / deb.stem)
    crt = next(dev.glob("usr/lib/*-linux-gnu/Scrt1.o")).parent
    obj = BUILD / "seekread.o"
    sh("gcc", "-O2", "-pthread", "-c", "-o", str(obj), str(src))
    lib = glibc.lib_dir
    sh("gcc", "-nostdlib", "-o", str(BUILD / "seekread"),
       str(crt / "Scrt1.o"), str(crt / "crti.o"), sh("gcc", "-print-file-name=crtbeginS.o"), str(obj),
       str(lib / "libpthread.so.0"), str(lib / "libc.so.6"), str(crt / "libc_nonshared.a"),
       str(lib / glibc.interpreter.name), sh("gcc", "-print-libgcc-file-name"),
       sh("gcc", "-print-file-name=crtendS.o"), str(crt / "crtn.o"),
       "-Wl,--dynamic-linker=/lib64/ld-linux-x86-64.so.2")
    obj.unlink()
    print(f"built {BUILD / 'seekread'} (links against glibc 2.31) and {BUILD / 'seekread-host'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
