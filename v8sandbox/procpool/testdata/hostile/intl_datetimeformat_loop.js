// expect: TIMEOUT|HEAP_LIMIT|SANDBOX_CRASHED
// process-only
// A loop creating Intl.DateTimeFormat objects: each holds ICU memory outside
// the JS heap (in-process it grew the gateway to 3.2 GB).
const keep = [];
for (let i = 0; ; i++) keep.push(new Intl.DateTimeFormat("en-US", { timeZone: "UTC", dateStyle: "full", timeStyle: "long" }));
