"""Bios from `perf script` and their pattern: sequential within each task's own stream, the
observed processes' own, kernel writeback only when asked."""

from __future__ import annotations

import pytest

from hone.diagnose.workload.blockio import Bio, parse_script, pattern

SCRIPT = """\
       perf-exec  2080/2080  block:block_bio_queue: 254,0 RA 9965056 + 8 [perf-exec]
       perf-exec  2080/2080  block:block_bio_queue: 254,0 RA 9965064 + 8 [perf-exec]
 kworker/u8:0-lo    12/12    block:block_bio_queue: 254,0 W 32096464 + 8 [kworker/u8:0]
 jbd2/vda1-8   300/300   block:block_bio_queue: 254,0 FWS 0 + 0 [jbd2/vda1-8]
         python3  2036/2037  block:block_bio_queue: 7,0 R 884944 + 16 [python3]
"""


def test_parse_keeps_comm_with_spaces_and_drops_empty_flushes() -> None:
    bios = parse_script(SCRIPT)
    assert [b.comm for b in bios] == ["perf-exec", "perf-exec", "kworker/u8:0-lo", "python3"]
    assert bios[0] == Bio("perf-exec", 2080, 2080, "254,0", False, 9965056, 8)
    assert bios[2].write and bios[3].tid == 2037


def _stream(pid: int, sectors: list[int], size: int = 8, write: bool = False, comm: str = "r") -> list[Bio]:
    return [Bio(comm, pid, pid, "254,0", write, s, size) for s in sectors]


def test_back_to_back_requests_are_sequential_and_jumps_are_not() -> None:
    seq = pattern(_stream(1, [0, 8, 16, 24, 32]), {1})
    assert seq.seq_pct == 100.0 and seq.judged == 4 and seq.avg_kb == 4.0 and seq.run_kb == 20.0
    rnd = pattern(_stream(1, [5000, 80, 999_999, 123_456]), {1})
    assert rnd.seq_pct == 0.0 and rnd.run_kb == 4.0


def test_a_sequential_file_in_several_extents_keeps_long_runs() -> None:
    # 8 MiB bios, the file in two extents far apart: one jump in 64 MiB
    bios = _stream(1, [0, 16384, 32768, 49152], size=16384) + _stream(1, [10**8 + i * 16384 for i in range(4)],
                                                                      size=16384)
    p = pattern(bios, {1})
    assert p.seq_pct == pytest.approx(6 / 7 * 100) and p.run_kb == 32 * 1024


def test_a_small_gap_still_counts_as_sequential_a_large_one_does_not() -> None:
    assert pattern(_stream(1, [0, 8 + 256]), {1}).seq_pct == 100.0
    assert pattern(_stream(1, [0, 8 + 257]), {1}).seq_pct == 0.0
    assert pattern(_stream(1, [100, 0]), {1}).seq_pct == 0.0  # backwards


def test_two_interleaved_sequential_readers_stay_sequential_each() -> None:
    a, b = _stream(1, [0, 8, 16]), _stream(2, [50_000, 50_008, 50_016])
    mixed = [x for pair in zip(a, b, strict=True) for x in pair]
    assert pattern(mixed, {1, 2}).seq_pct == 100.0


def test_other_processes_are_left_out_and_writeback_only_when_asked() -> None:
    bios = _stream(1, [0, 8]) + _stream(9, [7, 900_000]) + _stream(12, [4000, 4008], write=True, comm="kworker/u8:1")
    assert pattern(bios, {1}).count == 2
    with_wb = pattern(bios, {1}, include_writeback=True)
    assert with_wb.count == 4 and with_wb.read_count == 2 and with_wb.kernel_writeback
    assert pattern(bios, None).count == 6
    assert pattern([], {1}).seq_pct is None and pattern([], {1}).avg_kb is None
