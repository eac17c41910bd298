"""Conformance of the doctor's rule registry (``hone.diagnose.rules.RULES``): every rule is
registered under its own unique name, documents itself, and evaluates an empty, a neutral and
a strained profile without raising, returning what it declares (a Finding of its own or None)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from pathlib import Path
from typing import get_type_hints

import pytest

import hone.diagnose.rules as rules_pkg
from hone.diagnose.capabilities import Capabilities
from hone.diagnose.doctor import evaluate_rules
from hone.diagnose.perfstat import Counter, StatRun
from hone.diagnose.profile import ProfileResult, summarize_runs
from hone.diagnose.rules import RULES, DoctorContext, Finding, Rule, Target

NO_PMU = {e: "<not supported>: no hardware PMU" for e in ("instructions", "cycles", "iTLB-loads", "iTLB-load-misses")}
DESCRIBED = ("signal", "threshold", "source", "remedy", "experiment")


def _profile(user_s: float, sys_s: float, wall_s: float, *, syscalls: float, writes: float, bytes_per_write: float,
             switches: float, migrations: float, faults: float) -> ProfileResult:
    counters = {"task-clock": (user_s + sys_s) * 1000, "context-switches": switches, "cpu-migrations": migrations,
                "page-faults": faults, "raw_syscalls:sys_enter": syscalls, "syscalls:sys_enter_write": writes}
    run = StatRun({k: Counter(k, v) for k, v in counters.items()}, wall_s=wall_s, user_s=user_s, sys_s=sys_s,
                  max_rss_kb=1000, voluntary_ctxt_switches=int(switches), involuntary_ctxt_switches=5,
                  io={"rchar": 0, "wchar": int(bytes_per_write * writes), "syscr": 0, "syscw": int(writes)})
    quantities, derived = summarize_runs([run, run], NO_PMU)
    return ProfileResult(["prog"], None, list(counters), NO_PMU, [run, run], quantities, derived)


def _contexts(tmp: Path) -> dict[str, DoctorContext]:
    caps = Capabilities(pmu=False, pmu_why="no hardware PMU")
    argv = ["./prog", "-d", str(tmp), "-b", "256"]
    return {
        "empty": DoctorContext(ProfileResult(["prog"], None, [], {}, [], {}, {}), Capabilities(), Target(["prog"])),
        "neutral": DoctorContext(_profile(0.95, 0.05, 1.0, syscalls=100, writes=10, bytes_per_write=65536,
                                          switches=10, migrations=1, faults=100), caps, Target(argv)),
        "strained": DoctorContext(_profile(0.1, 0.9, 4.0, syscalls=200000, writes=100000, bytes_per_write=256,
                                           switches=50000, migrations=20000, faults=500000), caps, Target(argv)),
    }


def _rule_classes() -> set[type[Rule]]:
    """Every concrete rule defined in a module of hone.diagnose.rules."""
    for info in pkgutil.iter_modules(rules_pkg.__path__):
        importlib.import_module(f"{rules_pkg.__name__}.{info.name}")
    found: set[type[Rule]] = set()
    todo = list(Rule.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls.__module__.startswith(f"{rules_pkg.__name__}.") and cls.check is not Rule.check:
            found.add(cls)
    return found


def test_every_rule_is_registered_once_under_its_own_name() -> None:
    classes = _rule_classes()
    assert {type(rule) for rule in RULES.values()} == classes
    assert len(RULES) == len(classes), "two rules share a name"
    for key, rule in RULES.items():
        assert key == rule.name


@pytest.mark.parametrize("name", list(RULES))
def test_rule_documents_itself(name: str) -> None:
    rule = RULES[name]
    assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name)
    described = rule.describe()
    assert described["name"] == name
    for key in DESCRIBED:
        assert isinstance(described[key], str) and described[key].strip(), f"{name}: no {key}"


@pytest.mark.parametrize("name", list(RULES))
def test_rule_evaluates_any_profile_and_returns_its_declared_type(name: str, tmp_path: Path) -> None:
    rule = RULES[name]
    assert get_type_hints(type(rule).check)["return"] == Finding | None
    for label, ctx in _contexts(tmp_path).items():
        missing = rule.missing_inputs(ctx)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in missing.items()), label
        assert isinstance(rule.unavailable(ctx), bool)
        found = rule.check(ctx)
        assert found is None or isinstance(found, Finding), (label, found)
        if found is not None:
            assert found.rule == name and 0.0 <= found.score <= 1.0, (label, found)
            assert found.title and found.evidence
            json.dumps(found.to_json(ctx.target))
        if label == "empty":
            assert rule.unavailable(ctx) == bool(rule.inputs)


def test_the_strained_profile_makes_rules_fire(tmp_path: Path) -> None:
    """The checks above see real Findings, not only None."""
    contexts = _contexts(tmp_path)
    findings, _ = evaluate_rules(contexts["strained"], list(RULES.values()))
    assert len({f.rule for f in findings}) >= 3
    assert evaluate_rules(contexts["empty"])[0] == []
