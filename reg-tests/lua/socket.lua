-- core.tcp() sockets and core.httpclient() from actions: an HTTP request
-- written by hand, failures and timeouts, and the HTTP client.

local function set(txn, name, value)
  txn:set_var("txn." .. name, tostring(value))
end

-- lua.sock_get <ip:port>: GET /by-hand written by hand
core.register_action("sock_get", { "http-req" }, function(txn, addr)
  local s = core.tcp()
  s:settimeout(5)
  local ok, err = s:connect(addr)
  if not ok then
    set(txn, "sock", "connect failed: " .. tostring(err))
    return
  end
  -- send(data, i, j): only bytes i..j of the string
  local req = "XXGET /by-hand HTTP/1.1\r\nhost: vtc\r\nx-sock: 1\r\n\r\nYY"
  local last = s:send(req, 3, #req - 2)
  local status = s:receive("*l")
  local headers = {}
  local clen = 0
  while true do
    local line = s:receive("*l")
    if not line or line == "" then break end
    local n, v = line:match("^([^:]+):%s*(.*)$")
    headers[n:lower()] = v
    if n:lower() == "content-length" then clen = tonumber(v) end
  end
  -- a number of bytes, with a prefix
  local body = s:receive(clen, "body:")
  local peer_ip, peer_port = s:getpeername()
  local my_ip = s:getsockname()
  s:close()
  set(txn, "sock", string.format("sent=%d status=[%s] x-srv=%s body=[%s] peer=%s:%s me=%s",
      last, status, headers["x-srv"], body, peer_ip, peer_port, my_ip))
end, 1)

-- lua.sock_fail: nothing listens on port 1 of the loopback
core.register_action("sock_fail", { "http-req" }, function(txn)
  local s = core.tcp()
  local ok, err = s:connect("127.0.0.1", 1)
  set(txn, "sock", string.format("ok=%s err=%s", tostring(ok), tostring(err)))
  -- an invalid address is an error too, not an exception
  local s2 = core.tcp()
  local ok2, err2 = s2:connect("not an address")
  set(txn, "sock2", string.format("ok=%s err=%s", tostring(ok2), tostring(err2)))
  -- a socket never connected cannot send
  local r, e = s2:send("x")
  set(txn, "sock3", string.format("r=%s e=%s", tostring(r), tostring(e)))
end)

-- lua.sock_timeout <ip:port>: the server never answers: receive() times out
core.register_action("sock_timeout", { "http-req" }, function(txn, addr)
  local s = core.tcp()
  s:settimeout(0.3)
  assert(s:connect(addr))
  s:send("GET /never HTTP/1.1\r\nhost: vtc\r\n\r\n")
  local line, err, partial = s:receive("*l")
  s:close()
  set(txn, "sock", string.format("line=%s err=%s partial=[%s]", tostring(line), tostring(err),
                                 tostring(partial)))
end, 1)

-- lua.hc <ip:port> <ip:port> <ip:port>: a GET, a POST, a chunked answer
core.register_action("hc", { "http-req" }, function(txn, addr, addr2, addr3)
  local hc = core.httpclient()
  local r1, e1 = hc:get({ url = "http://" .. addr .. "/hc/get?q=1",
                          headers = { ["x-hc"] = { "a", "b" } }, timeout = 5000 })
  if not r1 then
    set(txn, "hc1", "error " .. tostring(e1))
  else
    set(txn, "hc1", string.format("%d %s x-srv=%s body=[%s]", r1.status, r1.reason,
                                  r1.headers["x-srv"][1], r1.body))
  end
  local r2, e2 = hc:post({ url = "http://" .. addr2 .. "/hc/post", body = "posted data" })
  set(txn, "hc2", r2 and string.format("%d body=[%s]", r2.status, r2.body) or ("error " .. tostring(e2)))
  local r3, e3 = hc:get({ url = "http://" .. addr3 .. "/hc/chunked" })
  set(txn, "hc3", r3 and string.format("%d body=[%s]", r3.status, r3.body) or ("error " .. tostring(e3)))
  -- nothing listens there
  local r4, e4 = hc:get({ url = "http://127.0.0.1:1/" })
  set(txn, "hc4", string.format("%s %s", tostring(r4), tostring(e4)))
end, 3)
