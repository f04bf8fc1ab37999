// expect: EVAL_ERROR
// A result whose toJSON recurses without end.
const make = () => ({ toJSON: () => [make()] });
make();
