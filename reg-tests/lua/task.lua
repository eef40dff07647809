-- A task (core.register_task) polling an agent over core.tcp() and
-- applying what it says to a server: its weight, maintenance, back to
-- ready. The agent is a Lua TCP service of the same process whose answer
-- an HTTP request changes.

local agent_says = "weight 10"
local polls = 0

core.register_service("agent", "tcp", function(applet)
  local cmd = applet:getline()
  if cmd == "status\n" then
    applet:send(agent_says .. "\n")
  end
end)

-- /say?<words>: what the agent answers from now on; /polls: how many
-- times the task asked
core.register_service("control", "http", function(applet)
  local body
  if applet.path == "/say" then
    agent_says = applet.qs:gsub("+", " ")
    body = "agent says " .. agent_says
  else
    body = "polls " .. polls
  end
  applet:add_header("content-length", #body)
  applet:start_response()
  applet:send(body)
end)

local function apply(srv, line)
  local w = line:match("^weight (%d+)$")
  if w then
    if srv:get_weight() ~= tonumber(w) then srv:set_weight(w) end
  elseif line == "maint" then
    srv:set_maint()
  elseif line == "ready" then
    srv:set_ready()
  end
end

core.register_task(function()
  local agent = os.getenv("LUA_TASK_AGENT")
  local srv = core.backends["be"].servers["s1"]
  while true do
    local s = core.tcp()
    s:settimeout(2)
    if s:connect(agent) then
      s:send("status\n")
      local line = s:receive("*l")
      if line then
        polls = polls + 1
        -- a refused value is a Lua error: the task goes on
        local ok, err = pcall(apply, srv, line)
        if not ok then core.Warning("task: " .. tostring(err)) end
      end
    end
    s:close()
    core.msleep(50)
  end
end)
