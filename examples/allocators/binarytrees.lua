-- binary-trees (Computer Language Benchmarks Game shape): allocation churn in Lua 5.4.
-- Every tree node is a fresh table; Lua's allocator calls realloc/free for each, so the
-- C library's malloc is on the hot path.   lua5.4 binarytrees.lua [max_depth]

local function bottom_up(depth)
  if depth == 0 then return {} end
  depth = depth - 1
  return { bottom_up(depth), bottom_up(depth) }
end

local function check(tree)
  if tree[1] then return 1 + check(tree[1]) + check(tree[2]) end
  return 1
end

local N = tonumber(arg and arg[1]) or 14
local min_depth = 4
local max_depth = math.max(min_depth + 2, N)

local stretch = max_depth + 1
io.write(string.format("stretch tree of depth %d\t check: %d\n", stretch, check(bottom_up(stretch))))

local long_lived = bottom_up(max_depth)
for depth = min_depth, max_depth, 2 do
  local iters = 2 ^ (max_depth - depth + min_depth)
  local total = 0
  for _ = 1, iters do total = total + check(bottom_up(depth)) end
  io.write(string.format("%d\t trees of depth %d\t check: %d\n", iters, depth, total))
end
io.write(string.format("long lived tree of depth %d\t check: %d\n", max_depth, check(long_lived)))
