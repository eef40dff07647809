-- "show stat" is a command of sluice's already
core.register_cli({ "show", "stat" }, "show stat : mine", function(applet) end)
