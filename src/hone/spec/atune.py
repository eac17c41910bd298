"""A-Tune's client/server YAML pair, read as-is and translated into a hone :class:`Spec`.

Client (``atune-adm tuning --detail CLIENT.yaml``): ``project``, ``engine``,
``iterations``, ``random_starts``, ``benchmark`` (a shell command), ``evaluations[]`` with
``name`` and ``info.{get, type, weight, threshold}``. ``type: positive`` means smaller is
better (minimize), ``negative`` larger is better (maximize). Server: ``project``,
``maxiterations``, ``startworkload``, ``stopworkload``, ``object[]`` with ``name`` and
``info.{desc, get, set, needrestart, type, scope, step, items, options, dtype}``.

Where A-Tune's own semantics are broken hone does the right thing, on purpose:

* ``get`` commands: A-Tune pastes the benchmark output into the shell text
  (``echo '$out' | …``) — output containing a quote breaks the command or runs code.
  hone runs ``get`` under ``sh -c`` with the output in the variable ``out`` (and on stdin);
  every ``$out`` / ``${out}`` is bound to that variable by its quoting context
  (:mod:`hone.core.shell_text`): ``'$out'`` becomes ``"$out"``, a reference inside a longer
  single-quoted string closes the quote around ``"$out"``. The data is never parsed as code.
* ``set`` commands get the value the same way from the variable ``value``: ``$value`` →
  ``"$value"`` (one argument), and ``sed -i 's/x .*/x  $value/g' f`` (A-Tune's redis
  idiom) → ``sed -i 's/x .*/x  '"$value"'/g' f``: sed gets the value, not pasted text.
* discrete integer ranges (``scope`` + ``step``) stay *ordered* integer ranges; A-Tune
  turns them into unordered categories. ``items`` join the range as ordered values (alone,
  they are the values). A discrete ``scope`` of several ``[low, high]`` pairs is their union,
  as A-Tune's optimizer reads it; an odd one (A-Tune drops its last entry) is refused.
* ``type: continuous`` with ``dtype: int`` is an integer range, as in A-Tune's optimizer (a
  float pasted by an integer ``sed`` would be cut in two and could not be put back).
* continuous ranges are float64, not A-Tune's float32 (which rounds 107374182400).
* a discrete float ``scope`` is a grid of ``step`` (A-Tune's 0.1 when none is given) from
  ``low`` up to and including ``high`` when it lies on the grid (A-Tune's ``arange`` leaves
  ``high`` out).
* ``iterations`` (else the server's ``maxiterations``) is hone's run budget
  (``tune.max_runs``), not its trials: A-Tune runs the benchmark once per iteration, so it
  counts benchmark runs; hone's budget pays for every run — the baseline and the
  confirmation too — and within it measures each configuration once.
* the baseline is measured ``repeats`` times (A-Tune measures once), and the winner must
  survive confirmation.
* ``threshold`` on an evaluation becomes a constraint: ``>= threshold`` for maximized
  metrics, ``<= threshold`` for minimized ones (infeasible trials are never recommended).
* the objective is A-Tune's weighted sum of % change against the baseline; a metric whose
  baseline is 0 uses its absolute change (A-Tune aborts).
* ``needrestart: true`` makes the knob ``restart: service`` and ``stopworkload`` +
  ``startworkload`` the service's ``restart`` command: one stop/start per configuration
  after all of its sets (A-Tune stops and starts the workload once per knob).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hone.core.errors import SpecError
from hone.core.shell_text import ShellTextError, rewrite
from hone.spec._yaml import Loc, LocatedYaml, format_loc, load_located
from hone.spec.loader import LoadedSpec, spec_error_from_validation
from hone.spec.models import Spec, _show, check_name

#: A-Tune engine names → hone samplers. A-Tune's "bayes" is a GP: hone's own ("gp", also
#: hone's default, used for the engines it does not have).
ENGINES = {
    "bayes": "gp", "gbrt": "auto", "forest": "auto", "extraTrees": "auto", "tpe": "tpe",
    "random": "random", "lhs": "qmc", "abtest": "grid", "gridsearch": "grid", "traverse": "grid",
}
CLIENT_KEYS = {"project", "engine", "iterations", "random_starts", "benchmark", "evaluations",
               "feature_filter_engine", "feature_filter_cycle", "feature_filter_iters", "split_count",
               "feature_filter_count", "feature_selector", "select_feature", "prj_name", "sel_feature"}
SERVER_KEYS = {"project", "maxiterations", "startworkload", "stopworkload", "object"}
OBJECT_INFO_KEYS = {"desc", "get", "set", "needrestart", "type", "scope", "step", "items", "options", "dtype",
                    "ref"}
MAX_VALUES = 2000  # above this a discrete range stays a range and ``items`` are dropped
ATUNE_FLOAT_STEP = 0.1  # A-Tune optimizer's step for a discrete float scope without one



def quote_var(text: str, var: str) -> str:
    """Every ``$var`` / ``${var}`` reference (bare, double- or single-quoted) as a quoted
    reference to the shell variable ``var``: the shell expands it, the data is never code.
    Raises ShellTextError where no expansion can happen (``<<'EOF'``, ``$'…'``)."""
    return rewrite(text, [var], style="dollar", what="").text


def _quoted(src: LocatedYaml, loc: Loc, text: str, var: str) -> str:
    """:func:`quote_var`, with an error pointing at the A-Tune file's line."""
    try:
        return quote_var(text, var)
    except ShellTextError as exc:
        raise _err(src, loc, exc.message) from None


