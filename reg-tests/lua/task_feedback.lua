-- Feedback load balancing as an operator would script it: a task asks
-- each server of backend "app" for its load (GET /load, answered with an
-- x-load header in percent) over core.tcp(), gives it a weight of
-- 100 - load, and drains a server that does not answer 200.

local function probe(addr)
  local s = core.tcp()
  s:settimeout(2)
  local ok, err = s:connect(addr)
  if not ok then return nil, err end
  s:send("GET /load HTTP/1.1\r\nhost: lb\r\nconnection: close\r\n\r\n")
  local status_line = s:receive("*l")
  local status = status_line and tonumber(status_line:match("^HTTP/1%.%d (%d%d%d)"))
  local load
  while true do
    local line = s:receive("*l")
    if not line or line == "" then break end
    local v = line:match("^[Xx]%-[Ll]oad:%s*(%d+)")
    if v then load = tonumber(v) end
  end
  s:close()
  return status, load
end

core.register_task(function()
  local be = core.backends["app"]
  while true do
    for _, srv in pairs(be.servers) do
      local status, load = probe(srv:get_addr())
      if status == 200 and load then
        local w = math.max(1, 100 - load)
        if srv:get_weight() ~= w then
          srv:set_weight(tostring(w))
          core.Info(string.format("feedback: %s weight %d", srv.name, w))
        end
        if srv:is_draining() then srv:set_ready() end
      elseif not srv:is_draining() then
        srv:set_drain()
        core.Warning(string.format("feedback: %s drained (status %s)", srv.name, tostring(status)))
      end
    end
    core.msleep(100)
  end
end)
