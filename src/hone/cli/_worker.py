"""``hone worker`` (one more machine on a shared study) and ``hone dashboard``."""

from __future__ import annotations

import click

from hone.cli import main
from hone.cli._common import console, err_console, fmt_num, load_checked, safe_study_name, stdout_for_data, write_json
from hone.core.errors import RestoreError
from hone.report.tune_terminal import knob_value


@main.command("worker")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--storage", envvar="HONE_STORAGE", required=True, metavar="URL",
              help="Shared Optuna storage, e.g. postgresql://user@host/db (password from $PGPASSWORD or "
                   "~/.pgpass keeps it out of `ps`). Env: HONE_STORAGE.")
@click.option("--study", "study_name", required=True, metavar="NAME", callback=safe_study_name,
              help="Study to join (created if missing).")
@click.option("--trials", type=click.IntRange(min=1), default=None,
              help="Budget when this worker creates the study (default: the spec's tune.trials); "
                   "a joining worker takes the study's own budget.")
@click.option("--sampler", default=None, help="Sampler (default: the spec's tune.sampler).")
@click.option("--seed", type=int, default=None, help="Base seed (each worker offsets it by its pid).")
@click.option("--heartbeat", "heartbeat_s", type=click.IntRange(1, 600), default=5, show_default=True,
              help="Seconds between heartbeats of the running trial.")
@click.option("--grace", "grace_s", type=click.IntRange(2, 3600), default=20, show_default=True,
              help="Seconds without a heartbeat after which a trial is failed and its config retried.")
@click.option("--json", "json_path", metavar="FILE", help="Write what this worker did as JSON (- = stdout).")
def worker_cmd(spec: str, storage: str, study_name: str, trials: int | None, sampler: str | None,
               seed: int | None, heartbeat_s: int, grace_s: int, json_path: str | None) -> None:
    """Join study NAME in a shared storage and run its trials on this machine until the
    study's budget is spent. Start one on every (identical) machine of the fleet.

    The first worker measures the study's baseline once; `hone tune --resume` confirms
    the winner afterwards. Knobs are journaled on this machine and restored when the
    worker stops; after a kill -9, `hone rollback` here restores them and the trial it
    was running is retried by another worker.
    """
    from hone.fleet.worker import WorkerOptions, run_worker
    from hone.report.dashboard import annotate_trial
    from hone.tune.storage import mask_url

    stdout_for_data(json_path)
    if grace_s <= heartbeat_s:
        raise click.BadParameter("must be larger than --heartbeat", param_hint="--grace")
    loaded = load_checked(spec)
    opts = WorkerOptions(storage=storage, study=study_name, trials=trials, sampler=sampler, seed=seed,
                         heartbeat_s=heartbeat_s, grace_s=grace_s)

    def line(outcome) -> None:  # type: ignore[no-untyped-def]
        config = " ".join(f"{k}={knob_value(v)}" for k, v in outcome.config.items())
        if outcome.state == "complete":
            metrics = " ".join(f"{k}={fmt_num(v)}" for k, v in outcome.means.items())
            console.print(f"trial {outcome.number}: {outcome.elapsed_s:.1f}s {config} -> {metrics}", soft_wrap=True)
        else:
            console.print(f"trial {outcome.number}: FAILED {config}: {outcome.reason}", soft_wrap=True)

    def joined(budget: int, finished: int) -> None:
        err_console.print(f"worker joined study {study_name!r} in {mask_url(storage)}: "
                          f"{finished}/{budget} trials finished", style="dim", soft_wrap=True)

    result = run_worker(loaded, opts, on_trial=line, on_joined=joined, on_finished=annotate_trial)
    console.print(f"worker done: ran {len(result.ran)} trial(s), {len(result.failed)} failed; "
                  f"study {study_name!r} has {result.finished_in_study}/{result.budget} finished"
                  + (f"; re-enqueued {len(result.requeued)} interrupted" if result.requeued else "")
                  + (f"; every one of the {result.space_measured} configurations is measured (the baseline's"
                     " included)" if result.space_measured else ""))
    for problem in result.restore_problems:
        err_console.print(f"not restored: {problem}", style="red", soft_wrap=True)
    if json_path:
        write_json(json_path, {
            "format": "hone-worker/1", "study": result.study, "storage": result.storage, "budget": result.budget,
            "ran": result.ran, "failed": result.failed, "requeued": result.requeued,
            "finished_in_study": result.finished_in_study, "restore_problems": result.restore_problems,
        })
    if result.restore_problems:
        raise RestoreError(f"{len(result.restore_problems)} change(s) could not be restored; they stay in the"
                           " journal", hint="fix the cause and run `hone rollback`")


@main.command("dashboard")
@click.option("--storage", envvar="HONE_STORAGE", default=None, metavar="URL",
              help="Optuna storage (default: sqlite:///<state dir>/studies.db). Env: HONE_STORAGE.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8080, show_default=True, help="Port to listen on.")
def dashboard_cmd(storage: str | None, host: str, port: int) -> None:
    """A live view of the studies in a storage (optuna-dashboard), with hone's raw repeats,
    machines and confirmation verdicts as notes on each trial and study. Ctrl-C stops it."""
    from pathlib import Path

    from hone.core.errors import HoneError, import_extra
    from hone.core.paths import default_storage_url
    from hone.report.dashboard import serve
    from hone.tune.storage import mask_url, open_storage

    import_extra("optuna_dashboard", "dashboard", "hone dashboard")  # before opening anything
    url = storage or default_storage_url()
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).exists():
        raise HoneError(f"no study store at {url}", hint="run `hone tune` first, or give --storage URL")
    rdb = open_storage(url)
    err_console.print(f"dashboard of {mask_url(url)} on http://{host}:{port}/dashboard  (Ctrl-C stops)",
                      soft_wrap=True)
    serve(rdb, host, port)
