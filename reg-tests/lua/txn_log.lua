-- Logs from actions: txn:log() at each level, the shortcuts, core.log(),
-- the level of the request's own log line (set_loglevel), and a run-time
-- error whose traceback is logged while the request gets a 500.

core.register_action("logs", { "http-req" }, function(txn)
  txn:log(core.err, "lua err via txn:log")
  txn:Alert("lua alert via txn:Alert")
  txn:Warning("lua warning via txn:Warning")
  txn:Info("lua info via txn:Info")
  txn:deflog("lua deflog")
  txn:Debug("lua debug via txn:Debug")
  core.log(core.notice, "lua notice via core.log")
  -- the request's own log line goes out at "warning"
  txn:set_loglevel(core.warning)
end)

local function inner(n)
  -- line 20: indexes a nil value
  local t = nil
  return t.field + n
end

core.register_action("crash", { "http-req" }, function(txn)
  txn:Info("about to crash")
  return inner(1)
end)

core.register_action("badlevel", { "http-req" }, function(txn)
  txn:log(9, "never logged")
end)

-- fails in http-after-response: the answer goes out as it is
core.register_action("after_crash", { "http-after-res" }, function(txn)
  txn.http:res_set_header("x-before-crash", "set")
  error("after-response failure")
end)
