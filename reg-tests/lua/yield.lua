-- Actions that wait: core.msleep(), core.yield() and act.YIELD. Each
-- waiting request is paired with another one that releases it: the waiter
-- goes on only once the releaser ran, and the releaser runs only once the
-- waiter waits. Both answer only if the loop serves one while the other
-- waits. A sequence number tells which finished first.

local pairs_state = {}   -- key -> { waiting = true|nil, released = true|nil }
local seq = 0

-- the key: url parameter k, kept in txn.k by the configuration (the
-- request's fetches are gone once the response is analysed)
local function state(txn)
  local key = txn:get_var("txn.k")
  local st = pairs_state[key]
  if not st then
    st = {}
    pairs_state[key] = st
  end
  return st
end

local function finish(txn, how)
  seq = seq + 1
  txn:set_var("txn.seq", seq)
  txn:set_var("txn.how", how)
end

-- sleeps 20 ms at a time until released (20 s at most)
core.register_action("sleeper", { "http-req", "http-res" }, function(txn)
  local st = state(txn)
  st.waiting = true
  local n = 0
  while not st.released and n < 1000 do
    core.msleep(20)
    n = n + 1
  end
  finish(txn, st.released and "released" or "gave-up")
end)

-- gives the loop back (core.yield) until released (20 s at most)
core.register_action("yielder", { "http-req" }, function(txn)
  local st = state(txn)
  st.waiting = true
  local t0 = core.now().sec
  local n = 0
  while not st.released and core.now().sec - t0 < 20 do
    core.yield()
    n = n + 1
  end
  finish(txn, st.released and ("released-after-yields:" .. (n > 0 and "some" or "none")) or "gave-up")
end)

-- returns act.YIELD until released: run again from the start each time
core.register_action("again", { "http-req" }, function(txn)
  local st = state(txn)
  local runs = (txn:get_priv() or 0) + 1
  txn:set_priv(runs)
  if not st.released and runs < 1000 then
    st.waiting = true
    act:wake_time(20)
    return act.YIELD
  end
  finish(txn, runs > 1 and "rerun" or "first-run")
  return act.CONTINUE
end)

-- waits for the waiter to wait, then releases it
core.register_action("releaser", { "http-req" }, function(txn)
  local st = state(txn)
  local n = 0
  while not st.waiting and n < 1000 do
    core.msleep(20)
    n = n + 1
  end
  st.released = true
  finish(txn, "releaser")
end)
