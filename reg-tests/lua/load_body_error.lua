-- A file that compiles but fails while its body runs (line 6).
local limits = { max = 10 }

core.register_action("early", { "http-req" }, function(txn) end)

local n = limits.max + limits.missing
