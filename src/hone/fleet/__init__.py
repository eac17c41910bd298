"""Fleet: many machines on one study (``hone worker``, ``hone tune --workers``,
``hone dashboard``, whose page is :mod:`hone.report.dashboard`).

Why a folder of its own and not ``tune/fleet.py``: the fleet is plumbing *around* the
tune loop (a cross-machine lock, heartbeats, local worker processes) and the
tune loop must not know about any of it: it imports nothing from here. ``hone.tune.study.run_trials``
runs unchanged inside a worker; the fleet only wraps the study it is given, and ``hone tune
--workers`` hands the tuner a :class:`~hone.fleet.local.LocalWorkers` to run its trials.

Optuna does the coordination (DESIGN: no coordinator of our own): every worker talks to
the same RDB storage (PostgreSQL for several machines).

Storage URLs (credentials, masking, one-line errors) are the study's business:
:mod:`hone.tune.storage`.

* :mod:`~hone.fleet.lock` — one lock per study (``pg_advisory_lock``; ``flock`` for SQLite).
* :mod:`~hone.fleet.worker` — claims (exactly N counted trials for N workers), heartbeats,
  stale trials failed as *interrupted* and their parameters re-enqueued.
* :mod:`~hone.fleet.local` — ``hone tune --workers K``: K worker processes on this machine.

Once per study, not per worker:

* **Baseline** — measured by the first process to take the study lock on a study without
  one (``hone tune`` before it starts local workers; else the first ``hone worker``),
  under the lock, so exactly once; everyone else reuses it (it normalises the weighted
  objective). Its machine fingerprint is stored with it.
* **Confirmation** — never by workers. ``hone tune`` confirms after its workers finish;
  for a fleet of ``hone worker``\\ s, run ``hone tune SPEC --storage URL --study NAME
  --resume --trials N`` on one machine when the budget is spent: it re-measures the top
  candidates against *its own* baseline in interleaved rounds, on that machine.

Every trial carries ``host``, ``pid``, ``machine_id`` and the full ``fingerprint``.
"""
