"""Starting benchmarks: processes with timeouts and CPU accounting, metric extraction,
interleaved schedules."""

from hone.run.process import ProcessResult, run_process

__all__ = ["ProcessResult", "run_process"]
