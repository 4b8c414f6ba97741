-- wrk script of bench/run.sh: sends the request the environment describes (BENCH_METHOD,
-- BENCH_BODY; headers come from wrk's -H) and prints one summary line that run.sh collects:
-- BENCH_JSON {"requests":..,"duration_us":..,"p50_us":..,"p99_us":..,"errors":..,"non2xx":..}
wrk.method = os.getenv("BENCH_METHOD") or "GET"
local body = os.getenv("BENCH_BODY")
if body ~= nil and body ~= "" then
  wrk.body = body
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"mean_us":%.1f,"errors":%d,"non2xx":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.mean,
    e.connect + e.read + e.write + e.timeout, e.status))
end
