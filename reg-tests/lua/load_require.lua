-- require() of a module in the test's directory (lua-prepend-path), and an
-- init function that runs before traffic: it fills a map entry and a Lua
-- global that the requests see.
local greet = require("load_mod_greet")

-- the directory of this file, where the configuration's map file is
local dir = debug.getinfo(1, "S").source:match("^@(.*/)")
local init_map_file = dir .. "load_require.map"

local init_runs = 0
local seen_in_init = "none"

core.register_init(function()
  init_runs = init_runs + 1
  -- the map file is loaded by the configuration: set_map reaches it
  core.set_map(init_map_file, "/init", "from-init")
  seen_in_init = greet.greeting("init")
end)

core.register_action("greet", { "http-req" }, function(txn)
  txn.http:req_set_header("x-greeting", greet.greeting(txn.sf:req_hdr("x-who")))
  txn.http:req_set_header("x-module", greet.loaded_at)
  txn.http:req_set_header("x-init-runs", tostring(init_runs))
  txn.http:req_set_header("x-init-saw", seen_in_init)
end)
