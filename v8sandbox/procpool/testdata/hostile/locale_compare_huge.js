// expect: TIMEOUT
// process-only
// localeCompare on 1 M-char strings: each call runs in ICU for a long time
// without checking for termination (in-process, TIMEOUT came 11-13 s after a
// 500 ms deadline). The parent's hard deadline ends it on time.
const a = "a".repeat(1e6);
const b = "a".repeat(1e6 - 1) + "b";
let n = 0;
for (;;) n += a.localeCompare(b);
