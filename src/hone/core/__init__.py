"""What every layer of hone may use and that uses nothing of hone: errors, paths, running
processes (timeouts, CPU accounting, no shell for data), readiness probes, the built-in metric
table, durations, machine facts (fingerprint) and crash points for fault injection."""
