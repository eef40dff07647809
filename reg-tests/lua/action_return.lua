-- Action return codes (act.*) and txn:done() with a reply built as a
-- plain table or with the Reply class.

-- lua.ret <code>: returns act.<code>
core.register_action("ret", { "http-req", "http-res" }, function(txn, code)
  local v = act[code]
  if v == nil then error("no act." .. code) end
  return v
end, 1)

core.register_action("done_table", { "http-req", "http-res" }, function(txn)
  txn:done({
    status = 418,
    reason = "I'm A Teapot",
    headers = {
      ["content-type"] = { "text/plain" },
      ["cache-control"] = { "no-cache", "no-store" },
      -- the length is computed from the body, whatever this says
      ["content-length"] = { "999" },
    },
    body = "short and stout\n",
  })
  -- never reached: done() ends the action
  txn.http:req_set_header("x-after-done", "reached")
end)

core.register_action("done_class", { "http-req", "http-res" }, function(txn)
  local reply = txn:reply()
  reply:set_status(401, "Who Are You")
  reply:add_header("www-authenticate", 'Bearer realm="vtc"')
  reply:add_header("x-multi", "one")
  reply:add_header("x-multi", "two")
  reply:add_header("x-removed", "gone")
  reply:del_header("x-removed")
  reply:set_body("{\"error\":\"unauthorized\"}")
  txn:done(reply)
end)

core.register_action("done_default", { "http-req" }, function(txn)
  -- an empty reply: a 200 with no body
  txn:done(txn:reply())
end)

core.register_action("done_noreply", { "http-req" }, function(txn)
  txn:done()
end)

-- On every response, local replies included: reads the head being sent
core.register_action("after_mark", { "http-after-res" }, function(txn)
  local h = txn.http:res_get_headers()
  local cl = h["content-length"] and h["content-length"][0] or "none"
  txn.http:res_set_header("x-lua-after", txn.sf:status() .. ":" .. cl)
end)