def _err(src: LocatedYaml, loc: Loc, message: str) -> SpecError:
    return SpecError(f"{src.path}:{src.line_of(loc)}: {format_loc(loc)}: {message}")


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("true", "yes", "1", "on")


def _number(text: Any) -> int | float | None:
    if isinstance(text, bool):
        return None
    if isinstance(text, int | float):
        return text
    try:
        f = float(str(text))
    except ValueError:
        return None
    return int(f) if f.is_integer() and "." not in str(text) else f


def _step(info: dict[str, Any], loc: Loc, src: LocatedYaml, integer: bool) -> int | float | None:
    """The object's ``step`` (None when not given): a positive number, an integer for integer
    knobs. Anything else is refused: a step hone guessed would search another grid."""
    raw = info.get("step")
    if raw is None or raw == "":
        return None
    v = _number(raw)
    if v is None or v <= 0 or (integer and not float(v).is_integer()):
        raise _err(src, (*loc, "info", "step"),
                   f"expected a positive {'integer' if integer else 'number'}, got {_show(raw)}")
    return int(v) if integer else float(v)


def knob_from_object(obj: Any, i: int, src: LocatedYaml, server: dict[str, Any]) -> dict[str, Any]:
    """One server ``object`` as a hone script-knob mapping."""
    loc: Loc = ("object", i)
    if not isinstance(obj, dict) or "name" not in obj or not isinstance(obj.get("info"), dict):
        raise _err(src, loc, "expected name: and info: {get, set, type, …}")
    info = obj["info"]
    for key in info:
        if str(key).lower() == "except":  # A-Tune's cluster mode: hosts that must not set this knob
            raise _err(src, (*loc, "info", key), f"hone tunes an A-Tune pair on this machine only, so it cannot tell "
                       f"whether {_show(info[key])} includes it; expected no Except (drop the key, or the knob if "
                       "this machine must not set it)")
        if key not in OBJECT_INFO_KEYS:
            expected = ", ".join(sorted(OBJECT_INFO_KEYS))
            raise _err(src, (*loc, "info", key), f"unknown key (expected one of: {expected})")
    for key in ("get", "set"):
        if not info.get(key):
            raise _err(src, (*loc, "info"), f"required key {key} missing")
    set_cmd = _quoted(src, (*loc, "info", "set"), str(info["set"]), "value")
    knob: dict[str, Any] = {"name": str(obj["name"]), "kind": "script", "get": str(info["get"]), "set": set_cmd,
                            "shell": True}
    if files := sed_targets(str(info["set"])):  # kept whole: a one-way sed is still put back
        knob["files"] = files
    if _truthy(info.get("needrestart", False)) and _workload_restart(server):
        knob["restart"] = "service"  # one stop/start per configuration, after all of its sets
    if info.get("desc"):
        knob["description"] = str(info["desc"])
    kind = str(info.get("type", "discrete")).strip().lower()
    dtype = str(info.get("dtype", "string" if info.get("options") else "int")).strip().lower()
    options = info.get("options")
    scope = info.get("scope")
    items = [v for v in (info.get("items") or []) if v is not None and v != ""]
    if options:
        values = [_number(v) if dtype in ("int", "float") else str(v) for v in options]
        if any(v is None for v in values):
            raise _err(src, (*loc, "info", "options"), f"expected {dtype} options, got {_show(options)}")
        knob["values"] = values
        return knob
    if scope is None and items and kind != "continuous":  # A-Tune: items alone are the values
        extra = [_number(v) for v in items]
        if any(v is None or (dtype == "int" and not isinstance(v, int)) for v in extra) \
                or dtype not in ("int", "float"):
            raise _err(src, (*loc, "info", "items"), f"expected numbers, got {_show(items)}")
        knob["values"] = sorted(set(extra))  # type: ignore[type-var]
        return knob
    floating = dtype == "float" or (kind == "continuous" and dtype != "int")
    several = isinstance(scope, list) and len(scope) > 2 and kind != "continuous" and not floating
    if not (isinstance(scope, list) and (len(scope) == 2 or (several and len(scope) % 2 == 0))):
        if several:
            raise _err(src, (*loc, "info", "scope"), f"A-Tune reads a discrete scope as [low, high] pairs and would "
                       f"drop the last of {_show(scope)}; expected pairs, or options: [...] for a list of values")
        raise _err(src, (*loc, "info", "scope"), f"expected scope: [low, high] or options: [...], got {_show(scope)}")
    bounds = [_number(v) for v in scope]
    if any(v is None for v in bounds):
        raise _err(src, (*loc, "info", "scope"), f"expected numbers, got {_show(scope)}")
    lo, hi = bounds[0], bounds[1]
    assert lo is not None and hi is not None
    if floating:
        knob.update(type="float", range=[float(lo), float(hi)])
        step_f = _step(info, loc, src, integer=False)
        if kind != "continuous":  # A-Tune's discrete float grid: its step, else 0.1
            knob["step"] = step_f or ATUNE_FLOAT_STEP
        elif step_f:
            knob["step"] = step_f
        return knob
    # integers: A-Tune's `continuous` + `dtype: int` is an integer range too (its optimizer
    # makes it an integer dimension); a float there would be pasted into an integer setting
    step = int(_step(info, loc, src, integer=True) or 1) if kind != "continuous" else 1
    if len(bounds) > 2:  # several [low, high] ranges: A-Tune's union of them, as ordered values
        union: set[int] = set()
        for a, b in zip(bounds[::2], bounds[1::2], strict=True):
            union |= set(range(int(a), int(b) + 1, step))  # type: ignore[arg-type]
        union |= {int(v) for v in (_number(x) for x in items) if v is not None}
        if len(union) > MAX_VALUES:
            raise _err(src, (*loc, "info", "scope"), f"expected at most {MAX_VALUES} values in all, got {len(union)}")
        knob["values"] = sorted(union)
        return knob
    n = (int(hi) - int(lo)) // step + 1
    if items and n + len(items) <= MAX_VALUES:
        extra = [_number(v) for v in items]
        if any(v is None for v in extra):
            raise _err(src, (*loc, "info", "items"), f"expected numbers, got {_show(items)}")
        values = sorted(set(range(int(lo), int(hi) + 1, step)) | {int(v) for v in extra if v is not None})
        knob["values"] = values
        return knob
    knob.update(type="int", range=[int(lo), int(hi)])
    if step != 1:
        knob["step"] = step
    return knob


