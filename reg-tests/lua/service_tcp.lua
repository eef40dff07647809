-- TCP services (AppletTCP): a line protocol read with getline() and
-- receive(size), answered with send(); a service reading until the client
-- closes; an HTTP service reporting what the TCP ones saw.

local seen = { sessions = 0, drained = 0, drained_bytes = 0, drained_last = "" }

-- HELLO <name> | RECV <n> (then n raw bytes) | QUIT: the answers are sent
-- back as one HTTP response (the test client reads HTTP)
core.register_service("proto", "tcp", function(applet)
  seen.sessions = seen.sessions + 1
  local out = {}
  while true do
    local line = applet:getline()
    if line == "" then break end          -- the client closed
    local cmd, arg = line:match("^(%u+) ?([^\r\n]*)")
    if cmd == "HELLO" then
      out[#out + 1] = "hi " .. arg
    elseif cmd == "RECV" then
      out[#out + 1] = "got " .. applet:receive(tonumber(arg))
    elseif cmd == "QUIT" then
      break
    else
      out[#out + 1] = "unknown " .. line:gsub("[\r\n]", "")
    end
  end
  local body = table.concat(out, ";")
  applet:send("HTTP/1.1 200 OK\r\n")
  applet:send("content-length: " .. #body .. "\r\n\r\n")
  applet:send(body)
end)

-- reads everything until the client closes: receive() without a size
core.register_service("drain", "tcp", function(applet)
  local all = applet:receive()
  seen.drained = seen.drained + 1
  seen.drained_bytes = seen.drained_bytes + #all
  seen.drained_last = all
  -- the client is gone: what is sent now goes nowhere, without error
  applet:send("too late")
end)

-- a large answer in pieces: 1 MB
core.register_service("bigtcp", "tcp", function(applet)
  applet:getline()
  local total = 1024 * 1024
  applet:send("HTTP/1.1 200 OK\r\ncontent-length: " .. total .. "\r\n\r\n")
  local block = string.rep("x", 8192)
  for i = 1, total / #block do
    applet:send(block)
  end
end)

-- /seen?drained=<n>: waits (bounded) until n clients of "drain" closed
core.register_service("seen", "http", function(applet)
  local want = tonumber(applet.qs:match("drained=(%d+)")) or 0
  local tries = 0
  while seen.drained < want and tries < 500 do
    core.msleep(20)
    tries = tries + 1
  end
  local body = string.format("sessions=%d drained=%d bytes=%d last=%s", seen.sessions,
                             seen.drained, seen.drained_bytes, seen.drained_last)
  applet:add_header("content-length", #body)
  applet:start_response()
  applet:send(body)
end)
