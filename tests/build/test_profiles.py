"""Profile files: weighted .fdata merge, integer weights, contributions, gcda and
cachegrind parsing."""

from __future__ import annotations

import struct
from pathlib import Path

from hone.build.counts import parse_cachegrind, totals
from hone.build.profiles import (
    GCDA_MAGIC,
    GCOV_TAG_ARC_COUNTS,
    ScenarioProfile,
    contributions,
    fdata_total,
    gcda_arc_total,
    integer_weights,
    llvm_total_count,
    merge_fdata,
)


def test_integer_weights_keep_ratios_smallest_is_one() -> None:
    assert integer_weights([0.5, 1.0, 2.0]) == [1, 2, 4]
    assert integer_weights([3.0, 3.0]) == [1, 1]


def test_fdata_merge_scales_counts_by_weight_and_keeps_headers_once(tmp_path: Path) -> None:
    a = tmp_path / "a.fdata"
    b = tmp_path / "b.fdata"
    a.write_text("boltedcollection\n1 main 10 1 main 20 0 5\n1 f 0 1 f 8 1 3\n")
    b.write_text("boltedcollection\n1 main 10 1 main 20 2 7\n")
    out = tmp_path / "m.fdata"
    merge_fdata([(a, 1.0), (b, 3.0)], out)
    lines = out.read_text().splitlines()
    assert lines.count("boltedcollection") == 1
    assert "1 main 10 1 main 20 6 26" in lines  # 0+2·3 mispredicts, 5+7·3 counts
    assert "1 f 0 1 f 8 1 3" in lines
    assert fdata_total(out) == 29


def test_contributions_weight_counts_and_handle_empty() -> None:
    parts = [ScenarioProfile("a", "", "", 100, 1.0), ScenarioProfile("b", "", "", 100, 3.0)]
    assert contributions(parts) == {"a": 0.25, "b": 0.75}
    assert contributions([ScenarioProfile("z", "", "", 0, 1.0)]) == {"z": 0.0}


def _gcda(records: list[tuple[int, bytes | int]]) -> bytes:
    out = struct.pack("<IIII", GCDA_MAGIC, 0, 0, 0)
    for tag, payload in records:
        if isinstance(payload, int):  # negative length: all-zero counters, no payload
            out += struct.pack("<Ii", tag, payload)
        else:
            out += struct.pack("<Ii", tag, len(payload)) + payload
    return out


def test_gcda_arc_counters_are_summed_64_bit(tmp_path: Path) -> None:
    big = (1 << 33) + 5
    counters = struct.pack("<II", 7, 0) + struct.pack("<II", big & 0xFFFFFFFF, big >> 32)
    f = tmp_path / "x.gcda"
    f.write_bytes(_gcda([(0x01000000, b"\0" * 12), (GCOV_TAG_ARC_COUNTS, counters), (GCOV_TAG_ARC_COUNTS, -16)]))
    assert gcda_arc_total(f) == 7 + big
    g = tmp_path / "not.gcda"
    g.write_bytes(b"hello world, not a profile")
    assert gcda_arc_total(g) == 0


def test_llvm_total_count() -> None:
    assert llvm_total_count("Total functions: 4\nTotal count: 5001963\n") == 5001963
    assert llvm_total_count("nothing") == 0


def test_cachegrind_summary_is_parsed_and_processes_summed() -> None:
    text = "desc: x\ncmd: y\nevents: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim\n" \
           "fl=a.c\n1 2 3\nsummary: 1000 10 1 300 20 2 100 5 1 200 30 7 4\n"
    ev = parse_cachegrind(text)
    assert ev["Ir"] == 1000 and ev["Bim"] == 4
    c = totals([ev, ev])
    assert c.instructions == 2000
    assert c.branch_mispredicts == 2 * (30 + 4)
    assert c.cache_misses == 2 * (10 + 20 + 5)
