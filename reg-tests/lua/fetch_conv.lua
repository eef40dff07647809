-- Sample fetches and converters written in Lua, used by ACLs, use_backend,
-- header formats and log-format, with arguments.

-- lua.tier(<default>): the customer tier of the API key, which the
-- configuration keeps in txn.key (a log-format runs once the request head
-- is gone)
core.register_fetches("tier", function(txn, default)
  local key = txn:get_var("txn.key") or ""
  if key == "gold-123" then
    return "gold"
  elseif key ~= "" then
    return "silver"
  end
  return default
end)

-- lua.hdrs_plus(<n>): an integer, the number of request header fields + n
core.register_fetches("hdrs_plus", function(txn, n)
  return txn.f:req_hdr_cnt() + tonumber(n)
end)

-- lua.is_local: a boolean
core.register_fetches("is_local", function(txn)
  return txn.f:src() == "127.0.0.1"
end)

-- lua.nothing: no value
core.register_fetches("nothing", function(txn)
  return nil
end)

-- lua.broken: an error: no value, logged
core.register_fetches("broken", function(txn)
  error("fetch failure")
end)

-- lua.early: core.done() ends the fetch with its value
core.register_fetches("early", function(txn)
  core.done("done-early")
  return "never"
end)

-- lua.sleepy: a fetch cannot wait: an error, no value
core.register_fetches("sleepy", function(txn)
  core.msleep(10)
  return "slept"
end)

-- lua.yielder: core.yield() is a no-op where nothing may wait
core.register_fetches("yielder", function(txn)
  core.yield()
  return "yielded"
end)

-- lua.rot13: letters rotated by 13
core.register_converters("rot13", function(s)
  return (s:gsub("%a", function(c)
    local base = c:match("%l") and 97 or 65
    return string.char((c:byte() - base + 13) % 26 + base)
  end))
end)

-- lua.wrap(<left>,<right>)
core.register_converters("wrap", function(s, left, right)
  return left .. s .. right
end)

-- lua.failing: an error: no value
core.register_converters("failing", function(s)
  error("converter failure")
end)

-- the registered fetch and converter are methods of txn.f and txn.c too
core.register_action("via_txn", { "http-req" }, function(txn)
  txn.http:req_set_header("x-via-f", txn.f:lua_tier("from-action"))
  txn.http:req_set_header("x-via-c", txn.c:lua_wrap("mid", "[", "]"))
end)
