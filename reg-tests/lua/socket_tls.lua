-- TLS client sockets: Socket:connect_ssl() and core.httpclient() with an
-- https:// URL, against a TLS frontend of the same process (a
-- self-signed certificate: Lua sockets do not verify it, as HAProxy's; the
-- configuration says httpclient.ssl.verify none for the httpclient).

core.register_action("tls_raw", { "http-req" }, function(txn, addr)
  local s = core.tcp()
  s:settimeout(5)
  local ip, port = addr:match("^(.*):(%d+)$")
  local ok, err = s:connect_ssl(ip, tonumber(port))
  if not ok then
    txn:set_var("txn.raw", "connect_ssl failed: " .. tostring(err))
    return
  end
  s:send("GET /raw HTTP/1.1\r\nhost: tls\r\nconnection: close\r\n\r\n")
  local status = s:receive("*l")
  local rest = s:receive("*a")
  s:close()
  txn:set_var("txn.raw", status .. " | " .. (rest:match("\r\n\r\n(.*)$") or "?"))
end, 1)

core.register_action("tls_hc", { "http-req" }, function(txn, addr)
  local r, err = core.httpclient():post({ url = "https://" .. addr .. "/hc", body = "secret",
                                           headers = { ["x-via"] = "hc" } })
  txn:set_var("txn.hc", r and (r.status .. " | " .. r.body) or ("error " .. tostring(err)))
end, 1)
