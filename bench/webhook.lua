-- wrk script of bench/webhook.ts: valid status reports, round-robin over BENCH_SWAPS swaps named
-- BENCH_PREFIX<i>, each swap alternating PENDING and ON_HOLD, with the key BENCH_KEY. Prints one JSON
-- line: requests, req/s, p50/p99 in ms and the count of each HTTP status.
local provider = os.getenv("BENCH_PROVIDER")
local prefix = os.getenv("BENCH_PREFIX")
local swaps = tonumber(os.getenv("BENCH_SWAPS"))
local key = os.getenv("BENCH_KEY")
local step = tonumber(os.getenv("WRK_THREADS"))
local statuses = { "PENDING", "ON_HOLD" }
local threads = {}
local next_thread = 0

function setup(thread)
  thread:set("first", next_thread)
  next_thread = next_thread + 1
  table.insert(threads, thread)
end

-- Every request this thread sends is formatted once, here: the load generator shares the 2 cores with
-- the server it measures, so it should spend as little of them as it can.
function init(args)
  codes = {}
  requests = {}
  local n = 0
  for counter = first, 2 * swaps - 1, step do
    local i = counter % swaps
    local status = statuses[(math.floor(counter / swaps) % 2) + 1]
    local body = '{"providerId":"' .. provider .. '","providerStatus":"' .. status .. '","amount":"0.25"}'
    n = n + 1
    requests[n] = wrk.format("POST", "/webhook/" .. prefix .. i .. "/status",
      { ["content-type"] = "application/json", ["x-api-key"] = key }, body)
  end
  count = n
  at = 0
end

function request()
  at = at % count + 1
  return requests[at]
end

function response(status, headers, body)
  codes[status] = (codes[status] or 0) + 1
end

function done(summary, latency, requests)
  local parts = {}
  for _, t in ipairs(threads) do
    for status, n in pairs(t:get("codes")) do
      parts[status] = (parts[status] or 0) + n
    end
  end
  local list = {}
  for status, n in pairs(parts) do table.insert(list, '"' .. status .. '":' .. n) end
  local seconds = summary.duration / 1e6
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format('{"requests":%d,"seconds":%.3f,"rps":%.1f,"p50ms":%.3f,"p99ms":%.3f,"errors":%d,"codes":{%s}}\n',
    summary.requests, seconds, summary.requests / seconds, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, errors, table.concat(list, ",")))
end
