// prelude.js is trusted code that runs in every run_code context after the
// engine's bootstrap and before the user's code. Go runs it, then
// console.js, in the strict function scope of internal/jsvalue's kit (see
// prelude.go): both use the kit's captured built-ins and helpers and its
// result sanitizer, and none of it is reachable from user code except
// through the globals installed at the end of this file.
//
// It installs:
//   - console, writing through the sync host function __runcode.console;
//   - __isogate_run(fn), which runs the user's code (the body of fn, an
//     async function) once, catches what it throws and resolves to the
//     envelope {ok, result} or {ok: false, error: {name, message, stack}}
//     with the result already sanitized to plain JSON data.

// Built-ins only this prelude and console.js use, captured as the kit
// captures its own (uncurried methods: receiver first).
const objectIs = Object.is;
const mathFloor = Math.floor;
const dateNow = Date.now;
const SyntaxErrorCtor = SyntaxError;
const AsyncFunction = (async function () {}).constructor;
const join = uncurry(Array.prototype.join); // join(parts, sep)
const stringSlice = uncurry(String.prototype.slice);
const stringIndexOf = uncurry(String.prototype.indexOf);
const stringSplit = uncurry(String.prototype.split);
const stringReplace = uncurry(String.prototype.replace);
const regexpTest = uncurry(RegExp.prototype.test);

const hostConsole = global.__runcode.console;
const hostCode = global.__runcode.code;
const hostResult = global.__runcode.result;
const hostStateInvalid = global.__runcode.stateInvalid;
delete global.__runcode;

// state.* (run_code.state): a host function's arguments that JSON cannot
// carry (a BigInt, a cyclic value) make its call throw a TypeError before
// it reaches the host. Each state function is wrapped: on such a failure
// the host is told which argument and why instead (stateInvalid), and
// throws STATE_INVALID, a host error like the store's other refusals.
if (hostStateInvalid !== undefined && global.state !== null && typeof global.state === "object") {
  const stringIncludes = uncurry(String.prototype.includes);
  const argNames = { get: ["the key"], set: ["the key", "the value", "the options"], delete: ["the key"], list: ["the options"] };
  const wrapState = (op, names, fn) => function (...args) {
    try {
      return apply(fn, undefined, args);
    } catch (e) {
      if (e === null || typeof e !== "object" || e.name !== "TypeError") throw e;
      for (let i = 0; i < args.length && i < names.length; i++) {
        try {
          stringify(args[i]);
        } catch (err) {
          const m = err !== null && typeof err === "object" ? StringCtor(err.message) : StringCtor(err);
          const why = stringIncludes(m, "BigInt") ? "a BigInt" : stringIncludes(m, "circular") ? "a cyclic structure" : m;
          return hostStateInvalid(op, names[i] + " cannot be stored as JSON: " + why);
        }
      }
      throw e;
    }
  };
  const ops = objectKeys(argNames);
  for (let i = 0; i < ops.length; i++) {
    const fn = global.state[ops[i]];
    if (typeof fn === "function") global.state[ops[i]] = wrapState(ops[i], argNames[ops[i]], fn);
  }
}

// The user's code must be a function body by itself. The source the engine
// runs wraps it in a function, so code that is not a body on its own, yet
// makes the wrapped source valid, closes that function ("}); …
// (function(){") to run outside of it: __isogate_run then reports a
// SyntaxError and never calls it, and since only the envelope the runner
// delivers counts, code outside the function cannot forge a result. An
// ordinary syntax error fails the wrapped source itself, with its position.
// The check compiles the code (handed over as data), it does not run it;
// it runs when the run starts (host functions do not answer while the
// prelude is prepared ahead of the run).
function bodyError() {
  try {
    new AsyncFunction(hostCode());
    return null;
  } catch (e) {
    if (e instanceof SyntaxErrorCtor) return e;
    throw e;
  }
}

