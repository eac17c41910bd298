-- wrk -s report.lua: print the mean latency in ms and the request rate in fixed units
-- (wrk's own summary switches between us, ms and s).
done = function(summary, latency, requests)
  io.write(string.format("latency_mean_ms: %.4f\n", latency.mean / 1000))
  io.write(string.format("latency_p99_ms: %.4f\n", latency:percentile(99) / 1000))
  io.write(string.format("requests_per_s: %.1f\n", summary.requests / (summary.duration / 1e6)))
  io.write(string.format("errors: %d\n", summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.status + summary.errors.timeout))
end
