"""Configurations the user wants measured first (``tune.start``, ``--start-from``, ``--start``).

A user who pays an hour per benchmark run often knows a candidate already: a vendor's
recommended settings, a tuned or A-Tune profile, last release's winner. Each is a trial of its
own before the sampler's: the knobs it names at its values, every other knob at its current
value. They are checked against the knobs' domains before anything runs (exit 2 naming the
file, line and knob), queued once per study (Optuna's ``enqueue_trial``; a ``--resume`` does
not queue them again) and counted like any trial, in ``--trials`` and ``--max-runs``; hone's GP
keeps its Latin-hypercube starts whole after them. One that is the current configuration, or a
repeat of an earlier one, is not measured again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import optuna

from hone.core.errors import HoneError
from hone.run.configure import knob_value, parse_assignments
from hone.spec.loader import LoadedSpec
from hone.spec.models import Scalar
from hone.tune.gp import ATTR_START
from hone.tune.space import SearchSpace


def recommended_values(loaded: LoadedSpec, data: dict[str, Any], source: str, spec_path: str) -> dict[str, Scalar]:
    """A validated ``hone tune`` result's recommendation, typed by ``loaded``'s knobs. Raises
    HoneError naming the result's field when a knob is not the spec's or a value is outside its
    domain, or when the result recommends keeping the current configuration."""
    recommended = data["recommended"]
    if recommended is None:
        raise HoneError(f"{source}: field 'recommended' is null: the tune kept the current configuration"
                        f" ({data.get('verdict')})")
    values: dict[str, Scalar] = {}
    for name, value in recommended.items():
        try:
            knob = loaded.spec.knob(name)
        except KeyError as exc:
            raise HoneError(f"{source}: field 'recommended.{name}': {exc.args[0]} in {spec_path}") from None
        try:
            values[name] = knob.coerce(value)
        except ValueError as exc:
            raise HoneError(f"{source}: field 'recommended.{name}': {exc}") from None
    return values


def start_configs(loaded: LoadedSpec, assignments: Sequence[str],
                  results: Sequence[tuple[str, dict[str, Any]]] = ()) -> list[dict[str, Scalar]]:
    """The spec's ``tune.start`` configurations, then the recommendations of ``--start-from``
    results ((file, its validated data)), then one of ``--start NAME=VALUE`` assignments, typed
    and checked. Raises HoneError (the spec's file and line, the result's field, or the flag) on
    a knob that is not the spec's or not searched, or a value outside its domain."""
    out: list[dict[str, Scalar]] = []
    for i, config in enumerate(loaded.spec.tune.start):
        if not config:
            raise loaded.error(("tune", "start", i), "expected knob: value pairs, got an empty mapping")
        typed: dict[str, Scalar] = {}
        for name, raw in config.items():
            try:
                typed[name] = knob_value(loaded, name, raw)
                _searched(loaded, name)
            except ValueError as exc:
                raise loaded.error(("tune", "start", i, name), str(exc)) from None
        out.append(typed)
    for source, data in results:
        out.append(recommended_values(loaded, data, source, str(loaded.path)))
        for name in out[-1]:
            try:
                _searched(loaded, name)
            except ValueError as exc:
                raise HoneError(f"{source}: field 'recommended.{name}': {exc}") from None
    if assignments:
        out.append(parse_assignments(loaded, list(assignments), flag="--start"))
        for name, value in out[-1].items():
            try:
                _searched(loaded, name)
            except ValueError as exc:
                raise HoneError(f"--start {name}={value}: {exc}") from None
    return out


def _searched(loaded: LoadedSpec, name: str) -> None:
    """ValueError unless hone tune searches knob ``name`` (a start cannot set a knob it does not)."""
    knob = loaded.spec.knob(name)
    if not knob.searchable:
        why = "it has no values or range" if knob.type is None else "it is marked dangerous"
        raise ValueError(f"knob {name} is not searched: {why}")


def queue_starts(study: optuna.Study, space: SearchSpace, starts: list[dict[str, Scalar]],
                 baseline: dict[str, Any]) -> list[str]:
    """Queue each start (over the baseline's current values) as the study's next trials, on a
    study with no trial yet; returns what to say about each."""
    trials = study.get_trials(deepcopy=False)
    if not starts or any(ATTR_START in t.user_attrs for t in trials):
        return []  # none, or queued when the study began (a --resume)
    if trials:
        return ["start configurations not queued: the study has trials already (starts are queued when a study "
                "begins)"]
    current = dict(baseline.get("config", {}))
    seen = [space.params_of(current)]
    said = []
    for i, values in enumerate(starts, 1):
        shown = " ".join(f"{k}={v}" for k, v in values.items())
        params = space.params_of(current | values)
        if params is None:
            bad = [d.name for d in space.dimensions if space.params_of(current | values, only=[d.name]) is None]
            mine = [n for n in bad if n in values]
            said.append(f"start {i} ({shown}) not measured: " + (
                f"{', '.join(mine)} not on the searched grid" if mine else
                f"the current value of {', '.join(bad)} is outside the searched values; name it in the start"))
            continue
        if params in seen:
            said.append(f"start {i} ({shown}) not measured: " + (
                "it is the current configuration, measured as the baseline" if params == seen[0]
                else "the same configuration as an earlier start"))
            continue
        seen.append(params)
        study.enqueue_trial(params, user_attrs={ATTR_START: i}, skip_if_exists=False)
        said.append(f"start {i} queued as a trial of its own: {shown}")
    return said