def sed_targets(text: str, cwd: str | None = None) -> list[str]:
    """The files ``sed -i`` edits in the shell text ``text`` (A-Tune's usual ``set``), as
    absolute paths (relative ones against ``cwd``, where the command runs). Words the shell
    would expand (``$``, globs, ``~``) are skipped: hone keeps only files it can name."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        return []
    found: list[str] = []
    for i, word in enumerate(words):
        if word != "sed":
            continue
        args = _command_words(words, i + 1)
        if not any(w.startswith(("-i", "--in-place")) for w in args):
            continue
        script_given = any(w in ("-e", "--expression", "-f", "--file") or w.startswith(("--expression=", "--file="))
                           for w in args)
        positional, skip = [], False
        for w in args:
            if skip:
                skip = False
            elif w in ("-e", "--expression", "-f", "--file", "-l", "--line-length"):
                skip = True
            elif not w.startswith("-"):
                positional.append(w)
        files = positional if script_given else positional[1:]
        for f in files:
            if any(c in f for c in "$*?[~`") or not f:
                continue
            path = os.path.normpath(os.path.join(cwd or os.getcwd(), f))
            if path not in found:
                found.append(path)
    return found


def _command_words(words: list[str], start: int) -> list[str]:
    """The words of one simple command from ``start``, up to a ``;``, ``&&``, ``|`` …"""
    out = []
    for w in words[start:]:
        if w and all(c in ";&|()" for c in w):
            break
        out.append(w)
    return out


def _workload_restart(server: dict[str, Any]) -> str | None:
    """The server's ``stopworkload`` then ``startworkload`` as one shell text (None if empty)."""
    parts = [str(c) for c in (server.get("stopworkload"), server.get("startworkload")) if c]
    return "\n".join(parts) or None


