-- Table inserts, lookups and sorting.
local n = tonumber(arg[1]) or 150000
local t, h = {}, {}
for i = 1, n do t[i] = (i * 7919) % n; h["k" .. (i % 5000)] = i end
table.sort(t)
local s = 0
for i = 1, n, 3 do s = s + t[i] + (h["k" .. (i % 5000)] or 0) end
print(s, #t)
