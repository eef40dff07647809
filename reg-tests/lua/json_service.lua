-- A small JSON API answered by a Lua service: a health document listing a
-- backend's servers, an echo of the request, a JSON 404. The encoder is
-- written here (keys sorted, strings escaped; a table with items is an
-- array).

local function encode(v)
  local t = type(v)
  if t == "table" then
    if #v > 0 then
      local out = {}
      for i = 1, #v do out[i] = encode(v[i]) end
      return "[" .. table.concat(out, ",") .. "]"
    end
    local ks = {}
    for k in pairs(v) do ks[#ks + 1] = k end
    table.sort(ks)
    local out = {}
    for _, k in ipairs(ks) do out[#out + 1] = encode(tostring(k)) .. ":" .. encode(v[k]) end
    return "{" .. table.concat(out, ",") .. "}"
  elseif t == "string" then
    return '"' .. v:gsub('[%c"\\]', function(c)
      local named = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }
      return named[c] or string.format("\\u%04x", c:byte())
    end) .. '"'
  elseif t == "number" or t == "boolean" then
    return tostring(v)
  end
  return "null"
end

local function send_json(applet, status, doc)
  local body = encode(doc)
  applet:set_status(status)
  applet:add_header("content-type", "application/json; charset=utf-8")
  applet:add_header("cache-control", "no-store")
  applet:add_header("content-length", #body)
  applet:start_response()
  applet:send(body)
end

core.register_service("api", "http", function(applet)
  if applet.path == "/api/health" then
    local servers = {}
    local names = {}
    local be = core.backends["app"]
    for name in pairs(be.servers) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      local srv = be.servers[name]
      servers[#servers + 1] = { name = name, weight = srv:get_weight(), address = srv:get_addr() }
    end
    send_json(applet, 200, { status = "ok", backend = be.name, servers = servers })
  elseif applet.path == "/api/echo" then
    local body = applet:receive()
    local ua = applet.headers["user-agent"]
    send_json(applet, 200, {
      method = applet.method,
      path = applet.path,
      query = applet.qs,
      user_agent = ua and ua[0] or false,
      length = #body,
      body = body,
    })
  else
    send_json(applet, 404, { error = "not found", path = applet.path })
  end
end)
