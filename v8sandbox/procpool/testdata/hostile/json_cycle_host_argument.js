// expect: EVAL_ERROR
// A cyclic argument to a host function: the bridge's stringify throws.
const o = {};
o.self = o;
emit(o);
