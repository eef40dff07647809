-- The Channel class in mode tcp: tcp-request content and tcp-response
-- content actions reading, waiting for, rewriting, sending and forwarding
-- the bytes of a TCP stream. The backend is a Lua TCP service answering
-- with an HTTP response whose body is exactly the bytes it received.

-- waits until the input holds <marker>; returns the input
local function wait_for(ch, marker)
  while true do
    local d = ch:data()
    if d and d:find(marker, 1, true) then return d end
    -- asking for one byte more than there is waits for more
    if not ch:data(0, ch:input() + 1) then return ch:data() end
  end
end

core.register_action("chn_req", { "tcp-req" }, function(txn)
  local ch = txn.req
  local checks = {}
  -- the first line (the client sends it whole)
  local l1 = ch:line()
  checks[#checks + 1] = "data05=" .. ch:data(0, 5)
  checks[#checks + 1] = "data-off=" .. ch:data(6, 4)
  checks[#checks + 1] = "is_resp=" .. tostring(ch:is_resp())
  ch:forward(#l1)
  checks[#checks + 1] = "output=" .. ch:output()
  -- the second line comes in two pieces: line() waits for its end
  local l2 = ch:line()
  checks[#checks + 1] = "l2=" .. l2:gsub("\n", "")
  ch:set(l2:upper(), 0, #l2)
  ch:forward(#l2)
  -- goes out before the input left
  ch:send("sent-by-lua\n")
  -- the rest: "third line\nEND\n"
  wait_for(ch, "END\n")
  ch:remove(0, #"third ")
  ch:prepend("prepended\n")
  ch:remove(ch:input() - 4, 4)
  ch:append("appended\n")
  ch:insert("inserted\n", ch:input() - #"appended\n")
  ch:append(table.concat(checks, ",") .. "\nEND\n")
end)

-- the response: its status line replaced, a header inserted, the body
-- read whole (the service closes after it) and upper-cased
core.register_action("chn_res", { "tcp-res" }, function(txn)
  local ch = txn.res
  local status = ch:line()
  local all = ch:data(0, -1)
  local head_end = all:find("\r\n\r\n", 1, true)
  local body = all:sub(head_end + 4)
  local out = "HTTP/1.1 200 Rewritten By Lua\r\n" ..
              "x-res-lua: " .. tostring(ch:is_resp()) .. "\r\n" ..
              "x-old-status: " .. status:gsub("\r\n", "") .. "\r\n" ..
              "content-length: " .. #body .. "\r\n\r\n" .. body:upper()
  ch:set(out)
end)

-- the deprecated functions: getline() and get() take the bytes out of the
-- input, dup() copies them
core.register_action("chn_old", { "tcp-req" }, function(txn)
  local ch = txn.req
  -- called at once, before any byte came: waits for a whole line
  local first = ch:getline()
  ch:send("got " .. first)
  local out_len = ch:get_out_len()
  local rest = wait_for(ch, "END\n")
  local copy = ch:dup()
  local taken = ch:get()
  ch:send(string.format("in_len=%d out_len=%d same=%s\n", ch:get_in_len(), out_len,
                        tostring(copy == taken and rest == taken)))
  ch:send(taken:upper())
end)

-- line() waits for its end while the inspect-delay runs; once it ran out,
-- it returns what is there
core.register_action("chn_final", { "tcp-req" }, function(txn)
  local l = txn.req:line()
  txn.req:set("final:[" .. tostring(l) .. "] may_recv=" .. tostring(txn.req:may_recv()) .. "\nEND\n")
end)

-- a tcp-request action in an HTTP frontend: only the lengths are offered
core.register_action("chn_http", { "tcp-req" }, function(txn)
  local ok, err = pcall(function() return txn.req:data() end)
  txn:set_var("txn.chn_http", (ok and "readable" or "refused") .. ":" .. txn.req:input())
end)

core.register_service("echo_lines", "tcp", function(applet)
  local got = {}
  repeat
    local l = applet:getline()
    got[#got + 1] = l
  until l == "" or l == "END\n"
  local body = table.concat(got)
  applet:send("HTTP/1.1 200 OK\r\ncontent-length: " .. #body .. "\r\n\r\n" .. body)
end)
