// expect: EVAL_ERROR
// BigInt cannot be serialized as JSON.
({ n: 10n });
