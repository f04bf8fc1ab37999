// expect: HEAP_LIMIT
// timeout: 60s
// Preallocated arrays filled in one builtin call each (about 160 MB against
// 64 MB): a fill can allocate and finish between two heap polls, so the
// heap is checked again when the script ends.
const a = new Array(2e7).fill(1);
const b = new Array(2e7).fill(2);
a.length + b.length;
