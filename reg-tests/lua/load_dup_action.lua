-- Registering the same action name twice is refused (line 5).
core.register_action("twice", { "http-req" }, function(txn) end)

-- another rule set does not make it another action
core.register_action("twice", { "http-res" }, function(txn) end)
