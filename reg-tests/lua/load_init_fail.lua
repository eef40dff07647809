-- The second init function fails: the process must not start.
core.register_init(function()
  core.Info("first init ran")
end)

core.register_init(function()
  error("init refuses to start")
end)
