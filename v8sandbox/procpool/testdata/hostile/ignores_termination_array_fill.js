// expect: TIMEOUT
// process-only
// new Array(2**27).fill(0) ignores termination for tens of seconds and grows
// to gigabytes.
new Array(2 ** 27).fill(0);