def metric_from_evaluation(ev: Any, i: int, src: LocatedYaml) -> dict[str, Any]:
    """One client ``evaluations`` entry as a hone metric mapping."""
    loc: Loc = ("evaluations", i)
    if not isinstance(ev, dict) or "name" not in ev or not isinstance(ev.get("info"), dict):
        raise _err(src, loc, "expected name: and info: {get, type, weight}")
    info = ev["info"]
    if not info.get("get"):
        raise _err(src, (*loc, "info"), "required key get missing")
    kind = str(info.get("type", "positive")).strip().lower()
    if kind not in ("positive", "negative"):
        raise _err(src, (*loc, "info", "type"), f"expected positive or negative, got {_show(info.get('type'))}")
    goal = "minimize" if kind == "positive" else "maximize"
    metric: dict[str, Any] = {
        "name": str(ev["name"]),
        "extract": {"command": _quoted(src, (*loc, "info", "get"), str(info["get"]), "out"), "shell": True},
        "goal": goal,
        "weight": float(info.get("weight", 100)),
    }
    threshold = info.get("threshold")
    if threshold not in (None, ""):
        metric["constraint"] = f"{'>=' if goal == 'maximize' else '<='} {float(threshold):g}"
    return metric


def translate(client: LocatedYaml, server: LocatedYaml) -> dict[str, Any]:
    """The hone spec mapping for an A-Tune client/server pair (not yet validated)."""
    c, s = client.data, server.data
    if not isinstance(c, dict):
        raise SpecError(f"{client.path}:1: (top level): expected an A-Tune client mapping, got {_show(c)}")
    if not isinstance(s, dict):
        raise SpecError(f"{server.path}:1: (top level): expected an A-Tune server mapping, got {_show(s)}")
    for key in c:
        if key not in CLIENT_KEYS:
            raise _err(client, (key,), f"unknown key (expected one of: {', '.join(sorted(CLIENT_KEYS))})")
    for key in s:
        if key not in SERVER_KEYS:
            raise _err(server, (key,), f"unknown key (expected one of: {', '.join(sorted(SERVER_KEYS))})")
    if not c.get("benchmark"):
        raise _err(client, (), "required key benchmark missing")
    evaluations = c.get("evaluations") or []
    if not isinstance(evaluations, list) or not evaluations:
        raise _err(client, ("evaluations",), "expected a non-empty list of evaluations")
    objects = s.get("object") or []
    if not isinstance(objects, list) or not objects:
        raise _err(server, ("object",), "expected a non-empty list of objects")
    engine = str(c.get("engine", "bayes"))
    tune: dict[str, Any] = {"sampler": ENGINES.get(engine, "auto"), "objective": "weighted"}
    # A-Tune's iterations count benchmark runs (one per configuration): they are hone's run
    # budget, which also pays for the baseline and the confirmation.
    src, key = (client, "iterations") if c.get("iterations") is not None else (server, "maxiterations")
    iterations = (c if src is client else s).get(key)
    if iterations is not None:
        if isinstance(iterations, bool) or not isinstance(iterations, int | str) \
                or not str(iterations).strip().isdigit() or int(iterations) < 1:
            raise _err(src, (key,), f"expected a whole number of benchmark runs, at least 1, got {iterations!r}")
        tune["max_runs"] = int(iterations)
    if c.get("random_starts"):
        tune["random_starts"] = int(c["random_starts"])
    name = str(c.get("project") or s.get("project") or Path(client.path).stem)
    try:  # the project names files in the state directory (translation, report)
        check_name(name)
    except ValueError as exc:
        raise _err(client if c.get("project") else server, ("project",), str(exc)) from None
    knobs = [knob_from_object(o, i, server, s) for i, o in enumerate(objects)]
    first: dict[str, int] = {}
    for i, knob in enumerate(knobs):
        if (j := first.setdefault(knob["name"], i)) != i:
            raise _err(server, ("object", i, "name"), f"expected distinct knob names, got {knob['name']!r} again "
                       f"(first at line {server.line_of(('object', j, 'name'))})")
    restart = _workload_restart(s)
    return {
        "name": name,
        "description": f"A-Tune pair {client.path} + {server.path} (engine {engine})",
        # cwd: A-Tune runs the benchmark where the client file is; keep that when the
        # translated spec is saved elsewhere (the state directory, for `hone apply`)
        "benchmark": {"command": str(c["benchmark"]), "shell": True, "timeout": 3600, "repeats": 3,
                      "cwd": str(Path(client.path).resolve().parent)},
        "metrics": [metric_from_evaluation(ev, i, client) for i, ev in enumerate(evaluations)],
        "knobs": knobs,
        "tune": tune,
        **({"service": {"restart": restart, "shell": True}} if restart and any(
            k.get("restart") == "service" for k in knobs) else {}),
    }


