// expect: OK {}
// toJSON returning its own object is harmless.
({ toJSON() { return this; } });
