-- A file that does not compile: line 4 has a statement Lua cannot parse.
local greeting = "hello"

local broken = = 3

core.register_action("never", { "http-req" }, function(txn) end)
