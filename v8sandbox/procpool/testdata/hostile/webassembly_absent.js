// expect: OK "undefined"
// WebAssembly is not exposed.
typeof WebAssembly;
