-- CORS as an operator would add it in front of an API: preflight requests
-- (OPTIONS with Origin and Access-Control-Request-Method) are answered
-- here with 204; other requests from an allowed origin get
-- Access-Control-Allow-Origin on their response.

local allowed_origins = {
  ["https://app.example.com"] = true,
  ["https://admin.example.com"] = true,
}
local allowed_methods = "GET, POST, PUT, DELETE"
local allowed_headers = { ["content-type"] = true, ["authorization"] = true, ["x-request-id"] = true }

core.register_action("cors_request", { "http-req" }, function(txn)
  local origin = txn.sf:req_hdr("origin")
  if origin == "" then return end
  if txn.sf:method() == "OPTIONS" and txn.sf:req_hdr("access-control-request-method") ~= "" then
    if not allowed_origins[origin] then
      txn:done(txn:reply({ status = 403, headers = { ["content-type"] = { "text/plain" } },
                           body = "origin not allowed\n" }))
    end
    -- only the headers this API accepts are granted (req.fhdr: the whole
    -- value, req.hdr would give its last comma-separated element)
    local granted = {}
    for _, h in ipairs(core.tokenize(txn.sf:req_fhdr("access-control-request-headers"), ", ", true)) do
      if allowed_headers[h:lower()] then granted[#granted + 1] = h:lower() end
    end
    local reply = txn:reply()
    reply:set_status(204)
    reply:add_header("access-control-allow-origin", origin)
    reply:add_header("access-control-allow-methods", allowed_methods)
    if #granted > 0 then
      reply:add_header("access-control-allow-headers", table.concat(granted, ", "))
    end
    reply:add_header("access-control-allow-credentials", "true")
    reply:add_header("access-control-max-age", "600")
    reply:add_header("vary", "Origin")
    txn:done(reply)
  end
  if allowed_origins[origin] then
    txn:set_var("txn.cors_origin", origin)
  end
end)

core.register_action("cors_response", { "http-res" }, function(txn)
  local origin = txn:get_var("txn.cors_origin")
  if not origin then return end
  txn.http:res_set_header("access-control-allow-origin", origin)
  txn.http:res_set_header("access-control-allow-credentials", "true")
  txn.http:res_set_header("access-control-expose-headers", "x-request-id")
  txn.http:res_add_header("vary", "Origin")
end)
