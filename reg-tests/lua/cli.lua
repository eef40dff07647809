-- Runtime API commands written in Lua (core.register_cli): arguments,
-- output, payload lines, errors.

local counters = { hits = 0 }

core.register_action("count", { "http-req" }, function(txn)
  counters.hits = counters.hits + 1
end)

-- show luastats [<prefix>]: the words and the arguments come in order
core.register_cli({ "show", "luastats" }, "show luastats [<prefix>] : the Lua counters",
  function(applet, w1, w2, prefix, extra)
    applet:send(string.format("words=%s,%s\n", w1, w2))
    applet:send(string.format("%shits=%d\n", prefix or "", counters.hits))
    if extra then applet:send("extra=" .. extra .. "\n") end
  end)

-- set luacounter <value>
core.register_cli({ "set", "luacounter" }, "set luacounter <n> : sets the hits counter",
  function(applet, _, _, value)
    local n = tonumber(value)
    if not n then
      applet:send("a number is expected\n")
      return
    end
    counters.hits = n
  end)

-- lua sum <<: the payload's lines, one number each
core.register_cli({ "lua", "sum" }, "lua sum <<: adds the payload's numbers",
  function(applet)
    local total, lines = 0, 0
    while true do
      local l = applet:getline()
      if l == "" then break end
      lines = lines + 1
      total = total + (tonumber(l:match("%-?%d+")) or 0)
    end
    applet:send(string.format("lines=%d total=%d\n", lines, total))
  end)

-- lua fail: a run-time error
core.register_cli({ "lua", "fail" }, "lua fail : always fails", function(applet)
  applet:send("partial output\n")
  error("cli failure")
end)

-- lua sleep: may not wait
core.register_cli({ "lua", "sleep" }, "lua sleep : tries to sleep", function(applet)
  core.msleep(10)
  applet:send("slept\n")
end)
