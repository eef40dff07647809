-- Bearer JWT verification (HS256) as an operator would write it: the
-- signature is computed with the hmac converter, the parts decoded with
-- ub64dec, the signature encoded with ub64enc; a missing, malformed,
-- forged or expired token gets a 401 with a JSON body. The claims of a
-- valid token are passed to the server.

-- the shared secret; hmac() takes its key in base64
local SECRET = "sluice-test-secret-2026"

local function deny(txn, err)
  local body = string.format('{"error":"invalid_token","error_description":"%s"}', err)
  local reply = txn:reply({
    status = 401,
    headers = {
      ["content-type"] = { "application/json" },
      ["www-authenticate"] = { string.format('Bearer realm="api", error="invalid_token", error_description="%s"', err) },
      ["cache-control"] = { "no-store" },
    },
    body = body,
  })
  txn:Info("jwt: denied: " .. err)
  txn:done(reply)
end

-- compares without stopping at the first difference
local function same(a, b)
  if #a ~= #b then return false end
  local diff = 0
  for i = 1, #a do
    diff = diff | (a:byte(i) ~ b:byte(i))
  end
  return diff == 0
end

-- a claim of a flat JSON object: a string or a number
local function claim(json, name)
  local s = json:match('"' .. name .. '"%s*:%s*"([^"]*)"')
  if s then return s end
  return tonumber(json:match('"' .. name .. '"%s*:%s*(%-?%d+)'))
end

core.register_action("jwt_verify", { "http-req" }, function(txn)
  local auth = txn.sf:req_hdr("authorization")
  local token = auth:match("^[Bb]earer%s+(%S+)$")
  if not token then
    return deny(txn, "missing bearer token")
  end
  local h64, p64, s64 = token:match("^([%w_-]+)%.([%w_-]+)%.([%w_-]+)$")
  if not h64 then
    return deny(txn, "malformed token")
  end
  local header = txn.c:ub64dec(h64)
  local payload = txn.c:ub64dec(p64)
  if not header or not payload then
    return deny(txn, "malformed token")
  end
  if claim(header, "alg") ~= "HS256" then
    return deny(txn, "unsupported algorithm")
  end
  local mac = txn.c:hmac(h64 .. "." .. p64, "sha256", txn.c:base64(SECRET))
  if not same(txn.c:ub64enc(mac), s64) then
    return deny(txn, "bad signature")
  end
  local exp = claim(payload, "exp")
  if not exp or exp <= core.now().sec then
    return deny(txn, "token expired")
  end
  -- the server trusts these, not what the client sent
  txn.http:req_del_header("x-jwt-sub")
  txn.http:req_set_header("x-jwt-sub", claim(payload, "sub") or "")
  txn.http:req_set_header("x-jwt-role", claim(payload, "role") or "none")
  txn.http:req_del_header("authorization")
end)
