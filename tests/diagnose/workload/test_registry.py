"""Every class of the fixed vocabulary has one rule file; every rule names only traits that exist,
and every trait only signals that exist: the rules can be read, and tested, one by one."""

from __future__ import annotations

from pathlib import Path

from hone.diagnose.workload import CLASS_NAMES, CLASSES, SIGNALS, TRAITS
from hone.diagnose.workload.classes.base import ClassRule

CLASS_DIR = Path(__file__).resolve().parents[3] / "src" / "hone" / "diagnose" / "workload" / "classes"


def test_the_vocabulary_is_exactly_the_registered_classes_one_file_each() -> None:
    assert set(CLASS_NAMES) == set(CLASSES) and len(CLASS_NAMES) == 11
    files = {p.stem.replace("_", "-") for p in CLASS_DIR.glob("*.py")} - {"--init--", "base"}
    assert files == set(CLASS_NAMES)


def test_each_rule_is_complete_and_names_known_traits() -> None:
    for name, rule in CLASSES.items():
        assert isinstance(rule, ClassRule) and rule.name == name
        assert rule.group in ("service", "resource", "behaviour")
        assert rule.conclusion and rule.source and (rule.requires or rule.requires_any), name
        assert rule.traits() <= set(TRAITS), (name, rule.traits() - set(TRAITS))
        assert not (set(rule.requires) | set(rule.supports)) & set(rule.excludes), name


def test_each_trait_reads_a_known_signal_and_says_where_its_threshold_comes_from() -> None:
    for t in TRAITS.values():
        assert t.signal in SIGNALS and t.phrase and t.source, t.name
        assert t.guard is None or t.guard[0] in SIGNALS, t.name
    used = {n for rule in CLASSES.values() for n in rule.traits()}
    assert used == set(TRAITS), f"traits no class uses: {set(TRAITS) - used}"
