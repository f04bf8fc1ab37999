// expect: EVAL_ERROR
// A toString that converts itself.
const o = {
  toString() {
    return "" + o;
  },
};
"" + o;
