// expect: HEAP_LIMIT|TIMEOUT|SANDBOX_CRASHED
// process-only
// Intl.Segmenter over a 2 M-grapheme string: ICU allocates outside the JS
// heap, so the heap cap does not see it (in-process this aborted the whole
// process at ~4 GB). A worker process is killed or dies instead.
const s = "👍🏽".repeat(2e6);
const parts = [...new Intl.Segmenter("en", { granularity: "grapheme" }).segment(s)];
parts.length;
