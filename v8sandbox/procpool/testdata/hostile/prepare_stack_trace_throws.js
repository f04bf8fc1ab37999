// expect: EVAL_ERROR
// A throwing Error.prepareStackTrace while the engine reports an error.
Error.prepareStackTrace = () => {
  throw new Error("nope");
};
null.x;
