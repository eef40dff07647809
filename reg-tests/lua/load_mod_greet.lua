-- A module found by require() through lua-prepend-path.
local M = {}

function M.greeting(who)
  return "hello " .. who
end

M.loaded_at = "load_mod_greet"
return M
