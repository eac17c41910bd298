-- Allocation-heavy tree building (from the Computer Language Benchmarks Game).
local function bottom_up(depth)
  if depth == 0 then return {} end
  depth = depth - 1
  return { bottom_up(depth), bottom_up(depth) }
end
local function check(tree)
  if tree[1] then return 1 + check(tree[1]) + check(tree[2]) end
  return 1
end
local N = tonumber(arg[1]) or 11
local maxdepth = math.max(6, N)
print("stretch", check(bottom_up(maxdepth + 1)))
local long = bottom_up(maxdepth)
for depth = 4, maxdepth, 2 do
  local iters = 2 ^ (maxdepth - depth + 4)
  local c = 0
  for _ = 1, iters do c = c + check(bottom_up(depth)) end
  print(string.format("%d trees of depth %d check: %d", iters, depth, c))
end
print("long lived", check(long))
