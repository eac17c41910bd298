"""Running a benchmark with knobs set: sessions, the journal of what was changed, services,
metric extraction, interleaved schedules."""
