"""Command line: argument parsing only; each verb calls one function of the modules.

Why a package and not one ``cli.py``: one file per verb (``_run.py``,
``_compare.py`` …) so a verb is added without touching the others, like hyperfine's
exporters. This file holds the group, the verb list and the one place user errors are
turned into a single line and exit code 2.
"""

from __future__ import annotations

import importlib
import signal
import sys
from typing import Any

import click

from hone import __version__
from hone.core.errors import HoneError, SpecError
from hone.core.process import shutdown

# Verb → the module that registers it on ``main``. Modules are imported only when their
# verb runs (or for --help): importing every verb up front cost ~2 s of CPU per process
# (scipy, optuna, plotly), which every fleet worker and test paid.
_VERBS = {
    "run": "hone.cli._run",
    "apply": "hone.cli._apply",
    "status": "hone.cli._apply",
    "rollback": "hone.cli._apply",
    "export": "hone.cli._persist",
    "verify": "hone.cli._persist",
    "preset": "hone.cli._preset",
    "compare": "hone.cli._compare",
    "report": "hone.cli._report",
    "tune": "hone.cli._tune",
    "worker": "hone.cli._worker",
    "dashboard": "hone.cli._worker",
    "pgo": "hone.cli._pgo",
    "libswap": "hone.cli._libswap",
    "profile": "hone.cli._diagnose",
    "flame": "hone.cli._diagnose",
    "doctor": "hone.cli._diagnose",
    "adapt": "hone.cli._adapt",
    "analyse": "hone.cli._analyse",
}


class _LazyVerbs(click.Group):
    """A click group that imports a verb's module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(_VERBS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _VERBS:
            importlib.import_module(_VERBS[cmd_name])
        return self.commands.get(cmd_name)


@click.group(cls=_LazyVerbs, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="hone")
def main() -> None:
    """hone — measure, diagnose, tune and rebuild Linux programs.

    Every change hone makes to the machine is journaled first; `hone rollback` puts it
    all back, even after kill -9. State lives in $HONE_STATE_DIR (default /var/lib/hone
    for root).
    """


def _on_sigterm(signum: int, frame: Any) -> None:
    # Unwind like Ctrl-C so every `finally` restores the knobs it changed.
    raise KeyboardInterrupt


def _ignore(signum: int, frame: Any) -> None:
    pass


def _stop_children() -> None:
    """Stop whatever hone started that still runs; every exit path of :func:`run` ends here."""
    # A second Ctrl-C or SIGTERM must not cut this short. A Python handler, not SIG_IGN:
    # the commands the exit hooks run (ssh -O exit) would inherit an ignored signal.
    previous = {sig: signal.signal(sig, _ignore) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        stopped = shutdown()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if stopped:
        click.echo(f"hone: stopped {len(stopped)} process(es) it had started: {', '.join(stopped)}", err=True)


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return the exit code (used by tests and ``main``)."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _dispatch(argv)
    finally:
        _stop_children()


def _dispatch(argv: list[str] | None) -> int:
    try:
        main.main(args=argv, prog_name="hone", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.UsageError as exc:
        # One line, like every other user error; the verb's --help has the rest.
        verb = f"{exc.ctx.command_path} --help" if exc.ctx else "hone --help"
        click.echo(f"hone: error: {exc.format_message()}", err=True)
        click.echo(f"hint: {verb}", err=True)
        return 2
    except click.ClickException as exc:
        exc.show()
        return 2
    except click.exceptions.Abort:
        click.echo("hone: interrupted", err=True)
        return 130
    except SpecError as exc:
        click.echo(exc.message, err=True)
        if exc.hint:
            click.echo(f"hint: {exc.hint}", err=True)
        return exc.exit_code
    except HoneError as exc:
        click.echo(f"hone: error: {exc.message}", err=True)
        if exc.hint:
            click.echo(f"hint: {exc.hint}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("hone: interrupted (knobs restored)", err=True)
        return 130
    return 0


def entry() -> None:
    sys.exit(run())


__all__ = ["entry", "main", "run"]
