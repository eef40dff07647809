-- Scripts that misbehave: a busy loop, a long sleep, memory exhaustion,
-- a busy service. Each must harm only its own request.

local spins = 0
local seq = 0

-- an endless computation: stopped by tune.lua.session-timeout
core.register_action("busy", { "http-req" }, function(txn)
  while true do
    spins = spins + 1
  end
end)

-- waits until the busy loop runs, then checks that it goes on while this
-- request is being served (its spins grow during a short sleep)
core.register_action("watch", { "http-req" }, function(txn)
  local n = 0
  while spins == 0 and n < 500 do
    core.msleep(10)
    n = n + 1
  end
  local before = spins
  core.msleep(10)
  txn:set_var("txn.progress", spins > before and "busy-loop-running" or "busy-loop-stopped")
end)

-- sleeps 10 s (sleeps are not run time: no timeout)
core.register_action("sleep10", { "http-req" }, function(txn)
  core.sleep(10)
  seq = seq + 1
  txn:set_var("txn.seq", seq)
end)

core.register_action("quick", { "http-req" }, function(txn)
  seq = seq + 1
  txn:set_var("txn.seq", seq)
end)

-- grows until tune.lua.maxmem stops it
core.register_action("hog", { "http-req" }, function(txn)
  local t = {}
  for i = 1, 1e9 do
    t[i] = string.rep("x", 1000) .. i
  end
end)

-- a fetch written in Lua, called by a script that holds all the memory
core.register_fetches("small", function(txn)
  return "small"
end)

-- fills the memory, then calls the Lua fetch again and again, each time
-- with a little less room: the nested run is prepared (outside any
-- protected call) at the very limit
core.register_action("hog_nested", { "http-req" }, function(txn)
  local f = txn.f
  local fetch = f.lua_small
  local calls = 0
  pcall(function()
    local big, small = {}, {}
    pcall(function()
      for i = 1, 1e9 do big[i] = string.rep("x", 1000) .. i end
    end)
    for k = 1, 200 do
      pcall(function() for j = 1, 1e6 do small[#small + 1] = j end end)
      pcall(fetch, f)
      calls = k
    end
  end)
  txn:set_var("txn.calls", calls)
end)

-- allocates a few MB, well within the limit, once the hog's memory is
-- collected
core.register_action("alloc", { "http-req" }, function(txn)
  local parts = {}
  for i = 1, 4 do parts[i] = string.rep(tostring(i), 1024 * 1024) end
  txn:set_var("txn.alloc", #table.concat(parts))
end)

-- a service computing forever before answering
core.register_service("busy_svc", "http", function(applet)
  while true do
    spins = spins + 1
  end
end)

-- a service computing forever after it began its answer
core.register_service("busy_svc_late", "http", function(applet)
  applet:add_header("content-length", "100")
  applet:start_response()
  applet:send("partial")
  while true do
    spins = spins + 1
  end
end)
