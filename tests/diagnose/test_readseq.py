"""The readseq probe's text: reports per interval, totals per file, the doctor's table."""

from __future__ import annotations

from hone.diagnose.readseq import FileReads, dev_name, format_report, kernel_dev, parse_reports, totals

OUTPUT = """Attaching 7 probes...
readseq ready



readseq report 100
@reads[4108, 7340032, 12]: 312
@sequential[4108, 7340032, 12]: 7
@extent[4108, 7340032, 12]: 262039
@reads[4200, 7340032, 13]: 20
@extent[4200, 7340032, 13]: 99
readseq report 200
@reads[4108, 7340032, 12]: 100
@sequential[4108, 7340032, 12]: 100
@extent[4108, 7340032, 12]: 5
readseq report 300
@reads[1, 2, 3]: 4
"""


def test_each_report_holds_the_entries_printed_before_it() -> None:
    reports = list(parse_reports(OUTPUT.splitlines()))
    assert [r.nsecs for r in reports] == [100, 200, 300]
    assert reports[0].files == []
    assert reports[1].files == [FileReads(4108, 7340032, 12, 312, 7, 262039), FileReads(4200, 7340032, 13, 20, 0, 99)]
    assert reports[2].files == [FileReads(4108, 7340032, 12, 100, 100, 5)]  # the unterminated tail is no report


def test_totals_add_reports_per_process_and_file_busiest_first() -> None:
    files = totals(parse_reports(OUTPUT.splitlines()))
    assert files[0] == FileReads(4108, 7340032, 12, 412, 107, 262039)
    assert files[1].reads == 20 and files[1].share == 0.0


def test_the_doctor_table_names_the_device_and_the_share() -> None:
    text = format_report(OUTPUT)
    assert "7:0" in text and "26%" in text  # 107 of 412
    assert format_report("readseq ready\n").startswith("no page-cache reads seen")


def test_devices_are_the_kernels_dev_t() -> None:
    assert kernel_dev(7, 0) == 7340032 and dev_name(kernel_dev(259, 3)) == "259:3"
