// expect: HEAP_LIMIT
// timeout: 60s
// One growing array of small integers: its backing store is a single large
// allocation that V8 lets past the old-generation limit, so the heap cap
// must also be checked while the script runs (160 MB against 64 MB).
const a = [];
for (let i = 0; i < 2e7; i++) a.push(i);
a.length;
