-- Edge cases: clients leaving while their script waits, bodies flowing
-- while an action waits, large uploads read by a service, tasks started
-- and failing at run time.

local events = {}
local function note(what)
  events[#events + 1] = what
end

-- sleeps 200 ms: the request body (or the response body) keeps coming
core.register_action("nap", { "http-req", "http-res" }, function(txn)
  core.msleep(200)
  txn:set_var("txn.napped", "yes")
end)

-- sleeps until its client is gone (bounded: 20 s)
core.register_action("wait_long", { "http-req" }, function(txn)
  note("wait_long started")
  for i = 1, 200 do core.msleep(100) end
  note("wait_long ended")
end)

-- reads the whole request body and answers its length and a checksum
core.register_service("upload", "http", function(applet)
  local body = applet:receive()
  local sum = 0
  for i = 1, #body, 997 do sum = (sum + body:byte(i)) % 65536 end
  local answer = string.format("len=%d sum=%d", #body, sum)
  applet:add_header("content-length", #answer)
  applet:start_response()
  applet:send(answer)
end)

-- waits for a body that never comes whole
core.register_service("stuck_reader", "http", function(applet)
  note("stuck_reader started")
  local body = applet:receive()
  note("stuck_reader got " .. #body)
  applet:start_response()
end)

-- answers 4 MB to a client that does not read
core.register_service("stuck_writer", "http", function(applet)
  note("stuck_writer started")
  applet:add_header("content-length", 4 * 1024 * 1024)
  applet:start_response()
  local block = string.rep("w", 65536)
  for i = 1, 64 do applet:send(block) end
  note("stuck_writer ended")
end)

-- registers a task at run time, which fails after a while
core.register_action("spawn", { "http-req" }, function(txn)
  core.register_task(function()
    note("task started")
    core.msleep(10)
    note("task failing")
    error("task failure")
  end)
end)

core.register_service("events", "http", function(applet)
  -- waits (bounded) for the event named in the query
  local want = applet.qs:gsub("+", " ")
  for i = 1, 500 do
    local found = false
    for _, e in ipairs(events) do if e == want then found = true end end
    if found or want == "" then break end
    core.msleep(20)
  end
  local body = table.concat(events, ";")
  applet:add_header("content-length", #body)
  applet:start_response()
  applet:send(body)
end)

-- lua.shut <backend> <server>: closes the server's sessions (at the next
-- loop pass): other streams', or this very stream's
core.register_action("shut", { "http-req", "http-res" }, function(txn, be, srv)
  core.backends[be].servers[srv]:shut_sess()
  txn:set_var("txn.shut", "done")
end, 2)
