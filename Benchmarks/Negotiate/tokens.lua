-- wrk: every request carries the next unused SPNEGO token of $NEGOTIATE_TOKENS (a token is good once: the
-- gateway's replay cache refuses it the second time). Threads take disjoint stripes of the file.
local tokens = {}
local counter = 0
function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end
function init(args)
  local stride = tonumber(os.getenv("WRK_THREADS") or "1")
  local n = 0
  for line in io.lines(os.getenv("NEGOTIATE_TOKENS")) do
    if n % stride == id then tokens[#tokens + 1] = line end
    n = n + 1
  end
  index = 0
end
function request()
  index = index + 1
  local token = tokens[index]
  if token == nil then token = "exhausted" end
  return wrk.format("GET", nil, { ["Authorization"] = "Negotiate " .. token })
end
