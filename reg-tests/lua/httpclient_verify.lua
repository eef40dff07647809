-- core.httpclient() over TLS under the global httpclient.ssl.* settings:
-- the result (status and body, or the error) is put in txn.hc.

core.register_action("hc_get", { "http-req" }, function(txn, url, dst)
  if dst == "" then dst = nil end
  local r, err = core.httpclient():get({ url = url, dst = dst, timeout = 5000 })
  txn:set_var("txn.hc", r and (r.status .. " " .. r.body) or ("error " .. tostring(err)))
end, 2)
