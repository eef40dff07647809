-- The TXN class: variables (get, set, unset, ifexist), private data kept
-- from the request to the response, fields of the script's own, and the
-- Fetches and Converters objects (f, sf, c, sc).

core.register_action("vars", { "http-req" }, function(txn)
  txn:set_var("txn.lua_str", "from-lua")
  txn:set_var("txn.lua_int", 41)
  txn:set_var("req.lua_bool", true)
  -- ifexist: the configuration uses txn.cfg_known, never txn.cfg_unknown
  txn:set_var("txn.cfg_known", "set-by-lua", true)
  txn:set_var("txn.cfg_unknown", "should-not-exist", true)
  txn:unset_var("txn.to_unset")
  -- get_var: what the configuration set, what Lua set, what does not exist
  local h = txn.http
  h:req_set_header("x-get-cfg", txn:get_var("txn.from_cfg"))
  h:req_set_header("x-get-int", tostring(txn:get_var("txn.lua_int") + 1))
  h:req_set_header("x-get-int-type", math.type(txn:get_var("txn.lua_int")))
  h:req_set_header("x-get-missing", tostring(txn:get_var("txn.cfg_unknown")))
  h:req_set_header("x-get-unset", tostring(txn:get_var("txn.to_unset")))
  -- private data: read back by the response action of the same transaction
  txn:set_priv({ path = txn.sf:path(), n = 1 })
  -- a field of the script's own on the TXN object
  txn.mine = "field"
  h:req_set_header("x-field", txn.mine)
end)

core.register_action("priv_res", { "http-res" }, function(txn)
  local p = txn:get_priv()
  if p then
    p.n = p.n + 1
    txn.http:res_set_header("x-priv", p.path .. ":" .. p.n)
  else
    txn.http:res_set_header("x-priv", "none")
  end
  -- a transaction variable set by the request action
  txn.http:res_set_header("x-res-var-txn", tostring(txn:get_var("txn.lua_str")))
end)

core.register_action("fetches", { "http-req" }, function(txn)
  local h = txn.http
  -- f: typed values, nil for none; sf: strings, "" for none
  h:req_set_header("x-f-host", txn.f:req_hdr("host"))
  h:req_set_header("x-f-absent", tostring(txn.f:req_hdr("x-absent")))
  h:req_set_header("x-sf-absent", "[" .. txn.sf:req_hdr("x-absent") .. "]")
  local cnt = txn.f:req_hdr_cnt("x-multi")
  h:req_set_header("x-f-cnt", math.type(cnt) .. ":" .. cnt)
  local scnt = txn.sf:req_hdr_cnt("x-multi")
  h:req_set_header("x-sf-cnt", type(scnt) .. ":" .. scnt)
  h:req_set_header("x-f-src", txn.f:src())
  -- a fetch with a dot in its name: req.hdr written req_hdr, url_param
  h:req_set_header("x-f-param", txn.f:url_param("id"))
  -- c and sc: converters, with arguments
  h:req_set_header("x-c-lower", txn.c:lower("MiXeD"))
  h:req_set_header("x-c-hex", txn.c:hex("AB"))
  local len = txn.c:length("abcd")
  h:req_set_header("x-c-len", math.type(len) .. ":" .. len)
  local slen = txn.sc:length("abcd")
  h:req_set_header("x-sc-len", type(slen) .. ":" .. slen)
  h:req_set_header("x-c-field", txn.c:field("a,b,c", 2, ","))
  h:req_set_header("x-c-sha", txn.c:hex(txn.c:sha2("abc", 256)):lower())
  -- a bad argument is a Lua error the script can catch
  local ok, err = pcall(function() return txn.c:field("a,b", "notanumber", ",") end)
  h:req_set_header("x-c-badarg", ok and "accepted" or "refused")
end)
