-- The Proxy, Server, Listener and StickTable classes, core.proxies,
-- core.frontends, core.backends, core.get_info(); Map, Regex, Concat;
-- core.tokenize, parse_addr, match_addr and the date parsers.

local dir = debug.getinfo(1, "S").source:match("^@(.*/)")
local map_file = dir .. "classes.map"
local acl_file = dir .. "classes.acl"

-- read now, while the file loads
local map_str = Map.new(map_file, Map._str)
local map_beg = Map.new(map_file, Map._beg)

local function keys(t)
  local out = {}
  for k in pairs(t) do out[#out + 1] = k end
  table.sort(out)
  return table.concat(out, ",")
end

local function answer(applet, lines)
  local body = table.concat(lines, "\n") .. "\n"
  applet:add_header("content-type", "text/plain")
  applet:add_header("content-length", #body)
  applet:start_response()
  applet:send(body)
end

-- /proxies: what the classes show of the configuration
core.register_service("proxies", "http", function(applet)
  local out = {}
  local function add(k, v) out[#out + 1] = k .. "=" .. tostring(v) end
  add("proxies", keys(core.proxies))
  add("frontends", keys(core.frontends))
  add("backends", keys(core.backends))
  local be = core.backends["be"]
  add("be.name", be.name)
  add("be.uuid", be.uuid)
  add("be.cap", be:get_cap())
  add("be.mode", be:get_mode())
  add("be.servers", keys(be.servers))
  local fe = core.frontends["fe"]
  add("fe.cap", fe:get_cap())
  add("fe.listeners", keys(fe.listeners))
  add("li.stats.status", fe.listeners["main"]:get_stats().status)
  add("fe.stats.pxname", fe:get_stats().pxname)
  add("be.stats.svname", be:get_stats().svname)
  add("lst.cap", core.proxies["lst"]:get_cap())
  add("lst.mode", core.proxies["lst"]:get_mode())
  local s1 = be.servers["s1"]
  add("s1.name", s1.name)
  add("s1.puid", s1.puid)
  add("s1.addr", s1:get_addr())
  add("s1.weight", s1:get_weight())
  add("s1.maxconn", s1:get_maxconn())
  add("s1.draining", s1:is_draining())
  add("s1.stats.status", s1:get_stats().status)
  add("s1.stats.weight", s1:get_stats().weight)
  -- changes go through the runtime API's commands
  s1:set_weight("42")
  s1:set_maxconn("17")
  be.servers["s2"]:set_drain()
  add("s2.draining", be.servers["s2"]:is_draining())
  local ok, err = pcall(s1.set_weight, s1, "300")
  add("bad.weight", ok and "accepted" or err)
  be.servers["s3"]:set_addr("127.0.0.2", "8080")
  add("s3.addr", be.servers["s3"]:get_addr())
  -- the stick table of "be"
  local st = be.stktable
  local info = st:info()
  add("st.type", info.type)
  add("st.size", info.size)
  add("st.used", info.used)
  add("st.data", keys(info.data))
  local e = st:lookup("10.1.2.3")
  add("st.lookup", e and ("gpc0=" .. e.gpc0 .. " conn_cnt=" .. e.conn_cnt) or "nil")
  add("st.lookup.missing", tostring(st:lookup("10.9.9.9")))
  add("st.dump", keys(st:dump()))
  add("st.dump.filtered", keys(st:dump({ { "gpc0", "ge", 2 } })))
  add("fe.stktable", tostring(fe.stktable))
  -- show info
  local i = core.get_info()
  add("info.pid.isnum", tostring(tonumber(i.Pid) ~= nil))
  add("info.has.uptime", tostring(i.Uptime_sec ~= nil))
  answer(applet, out)
end)

-- /maps?key=<k>: lookups through the Map objects made at load time
core.register_service("maps", "http", function(applet)
  local key = applet.qs:match("key=([^&]*)") or ""
  answer(applet, {
    "str=" .. tostring(map_str:lookup(key)),
    "beg=" .. tostring(map_beg:lookup(key)),
    "slookup=[" .. map_str:slookup(key) .. "]",
  })
end)

-- lua.map_edit <op>: core.set_map/del_map/add_acl/del_acl of the key and
-- value in the request's x-key and x-value
core.register_action("map_edit", { "http-req" }, function(txn, op)
  local key, value = txn.sf:req_hdr("x-key"), txn.sf:req_hdr("x-value")
  if op == "set" then
    core.set_map(map_file, key, value)
  elseif op == "del" then
    core.del_map(map_file, key)
  elseif op == "add_acl" then
    core.add_acl(acl_file, key)
  elseif op == "del_acl" then
    core.del_acl(acl_file, key)
  end
end, 1)

-- /misc: Regex, Concat, tokenize, addresses, dates
core.register_service("misc", "http", function(applet)
  local out = {}
  local function add(k, v) out[#out + 1] = k .. "=" .. tostring(v) end
  local ok, re = Regex.new("^/user/([0-9]+)/(\\w+)$", true)
  add("re.ok", ok)
  add("re.exec", re:exec("/user/42/profile"))
  add("re.exec.no", re:exec("/USER/42/profile"))
  local m, groups = re:match("/user/42/profile")
  add("re.match", tostring(m) .. ":" .. table.concat(groups, "|"))
  local _, rei = Regex.new("^/user/", false)
  add("re.nocase", rei:exec("/USER/1"))
  local bad, why = Regex.new("(unclosed", true)
  add("re.bad", tostring(bad) .. ":" .. (why:match("missing") and "message" or why))
  local c = core.concat()
  c:add("a")
  c:add("bc")
  c:add("")
  c:add("d")
  add("concat", c:dump())
  add("tok", table.concat(core.tokenize("a,b;;c", ",;"), "|"))
  add("tok.noblank", table.concat(core.tokenize("a,b;;c", ",;", true), "|"))
  local net = core.parse_addr("10.0.0.0/8")
  add("addr.in", core.match_addr(net, core.parse_addr("10.20.30.40")))
  add("addr.out", core.match_addr(net, core.parse_addr("11.0.0.1")))
  add("addr.v6", core.match_addr(core.parse_addr("2001:db8::/32"), core.parse_addr("2001:db8:1::1")))
  add("addr.bad", tostring(core.parse_addr("300.1.1.1")))
  add("date.imf", core.http_date("Sun, 06 Nov 1994 08:49:37 GMT"))
  add("date.850", core.http_date("Sunday, 06-Nov-94 08:49:37 GMT"))
  add("date.asc", core.http_date("Sun Nov  6 08:49:37 1994"))
  add("date.imf_only", tostring(core.imf_date("Sunday, 06-Nov-94 08:49:37 GMT")))
  add("date.bad", tostring(core.http_date("yesterday")))
  add("now", tostring(math.type(core.now().sec) == "integer" and core.now().usec < 1000000))
  answer(applet, out)
end)
