// expect: EVAL_ERROR
// A cyclic result cannot be serialized.
const o = {};
o.self = o;
o;
