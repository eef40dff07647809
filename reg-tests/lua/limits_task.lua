-- A task computing forever: it gives the loop back every
-- tune.lua.forced-yield instructions, and tune.lua.task-timeout stops it.

local spins = 0

core.register_task(function()
  while true do
    spins = spins + 1
  end
end)

-- served while the task spins: its counter grows during a short sleep
core.register_action("watch", { "http-req" }, function(txn)
  local before = spins
  core.msleep(10)
  txn:set_var("txn.progress", spins > before and "task-running" or "task-stopped")
end)