// stripStack removes the frames of isogate's scripts (the prelude and the
// wrapper around the user's code) from a stack trace, and corrects the
// columns of the code's first line, which the wrapper shifts.
function stripStack(stack) {
  if (typeof stack !== "string" || stack === "") return "";
  const lines = stringSplit(stack, "\n");
  const kept = newArray();
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    if (stringIndexOf(line, "isogate:") >= 0) continue;
    // The wrapper's own frame is the anonymous one left of the code on
    // line 1; named frames there are imprecise positions (stack overflow).
    let wrapper = false;
    line = stringReplace(line, /(\(?)code\.js:1:(\d+)/, (m, paren, col) => {
      const c = +col - CODE_COLUMN_OFFSET;
      if (c <= 0 && paren === "") wrapper = true;
      return paren + "code.js:1:" + (c > 0 ? c : 1);
    });
    if (!wrapper) push(kept, line);
  }
  return join(kept, "\n");
}

// errorText is a one-line description of a thrown value, never throwing.
function errorText(e) {
  try {
    return isError(e) ? errorHead(e) : inspect(e, true);
  } catch {
    return "unprintable value";
  }
}

// capText bounds error text the script controls, as Go bounds console
// lines (truncateLine), so a huge message cannot exceed the result cap.
function capText(s) {
  if (s.length <= MAX_ERROR_CHARS + 64) return s;
  return stringSlice(s, 0, MAX_ERROR_CHARS) + "... [" + (s.length - MAX_ERROR_CHARS) + " more characters]";
}

// describeError turns a thrown value into {name, message, stack}, each
// bounded by capText.
function describeError(e) {
  const out = describeErrorWhole(e);
  setKey(out, "name", capText(out.name));
  setKey(out, "message", capText(out.message));
  setKey(out, "stack", capText(out.stack));
  return out;
}

function describeErrorWhole(e) {
  const out = objectCreate(null);
  if (isError(e)) {
    setKey(out, "name", safeString(e, "name") || "Error");
    setKey(out, "message", safeString(e, "message"));
    let stack = "";
    try {
      stack = stripStack(e.stack);
    } catch {}
    setKey(out, "stack", stack);
  } else {
    setKey(out, "name", "");
    let message;
    try {
      message = typeof e === "string" ? e : inspect(e, false);
    } catch {
      message = "unprintable value";
    }
    setKey(out, "message", message);
    setKey(out, "stack", "");
  }
  return out;
}

// The console.
installConsole(global);

// The runner of the user's code, callable once.
let started = false;
defineProperty(global, "__isogate_run", {
  value: function (fn) {
    if (started) throw new ErrorCtor("__isogate_run may only be called once");
    started = true;
    const badBody = bodyError();
    if (badBody !== null) {
      const envelope = objectCreate(null);
      const err = objectCreate(null);
      setKey(err, "name", "SyntaxError");
      setKey(err, "message", "the code is not a function body on its own (" + errorText(badBody) +
        "): it must not close the function it runs in");
      setKey(err, "stack", "");
      setKey(envelope, "ok", false);
      setKey(envelope, "error", err);
      hostResult(envelope);
      return envelope;
    }
    return (async () => {
      const envelope = objectCreate(null);
      let value;
      try {
        value = await fn();
      } catch (e) {
        setKey(envelope, "ok", false);
        setKey(envelope, "error", describeError(e));
        hostResult(envelope);
        return envelope;
      }
      try {
        setKey(envelope, "result", sanitize(value));
        setKey(envelope, "ok", true);
      } catch (e) {
        const err = objectCreate(null);
        setKey(err, "name", "SerializationError");
        setKey(err, "message", "the result could not be converted to JSON: " + errorText(e));
        setKey(err, "stack", "");
        setKey(envelope, "ok", false);
        setKey(envelope, "error", err);
      }
      hostResult(envelope);
      return envelope;
    })();
  },
  writable: false,
  enumerable: false,
  configurable: false,
});
