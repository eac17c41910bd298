"""Classes on signals recorded from real workloads (benchmarks/workload_classes.py wrote them), and
the verdict's honesty: ambiguity listed with what tells the candidates apart, classes that cannot
be judged without counters never named, exclusions shown as evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hone.diagnose.workload import CLASSES, Signals, classify

RECORDED = sorted((Path(__file__).parent / "recorded").glob("*.json"))


def recorded(name: str) -> Signals:
    return Signals.from_json(json.loads((Path(__file__).parent / "recorded" / f"{name}.json").read_text())["signals"])


def test_there_are_recordings_of_every_kind_of_workload_benchmarked() -> None:
    assert len(RECORDED) >= 8


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.stem)
def test_a_recorded_workload_is_named_as_what_it_is(path: Path) -> None:
    data = json.loads(path.read_text())
    analysis = classify(Signals.from_json(data["signals"]))
    assert data["expected"] in analysis.decided, (analysis.summary(), [c.to_json() for c in analysis.classes[:3]])


def test_a_database_that_does_not_force_commits_is_not_called_a_database() -> None:
    signals = recorded("postgresql-pgbench")
    signals.set("fsyncs_per_s", 0.0)  # what synchronous_commit=off looks like to these signals
    analysis = classify(signals)
    service = next(g for g in analysis.groups if g.group == "service")
    assert service.decided is None and "database-oltp" not in analysis.decided
    assert set(service.candidates) == {"web-server", "kv-cache"}
    assert any(t.startswith("opens-files-often (does not hold") for t in service.tells_apart)
    assert any(t.startswith("one-process (does not hold") for t in service.tells_apart)
    assert "holds client connections" in analysis.known
    assert analysis.summary().startswith("one of web-server / kv-cache")
    oltp = next(c for c in analysis.classes if c.name == "database-oltp")
    assert oltp.status == "does not fit" and oltp.against == ["fsync-heavy: fsyncs_per_s = 0 /s (>= 10)"]


def test_memory_bound_without_hardware_counters_is_unconfirmed_never_named() -> None:
    analysis = classify(recorded("gzip"))
    mb = next(c for c in analysis.classes if c.name == "memory-bound")
    assert mb.status == "candidate" and mb.score <= 0.5
    assert any("no hardware PMU" in u for u in mb.unknown)
    resource = next(g for g in analysis.groups if g.group == "resource")
    assert resource.decided == "cpu-bound-compute" and resource.unconfirmed == ["memory-bound"]


def test_an_excluding_trait_rules_a_class_out_with_its_figure() -> None:
    signals = recorded("redis-benchmark")
    signals.set("fsyncs_per_s", 500.0)
    kv = next(c for c in classify(signals).classes if c.name == "kv-cache")
    assert kv.status == "ruled out" and kv.score == 0.0
    assert kv.against == ["fsync-heavy: fsyncs_per_s = 500 /s (>= 10)"]


def test_nothing_measured_fits_nothing_and_says_so() -> None:
    analysis = classify(Signals())
    assert analysis.decided == [] and analysis.primary is None
    assert analysis.summary() == "no class fits"
    assert all(c.status in ("does not fit", "candidate") for c in analysis.classes)


def test_scores_follow_the_one_rule_for_every_class() -> None:
    analysis = classify(recorded("nginx-wrk"))
    for c in analysis.classes:
        if c.status == "fits":
            rule = CLASSES[c.name]
            held = sum(1 for line in c.evidence if line.split(":")[0] in rule.supports)
            judged = [n for n in rule.supports if analysis.traits[n].holds is not None]
            assert c.score == pytest.approx(0.6 + 0.4 * (held / len(judged) if judged else 0.0)), c.name
