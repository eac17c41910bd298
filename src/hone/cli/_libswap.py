"""``hone libswap``: run a binary on another glibc or malloc — verified, measurable, reversible."""

from __future__ import annotations

from pathlib import Path

import click

from hone.cli import main
from hone.cli._common import console, err_console, stdout_for_data, write_json
from hone.core.errors import HoneError
from hone.linking.allocators import ALLOCATOR_NAMES
from hone.linking.glibc import obtain_glibc
from hone.linking.patch import make_alloc_variant, make_glibc_variant
from hone.report import libswap_terminal
from hone.runtime.show import show_binary, show_pid

_SMOKE_HELP = "Smoke command run after patching; {bin} is the patched binary (default: '{bin} --version')."


@main.group("libswap")
def libswap_group() -> None:
    """Run a binary on another glibc or allocator (patchelf; verified by its own loader).

    \b
      hone libswap glibc ./server libfoo.so --version 2.41     # patched copy, verified
      hone libswap glibc ./server --version 2.41 --in-place    # journaled; `hone rollback` undoes
      hone libswap alloc ./server --with jemalloc              # copy with libjemalloc NEEDED
      hone libswap show ./server   |   hone libswap show --pid 1234

    glibc packages are fetched from Debian suites (2.41: trixie, 2.36: bookworm, 2.31:
    bullseye) with a private apt configuration into $HONE_CACHE_DIR (default
    /var/cache/hone for root, ~/.cache/hone otherwise); the system's glibc and apt sources
    are never touched. Measure the variants with `hone compare`.
    """


@libswap_group.command("glibc")
@click.argument("binary", type=click.Path(dir_okay=False))
@click.argument("libs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--version", "which", required=True, metavar="2.41|2.31|SUITE|DIR",
              help="glibc release, Debian suite name, or a directory holding libc.so.6 + ld-linux.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Variant directory (default: <state>/libswap/<binary>-glibc-<version>).")
@click.option("--in-place", is_flag=True, help="Patch BINARY and LIBS themselves after a checksummed, "
              "journaled backup (undo: `hone rollback`).")
@click.option("--smoke", default="{bin} --version", show_default=True, help=_SMOKE_HELP)
@click.option("--no-smoke", is_flag=True, help="Skip the smoke command.")
@click.option("--json", "json_path", metavar="FILE", help="Write the variant report as JSON (- = stdout).")
def glibc_cmd(binary: str, libs: tuple[str, ...], which: str, out_dir: str | None, in_place: bool, smoke: str,
              no_smoke: bool, json_path: str | None) -> None:
    """Make BINARY (and the bundled LIBS it ships) run on another glibc.

    The binary gets the private ld-linux as interpreter and a DT_RPATH (variant dir, glibc
    dir, its own rpath); LIBS get the same DT_RPATH. Before anything is written, the
    GLIBC_2.xx symbol versions needed by the binary, LIBS and the libraries it loads are
    checked against the target glibc (too old → refused, naming the missing versions).
    After patching, the binary's own loader must resolve every glibc library inside the
    private glibc, and the smoke command must succeed.
    """
    stdout_for_data(json_path)
    if in_place and out_dir:
        raise HoneError("--in-place and --out exclude each other")
    glibc = obtain_glibc(which)
    err_console.print(f"glibc {glibc.version} from {glibc.origin}: {glibc.lib_dir}", style="dim")
    smoke_cmd = None if no_smoke else smoke
    paths = [Path(p) for p in libs]
    if in_place:
        from hone.runtime.inplace import patch_glibc_in_place

        report = patch_glibc_in_place(Path(binary), paths, glibc, smoke=smoke_cmd)
    else:
        report = make_glibc_variant(Path(binary), paths, glibc, Path(out_dir) if out_dir else None, smoke=smoke_cmd)
    console.print(libswap_terminal.render(report.to_json()))
    if json_path:
        write_json(json_path, report.to_json())


@libswap_group.command("alloc")
@click.argument("binary", type=click.Path(dir_okay=False))
@click.option("--with", "name", required=True, type=click.Choice(ALLOCATOR_NAMES), help="Allocator to use.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Variant directory (default: <state>/libswap/<binary>-alloc-<name>).")
@click.option("--no-install", is_flag=True, help="Fail instead of installing the allocator's Debian package.")
@click.option("--smoke", default="{bin} --version", show_default=True, help=_SMOKE_HELP)
@click.option("--no-smoke", is_flag=True, help="Skip the smoke command.")
@click.option("--json", "json_path", metavar="FILE", help="Write the variant report as JSON (- = stdout).")
def alloc_cmd(binary: str, name: str, out_dir: str | None, no_install: bool, smoke: str, no_smoke: bool,
              json_path: str | None) -> None:
    """Make a copy of BINARY that loads another malloc (patchelf --add-needed).

    For benchmarks, a `library` knob in a spec does the same without a copy: it sets
    LD_PRELOAD for the benchmark only (values glibc, jemalloc, tcmalloc, mimalloc), so
    `hone compare SPEC --variant je:malloc=jemalloc` and `hone tune` treat the allocator
    as a knob.
    """
    stdout_for_data(json_path)
    report = make_alloc_variant(Path(binary), name, Path(out_dir) if out_dir else None, install=not no_install,
                                smoke=None if no_smoke else smoke)
    console.print(libswap_terminal.render(report.to_json()))
    if json_path:
        write_json(json_path, report.to_json())


@libswap_group.command("show")
@click.argument("binary", required=False, type=click.Path(dir_okay=False))
@click.option("--pid", type=int, default=None, help="A running process instead of a binary.")
@click.option("--json", "json_path", metavar="FILE", help="Write the answer as JSON (- = stdout).")
def show_cmd(binary: str | None, pid: int | None, json_path: str | None) -> None:
    """Which glibc and allocator BINARY (its own loader's view) or --pid PID (its maps) uses."""
    if (binary is None) == (pid is None):
        raise HoneError("give exactly one of BINARY or --pid PID")
    info = show_pid(pid) if pid is not None else show_binary(binary)  # type: ignore[arg-type]
    if json_path:
        write_json(json_path, info.to_json())
        if json_path == "-":
            return
    console.print(libswap_terminal.render_show(info.to_json()))


@libswap_group.command("fetch")
@click.argument("which", metavar="2.41|2.31|SUITE")
def fetch_cmd(which: str) -> None:
    """Download and unpack a glibc into the cache; print its library directory."""
    glibc = obtain_glibc(which)
    err_console.print(f"glibc {glibc.version} from {glibc.origin}", style="dim")
    click.echo(str(glibc.lib_dir))
