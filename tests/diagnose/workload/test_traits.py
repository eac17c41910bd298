"""Traits one by one: holds, does not hold, or cannot be judged (not measured, too little data),
each with the figure and threshold as evidence."""

from __future__ import annotations

from hone.diagnose.workload import TRAITS, Signals


def sig(**values: float) -> Signals:
    s = Signals()
    for k, v in values.items():
        s.set(k, v)
    return s


def test_a_threshold_is_inclusive_as_written_and_the_evidence_shows_it() -> None:
    holds, evidence = TRAITS["fsync-heavy"].judge(sig(fsyncs_per_s=10.0))
    assert holds is True and evidence == "fsyncs_per_s = 10 /s (>= 10)"
    assert TRAITS["fsync-heavy"].judge(sig(fsyncs_per_s=9.9))[0] is False
    assert TRAITS["user-code"].judge(sig(sys_share_pct=25.0))[0] is False  # strict <


def test_an_unmeasured_signal_is_unknown_with_why() -> None:
    s = Signals()
    s.set("fsyncs_per_s", None, "tracefs is not mounted")
    assert TRAITS["fsync-heavy"].judge(s) == (None, "fsyncs_per_s not measured: tracefs is not mounted")
    assert TRAITS["fsync-heavy"].judge(Signals())[0] is None


def test_a_pattern_from_too_few_block_requests_is_not_judged() -> None:
    holds, evidence = TRAITS["sequential-blocks"].judge(sig(bio_run_kb=50_000.0, bio_count=3))
    assert holds is None and evidence.startswith("too little to judge: bio_count = 3")
    assert TRAITS["sequential-blocks"].judge(sig(bio_run_kb=50_000.0, bio_count=40))[0] is True
    assert TRAITS["scattered-blocks"].judge(sig(bio_run_kb=4.0, bio_count=40))[0] is True


def test_rare_wakeups_mean_no_short_bursts_rather_than_unknown() -> None:
    assert TRAITS["short-bursts"].judge(sig(cpu_us_per_wakeup=5.0, wakeups_per_s=10.0))[0] is False
    assert TRAITS["short-bursts"].judge(sig(cpu_us_per_wakeup=5.0, wakeups_per_s=5000.0))[0] is True
    assert TRAITS["small-messages"].judge(sig(net_bytes_per_packet=50.0, net_packets_per_s=3.0))[0] is False


def test_blocking_is_only_judged_for_a_process_that_does_not_want_the_cpu() -> None:
    assert TRAITS["blocks-on-io"].judge(sig(voluntary_switch_pct=95.0, cpu_demand=1.0))[0] is None
    assert TRAITS["blocks-on-io"].judge(sig(voluntary_switch_pct=95.0, cpu_demand=0.2))[0] is True
