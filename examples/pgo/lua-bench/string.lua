-- String building, pattern matching and formatting.
local n = tonumber(arg[1]) or 60000
local parts = {}
for i = 1, n do parts[#parts + 1] = string.format("%d:%s", i, string.rep("ab", i % 7)) end
local s = table.concat(parts, ",")
local count, total = 0, 0
for num, word in s:gmatch("(%d+):(%a*)") do count = count + 1; total = total + #word + tonumber(num) % 13 end
print(count, total, #s, (s:gsub("ab", "x")):len())
