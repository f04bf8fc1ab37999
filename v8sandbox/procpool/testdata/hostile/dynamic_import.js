// expect: EVAL_ERROR
// import() has no module loader behind it.
import("fs");
