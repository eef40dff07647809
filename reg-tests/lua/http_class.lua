-- The HTTP class in http-request, http-response and http-after-response
-- actions: reading the headers, adding, setting, deleting and rewriting
-- them, and changing the start lines.

-- "a|b|c" of every value of header <name> in a table of get_headers()
local function joined(h, name)
  local vals = h[name]
  if not vals then return "absent" end
  local out = {}
  -- values are indexed from 0
  for i = 0, #vals do out[#out + 1] = vals[i] end
  return table.concat(out, "|")
end

core.register_action("req_headers", { "http-req" }, function(txn)
  local h = txn.http:req_get_headers()
  txn.http:req_set_header("x-seen-multi", joined(h, "x-multi"))
  txn.http:req_set_header("x-seen-mixed-case", joined(h, "x-mixed-case"))
  txn.http:req_set_header("x-seen-absent", joined(h, "x-absent"))
  txn.http:req_add_header("x-added", "a1")
  txn.http:req_add_header("x-added", "a2")
  txn.http:req_set_header("x-set", "replaced")
  txn.http:req_del_header("x-gone")
  -- the whole value: "left, right" -> "right, left"
  txn.http:req_rep_header("x-rep", "^(.*), (.*)$", "\\2, \\1")
  -- each comma-separated value: v1 -> value1
  txn.http:req_rep_value("x-vals", "^v([0-9])$", "value\\1")
end)

-- lua.target <what> <value>: two words on the rule line (nb_args 2)
core.register_action("target", { "http-req" }, function(txn, what, value)
  if what == "method" then
    txn.http:req_set_method(value)
  elseif what == "path" then
    txn.http:req_set_path(value)
  elseif what == "query" then
    txn.http:req_set_query(value)
  elseif what == "uri" then
    txn.http:req_set_uri(value)
  else
    error("unknown target " .. tostring(what))
  end
end, 2)

core.register_action("res_headers", { "http-res" }, function(txn)
  local h = txn.http:res_get_headers()
  txn.http:res_set_header("x-srv-seen", joined(h, "x-srv"))
  txn.http:res_add_header("x-res-added", "r1")
  txn.http:res_set_header("x-srv-set", "replaced")
  txn.http:res_del_header("x-srv-secret")
  txn.http:res_rep_header("x-srv-rep", "^(.*), (.*)$", "\\2, \\1")
  txn.http:res_rep_value("x-srv-vals", "^v([0-9])$", "value\\1")
end)

-- lua.status <code> [reason]: the reason word is optional ("-" for none)
core.register_action("status", { "http-res", "http-after-res" }, function(txn, code, reason)
  if reason == "-" then reason = nil end
  txn.http:res_set_status(tonumber(code), reason)
end, 2)

core.register_action("after", { "http-after-res" }, function(txn)
  -- sees the status the http-response rules set
  txn.http:res_set_header("x-after-status", txn.sf:status())
  txn.http:res_add_header("x-after", "yes")
end)