def load_atune(client_path: str | Path, server_path: str | Path) -> LoadedSpec:
    """Read an A-Tune client + server YAML pair into a validated hone spec. Errors point at
    ``FILE:LINE`` of the A-Tune file at fault. Nothing on the system is changed."""
    client = load_located(client_path)
    server = load_located(server_path)
    data = translate(client, server)
    try:
        spec = Spec.model_validate(data)
    except ValidationError as exc:
        err = spec_error_from_validation(exc, server)
        raise SpecError(f"{err.message} (translated from the A-Tune pair)") from None
    return LoadedSpec(spec=spec, path=Path(client_path), source=client, knob_source=server)


def to_atune(spec: Spec) -> tuple[dict[str, Any], dict[str, Any]]:
    """A hone spec made of script knobs and command metrics, written back as an A-Tune
    client and server mapping (the inverse of :func:`translate`, for round trips)."""
    inverse = {v: k for k, v in ENGINES.items() if k in ("tpe", "random", "lhs", "abtest")}
    client: dict[str, Any] = {
        "project": spec.name,
        "engine": inverse.get(spec.tune.sampler, "bayes"),
        "iterations": spec.tune.max_runs or spec.tune.trials,
        "benchmark": spec.benchmark.command if isinstance(spec.benchmark.command, str)
        else " ".join(spec.benchmark.command),
        "evaluations": [],
    }
    if spec.tune.random_starts:
        client["random_starts"] = spec.tune.random_starts
    for m in spec.metrics:
        if m.extract is None or m.extract.command is None:
            raise SpecError(f"metric {m.name}: only command metrics exist in A-Tune")
        get = m.extract.command if isinstance(m.extract.command, str) else " ".join(m.extract.command)
        info: dict[str, Any] = {"get": get, "type": "positive" if m.goal == "minimize" else "negative",
                                "weight": m.weight}
        bound = m.constraint_bound()
        if bound:
            info["threshold"] = bound[1]
        client["evaluations"].append({"name": m.name, "info": info})
    objects = []
    for k in spec.knobs:
        if k.kind != "script":
            raise SpecError(f"knob {k.name}: only script knobs exist in A-Tune (got {k.kind})")
        info = {"get": k.get, "set": k.set, "needrestart": "false"}
        if k.description:
            info["desc"] = k.description
        if k.values is not None:
            if k.ordinal and all(isinstance(v, int) for v in k.values):
                info.update(type="discrete", dtype="int", options=[str(v) for v in k.values])
            else:
                info.update(type="discrete", dtype="string", options=[str(v) for v in k.values])
        elif k.type == "float":
            info.update(type="continuous", dtype="float", scope=list(k.range))
            if k.step:
                info["step"] = k.step
        else:
            info.update(type="discrete", dtype="int", scope=[int(v) for v in k.range], step=int(k.step or 1))
        objects.append({"name": k.name, "info": info})
    server = {"project": spec.name, "maxiterations": spec.tune.max_runs or spec.tune.trials, "object": objects}
    return client, server
