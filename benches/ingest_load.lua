-- wrk's script for `cargo bench --bench ingest_load`: arguments SECONDS BODIES_FILE EVENT_IDS.
-- Posts BODIES_FILE's beacons (a JSON event a line) in turn for SECONDS, then GETs only (405): no
-- POST is cut off as wrk exits. Counts POSTs and 202s. EVENT_IDS=true: ids of run, thread, counter.
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } ingest_load_timespec;
int clock_gettime(int clock_id, ingest_load_timespec *tp);
]]
local clock = ffi.new("ingest_load_timespec")
local function now() -- CLOCK_MONOTONIC, in seconds
  ffi.C.clock_gettime(1, clock)
  return tonumber(clock.tv_sec) + tonumber(clock.tv_nsec) * 1e-9
end
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("thread_number", #threads)
  -- wrk calls request() once on its first thread to check the script, and never sends it.
  thread:set("checked_by_wrk", #threads == 1)
end

function init(args)
  deadline = now() + tonumber(args[1])
  event_ids = args[3] == "true"
  invocation = math.floor(now() * 1e6) % 4294967296
  headers = {
    ["Content-Type"] = "text/plain;charset=UTF-8", -- what navigator.sendBeacon sends
    ["User-Agent"] = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15"
      .. " (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
    ["Accept"] = "*/*",
  }
  posts, rests = {}, {}
  for body in io.lines(args[2]) do
    table.insert(posts, wrk.format("POST", nil, headers, body))
    table.insert(rests, string.sub(body, 2))
  end
  idle = wrk.format("GET", nil, {}, nil)
  next_post, accepted = 0, 0
  posted = checked_by_wrk and -1 or 0
end

function request()
  if now() >= deadline then
    return idle
  end
  next_post = next_post % #posts + 1
  posted = posted + 1
  if event_ids then
    return wrk.format("POST", nil, headers, string.format(
      '{"eventId":"%08x-%04x-4000-8000-%012x",%s', invocation, thread_number, posted, rests[next_post]))
  end
  return posts[next_post]
end

function response(status)
  if status == 202 then accepted = accepted + 1 end
end

function done(summary, latency, requests)
  local p, a = 0, 0
  for _, thread in ipairs(threads) do
    p = p + thread:get("posted")
    a = a + thread:get("accepted")
  end
  io.write(string.format("ingest_load posted %d\ningest_load accepted %d\n", p, a))
end
