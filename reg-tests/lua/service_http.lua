-- HTTP services (AppletHTTP): the request's attributes, its body read
-- whole, by size or by lines, answers framed by content-length or chunked,
-- large answers written in pieces.

-- "a|b" of a header's values (indexed from 0)
local function values(applet, name)
  local v = applet.headers[name]
  if not v then return "-" end
  local out = {}
  for i = 0, #v do out[#out + 1] = v[i] end
  return table.concat(out, "|")
end

local function answer(applet, status, body, ctype)
  applet:set_status(status)
  applet:add_header("content-type", ctype or "text/plain")
  applet:add_header("content-length", #body)
  applet:start_response()
  applet:send(body)
end

-- describes the request; the body is read whole (de-chunked)
core.register_service("echo", "http", function(applet)
  local body = applet:receive()
  local lines = {
    "method=" .. applet.method,
    "path=" .. applet.path,
    "qs=" .. applet.qs,
    "version=" .. applet.version,
    "length=" .. applet.length,
    "host=" .. values(applet, "host"),
    "multi=" .. values(applet, "x-multi"),
    "body=" .. (body or "nil"),
  }
  answer(applet, 200, table.concat(lines, "\n") .. "\n")
end)

-- reads the body by lines: answers chunked (no content-length), one chunk
-- per line, each line upper-cased
core.register_service("lines", "http", function(applet)
  applet:set_status(201, "Lines Read")
  applet:add_header("content-type", "text/plain")
  applet:add_header("x-lines", "yes")
  applet:start_response()
  local n = 0
  while true do
    local line = applet:getline()
    if line == "" then break end
    n = n + 1
    applet:send(n .. ":" .. line:upper())
  end
  applet:send("total=" .. n .. "\n")
end)

-- reads the body by pieces of a given size: the sizes it got
core.register_service("pieces", "http", function(applet)
  local size = tonumber(applet.qs:match("size=(%d+)")) or 4
  local got = {}
  while true do
    local part = applet:receive(size)
    if part == "" then break end
    got[#got + 1] = #part .. ":" .. part
  end
  answer(applet, 200, table.concat(got, ",") .. "\n")
end)

-- a large answer: <kb> kB of a known pattern, written 10000 bytes at a time,
-- with a content-length, or chunked when asked
core.register_service("big", "http", function(applet)
  local kb = tonumber(applet.qs:match("kb=(%d+)")) or 1024
  local total = kb * 1024
  local chunked = applet.qs:find("chunked", 1, true) ~= nil
  local block = string.rep("0123456789", 1000)
  applet:set_status(200)
  applet:add_header("content-type", "application/octet-stream")
  if not chunked then
    applet:add_header("content-length", total)
  end
  applet:start_response()
  local sent = 0
  while sent < total do
    local n = math.min(#block, total - sent)
    applet:send(block:sub(1, n))
    sent = sent + n
  end
end)

-- variables and fetches from a service: txn.in set by the configuration,
-- txn.out read by http-after-response; the connection's fetches work, the
-- HTTP message's give no value (the service has taken the request)
core.register_service("vars", "http", function(applet)
  local seen = applet:get_var("txn.in")
  applet:set_var("txn.out", "set-by-service")
  applet:unset_var("txn.gone")
  applet:set_priv("kept")
  local body = string.format("in=%s src=%s hdr=%s priv=%s conv=%s gone=%s", tostring(seen),
                             applet.sf:src(), tostring(applet.f:req_hdr("host")),
                             tostring(applet:get_priv()), applet.c:upper("abc"),
                             tostring(applet:get_var("txn.gone")))
  applet:add_header("content-length", #body)
  applet:start_response()
  applet:send(body)
end)

-- send() before start_response(): an error, a 500
core.register_service("early", "http", function(applet)
  applet:send("too early")
end)

-- fails before answering: a 500
core.register_service("broken", "http", function(applet)
  error("service failure")
end)

-- returns without start_response(): a 500
core.register_service("silent", "http", function(applet)
end)
