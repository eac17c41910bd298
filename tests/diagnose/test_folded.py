"""Folded-stack arithmetic: the numbers flame graphs and the doctor are built on."""

from __future__ import annotations

import json

from hone.diagnose.folded import (
    hottest,
    inclusive_totals,
    kernel_share,
    parse_folded,
    self_share_deltas,
    self_totals,
    to_speedscope,
    widest_child,
)

TEXT = """prog;main;hot 80
prog;main;warm 15
prog;main;hot;write_[k] 5
garbage line
prog;main;hot 0
"""


def test_parse_skips_junk_and_adds_duplicates() -> None:
    stacks = parse_folded(TEXT + "prog;main;warm 5\n")
    assert stacks["prog;main;warm"] == 20
    assert "garbage line" not in stacks


def test_inclusive_counts_a_frame_once_per_stack_even_when_recursive() -> None:
    totals = inclusive_totals({"p;f;f;f": 10.0})
    assert totals["f"] == 10


def test_self_and_inclusive_totals() -> None:
    stacks = parse_folded(TEXT)
    assert self_totals(stacks)["hot"] == 80
    assert inclusive_totals(stacks)["hot"] == 85
    assert hottest(stacks, 1) == [("hot", 80.0)]
    assert widest_child(stacks, "main") == "hot"


def test_kernel_share_counts_top_frames_marked_k() -> None:
    assert kernel_share(parse_folded(TEXT)) == 0.05
    assert kernel_share({}) is None


def test_deltas_are_normalised_by_total() -> None:
    before = {"p;a": 50.0, "p;b": 50.0}
    after = {"p;a": 100.0, "p;b": 300.0}  # a longer run: b's share grew, a's shrank
    deltas = self_share_deltas(before, after)
    assert deltas[0].function in {"a", "b"}
    by_name = {d.function: d for d in deltas}
    assert by_name["b"].delta > 0.24 and by_name["a"].delta < -0.24


def test_speedscope_document_is_valid_sampled_profile() -> None:
    doc = to_speedscope(parse_folded(TEXT), "t")
    json.dumps(doc)
    prof = doc["profiles"][0]
    assert prof["type"] == "sampled"
    assert len(prof["samples"]) == len(prof["weights"])
    assert prof["endValue"] == sum(prof["weights"])
    names = [f["name"] for f in doc["shared"]["frames"]]
    assert all(0 <= i < len(names) for s in prof["samples"] for i in s)
