// bridge.js is the trusted prelude of every code-mode run. It installs one
// Proxy per configured backend, mirrored on globalThis under the backend's
// sanitized and original names, plus console, require, __interfaces and
// __getToolInterface. A property name is resolved to a tool of the
// catalogue the first time a run touches it: from the backend's name table
// when the prelude carries one (a small catalogue: SPEC's tools,
// [property, tool, identifier] triples), else by asking the host (lookup),
// which also waits for a backend that is still starting. The host decides
// again, from the backend and tool passed as separate values, what each
// call reaches (call). Names arrive as JSON data (SPEC), never spliced into
// code; the prelude is the same for every run of a catalogue version.
//
// It runs in the strict function scope of internal/jsvalue's kit (see
// prelude in bridge.go) and uses the kit's captured built-ins: first it
// registers the kit's result sanitizer, the conversion run_code shares.
installSerializer(makeSanitizer({}));

const call = global.__isogate_call;
const lookup = global.__isogate_lookup;
const keys = global.__isogate_keys;
const log = global.__isogate_console;
const interfaces = global.__isogate_interfaces;
const toolInterface = global.__isogate_interface;
const settledReport = global.__isogate_settled;
const graceWait = global.__isogate_grace;
const tick = global.__isogate_tick;
const determinism = global.__isogate_determinism;
const diverged = global.__isogate_diverged;
delete global.__isogate_call;
delete global.__isogate_lookup;
delete global.__isogate_keys;
delete global.__isogate_console;
delete global.__isogate_interfaces;
delete global.__isogate_interface;
delete global.__isogate_settled;
delete global.__isogate_grace;
delete global.__isogate_tick;
delete global.__isogate_determinism;
delete global.__isogate_diverged;
const spec = SPEC;
const durable = DURABLE;

// Durable runs (sandbox.durable, see durable.go) are replayed: what the
// program observes must come back the same. Math.random() is a generator
// seeded from the journal. Time advances only at events, a call made or a
// reply delivered: Date.now(), new Date() and Date() return one value
// between two events (the live one travels to the host with the next tool
// call; a replay returns the journalled ones, in order), so a busy wait on
// the clock never ends, and the journal holds at most one value per event.
// The replies of concurrent calls reach the program in an order: each call
// tells the host which replies were delivered since the previous call,
// and a replay delivers the journalled replies in the journalled order
// (gate below). Each tool call carries the program's call number, which a
// replay matches with the journal's. The start (seed, clock to replay,
// order) is asked of the host on first use: the prelude may run before the
// run's host exists (a prepared context).
let callSeq = 0;
let epoch = 0; // events so far: the clock's intervals
let clockOut = null; // live clock values not yet sent to the host
let deliveredOut = null; // calls whose replies were delivered since the previous call
const takeNote = () => {
  if (clockOut === null && deliveredOut === null) return null;
  const n = objectCreate(null);
  n.c = clockOut;
  n.d = deliveredOut;
  clockOut = null;
  deliveredOut = null;
  return n;
};
let det = null; // the run's start: null until asked, false for a run that is not durable
// The engine's first statement of every script, before the program's own
// code, is __isogate_start(how): false for a run without a journal, "fresh"
// for a journalled run that replays nothing (no call, no clock value: its
// start is the journal's seed alone, asked of the host only when
// Math.random needs it), true for a replay, which asks for its start on
// first use. Issue 44: in a worker process that question was a round trip
// on every run that used a tool, the clock or Math.random. Only its first
// use counts.
let startTold = false;
defineProperty(global, "__isogate_start", {
  value: (how) => {
    if (startTold) return;
    startTold = true;
    if (det !== null) return;
    if (how === false) det = false;
    if (how === "fresh") {
      det = objectCreate(null);
      det.seed = null; // asked when first needed
      det.clock = newArray();
      det.order = newArray();
    }
  },
});
const started = () => {
  if (det === null) {
    const d = determinism();
    det = d === null || d === undefined ? false : d;
  }
  return det;
};
if (durable) {
  const RealDate = Date;
  const realNow = Date.now;
  const realRandom = Math.random;
  const construct = Reflect.construct;
  let st = null;
  const start = () => {
    if (st === null) {
      const d = started();
      st = objectCreate(null);
      st.live = d === false;
      st.replay = st.live ? newArray() : d.clock;
      st.i = 0;
      st.at = -1; // the epoch of st.t
      st.t = 0;
      st.seeded = false;
      if (st.live || d.seed !== null) seed(st.live ? [1, 2, 3, 4] : d.seed);
    }
    return st;
  };
  // seed starts the generator; a fresh run's seed is asked of the host
  // when Math.random first needs it (see __isogate_start).
  const seed = (s) => {
    st.a = s[0] >>> 0; st.b = s[1] >>> 0; st.c = s[2] >>> 0; st.d = s[3] >>> 0;
    st.seeded = true;
    for (let i = 0; i < 12; i++) next(); // mix the seed
  };
  // sfc32: small, fast, and the same on every replica.
  const next = () => {
    const t = (((st.a + st.b) >>> 0) + st.d) >>> 0;
    st.d = (st.d + 1) >>> 0;
    st.a = st.b ^ (st.b >>> 9);
    st.b = (st.c + (st.c << 3)) >>> 0;
    st.c = ((st.c << 21) | (st.c >>> 11)) >>> 0;
    st.c = (st.c + t) >>> 0;
    return t;
  };
  const now = function now() {
    const s = start();
    if (s.live) return realNow();
    if (s.at !== epoch) {
      s.at = epoch;
      if (s.i < s.replay.length) {
        s.t = s.replay[s.i++];
      } else {
        s.t = realNow();
        if (clockOut === null) clockOut = newArray();
        push(clockOut, s.t);
      }
    }
    return s.t;
  };
  const random = function random() {
    const s = start();
    if (s.live) return realRandom();
    if (!s.seeded) seed(determinism().seed);
    return next() / 4294967296;
  };
  const DurableDate = function Date(...args) {
    if (new.target === undefined) return StringCtor(new RealDate(now()));
    return construct(RealDate, args.length === 0 ? [now()] : args, new.target);
  };
  DurableDate.prototype = RealDate.prototype;
  defineProperty(DurableDate, "now", { value: now, writable: true, configurable: true });
  defineProperty(DurableDate, "parse", { value: RealDate.parse, writable: true, configurable: true });
  defineProperty(DurableDate, "UTC", { value: RealDate.UTC, writable: true, configurable: true });
  defineProperty(RealDate.prototype, "constructor", { value: DurableDate, writable: true, configurable: true });
  defineProperty(global, "Date", { value: DurableDate, writable: true, configurable: true });
  defineProperty(Math, "random", { value: random, writable: true, configurable: true });
}

// The delivery of replies in durable runs. A host reply arrives in a turn
// of the event loop of its own; the program receives it through the gate,
// at once when it may (always in a live run), else once the journal's
// order reaches it, in a turn of its own (after a round trip to the host,
// tick), as it came in the run that was journalled. A replay whose
// program does not make the call the journal has next, once the replies
// listed before it were delivered, cannot go on like the journal: it ends
// (diverged). Replies the journal does not order (those of calls past its
// end) are delivered in the order they arrive.
let order = null; // the journal's events: s > 0 the reply of call s, -n call n
let oi = 0; // the next of them
const buffered = newArray(); // replies arrived and not delivered, in arrival order
let stepping = false; // a turn is awaited before the gate's next step
const replaying = () => order !== null && oi < order.length;
const nextReply = () => { // index in buffered of the reply to deliver now, -1 for none
  if (buffered.length === 0) return -1;
  if (!replaying()) return 0;
  const want = order[oi];
  if (want < 0) return -1;
  for (let i = 0; i < buffered.length; i++) if (buffered[i].seq === want) return i;
  return -1;
};
const noop = () => {};
const step = () => {
  if (stepping) return;
  if (nextReply() >= 0) {
    stepping = true;
    promiseThen(tick(), () => {
      stepping = false;
      const i = nextReply();
      if (i >= 0) deliver(i);
      else step();
    }, noop);
  } else if (replaying() && order[oi] < 0 && buffered.length > 0) {
    // A reply waits for the call the journal has next, which the program
    // makes in this turn or never: a turn later, it had its chance.
    const at = oi;
    stepping = true;
    promiseThen(tick(), () => {
      stepping = false;
      if (oi === at) diverged(-order[at]);
      else step();
    }, noop);
  }
};
const deliver = (i) => {
  const e = buffered[i];
  for (let k = i; k + 1 < buffered.length; k++) buffered[k] = buffered[k + 1];
  buffered.length = buffered.length - 1;
  if (replaying()) oi++;
  epoch++;
  if (deliveredOut === null) deliveredOut = newArray();
  push(deliveredOut, e.seq);
  if (e.ok) e.resolve(e.v);
  else e.reject(e.v);
  step();
};
const gated = (raw, seq) => new PromiseCtor((resolve, reject) => {
  const arrived = (ok, v) => {
    const e = objectCreate(null);
    e.seq = seq; e.ok = ok; e.v = v; e.resolve = resolve; e.reject = reject;
    push(buffered, e);
    if (!stepping) {
      const i = nextReply();
      if (i >= 0) deliver(i);
      else step();
    }
  };
  promiseThen(raw, (v) => arrived(true, v), (e) => arrived(false, e));
});
// made counts call seq as made: an event, and the journal's next one in a
// replay that goes as journalled.
const made = (seq) => {
  epoch++;
  if (replaying() && order[oi] === -seq) {
    oi++;
    step();
  }
};
// joined is a's items then b's (either may be null).
const joined = (a, b) => {
  if (a === null) return b;
  for (let k = 0; b !== null && k < b.length; k++) push(a, b[k]);
  return a;
};
// durableCall makes call seq of a durable run through the gate.
const durableCall = (backend, tool, args, seq) => {
  const d = started();
  if (d === false) return call(backend, tool, args, seq, null);
  if (order === null) order = d.order;
  const note = takeNote();
  let raw;
  try {
    raw = call(backend, tool, args, seq, note);
  } catch (e) {
    // Not sent (arguments that do not serialize): what the note says
    // goes with the next call, before what was noted since.
    if (note !== null) {
      clockOut = joined(note.c, clockOut);
      deliveredOut = joined(note.d, deliveredOut);
    }
    throw e;
  }
  made(seq);
  return gated(raw, seq);
};

// Calls the program did not await. Every tool call's promise is tracked
// until it settles. When the program's value is known (finish), the calls
// still pending, and any started after, are "not awaited": the run waits
// for them (until shortly before its deadline, graceWait), so a forgotten
// `await` never cancels a write, and reports them to the host
// (settledReport), which tells the agent. A property read on a tool call's
// promise that finds nothing (`r.content` on an un-awaited call) is
// recorded too: it is the "missing await?" hint.
const PromiseCtor = Promise;
const promiseThen = uncurry(PromisePrototype.then);
const promiseResolve = (v) => new PromiseCtor((resolve) => resolve(v));
const reflectGet = Reflect.get;
const SetCtor = Set;
const setAdd = uncurry(Set.prototype.add);
const setDelete = uncurry(Set.prototype.delete);
const WeakMapCtor = WeakMap;
const weakMapGet = uncurry(WeakMap.prototype.get);
const weakMapSet = uncurry(WeakMap.prototype.set);
const pending = new SetCtor(); // entries of the calls not settled yet
const toolOf = new WeakMapCtor(); // tool call promise → "backend.tool"
const unawaited = newArray(); // [tool, ok, error] of each call not awaited
const reads = newArray(); // [tool, property] of each read that found nothing
let ended = false;
let drained = null; // called once no call is pending after the end
const MAX_REPORTED = 100;

const tuple = (...items) => {
  const a = newArray();
  for (let i = 0; i < items.length; i++) push(a, items[i]);
  return a;
};

// Tool call promises inherit from watched: still real Promises (await,
// then, instanceof and the result serializer treat them as such), whose
// prototype chain passes through a Proxy that notices reads of properties
// a Promise does not have. toJSON is what JSON.stringify probes.
const watched = new Proxy(objectCreate(PromisePrototype), {
  get(target, key, receiver) {
    if (!ended && typeof key === "string" && key !== "toJSON" && !(key in PromisePrototype) &&
      reads.length < MAX_REPORTED) {
      let tool = "";
      try { tool = weakMapGet(toolOf, receiver) || ""; } catch {}
      push(reads, tuple(tool, key));
    }
    return reflectGet(target, key, receiver);
  },
});

const track = (p, tool) => {
  const entry = objectCreate(null);
  entry.tool = tool;
  entry.late = ended;
  setAdd(pending, entry);
  const settle = (ok, error) => {
    setDelete(pending, entry);
    if (entry.late && unawaited.length < MAX_REPORTED) push(unawaited, tuple(tool, ok, error));
    if (ended && setSize(pending) === 0 && drained !== null) {
      const d = drained;
      drained = null;
      d();
    }
  };
  promiseThen(p, () => settle(true, ""), (e) => settle(false, errorHead(e)));
  weakMapSet(toolOf, p, tool);
  setPrototypeOf(p, watched);
  return p;
};

// finish is the program's completion: the script is
// __isogate_finish(<program>). It settles as the program does, once the
// calls the program left running have settled too, or the grace period
// (until shortly before the run's deadline) is over. A settled call may
// start another (`a().then(() => b())`): once none is pending, a round
// trip to the host (tick) lets every queued reaction run, and the wait
// ends only if none started a call.
//
// wait returns null when no call is pending at the end (the common case:
// every call awaited, or none made): the program's outcome then passes
// through at once, one microtask after the program settled, with no
// promise of the bridge's own in between. TestFinishFastAndSlowAgree
// holds both paths to the same outcomes.
const finish = async (main) => {
  const wait = () => {
    ended = true;
    setForEach(pending, (entry) => { entry.late = true; });
    if (setSize(pending) === 0) return null;
    return new PromiseCtor((resolve) => {
      let over = false;
      const end = () => {
        if (!over) {
          over = true;
          resolve();
        }
      };
      const idle = () => {
        promiseThen(tick(), () => {
          if (setSize(pending) === 0) end();
          else drained = idle;
        }, end);
      };
      drained = idle;
      promiseThen(graceWait(), end, end);
    });
  };
  const report = () => {
    // Nothing to report (the usual run): no array is made.
    if (unawaited.length === 0 && reads.length === 0 && setSize(pending) === 0) return;
    const still = newArray();
    setForEach(pending, (entry) => { if (still.length < MAX_REPORTED) push(still, entry.tool); });
    if (unawaited.length > 0 || reads.length > 0 || still.length > 0) {
      const r = objectCreate(null);
      r.settled = unawaited;
      r.pending = still;
      r.reads = reads;
      settledReport(r);
    }
  };
  let value;
  try {
    value = await main;
  } catch (error) {
    const w = wait();
    if (w === null) {
      report();
      throw error;
    }
    return promiseThen(w, () => { report(); throw error; });
  }
  const w = wait();
  if (w === null) {
    report();
    return value;
  }
  return promiseThen(w, () => { report(); return value; });
};
let finished = false;
defineProperty(global, "__isogate_finish", {
  value: (main) => {
    if (finished) return main;
    finished = true;
    return finish(main);
  },
});

// A call the pipeline refused, or a backend failure, rejects with an
// Error whose code property is the failure's code ("TOOL_DENIED",
// "BACKEND_UNAVAILABLE", …): the host sends it as data (v8sandbox.HostError).

// nameKey is catalog.NameKey: hyphens as underscores.
const nameKey = (s) => {
  let k = "";
  for (let i = 0; i < s.length; i++) k += s[i] === "-" ? "_" : s[i];
  return k;
};

const makeBackend = (backend) => {
  // Per run: property name → tool function, or null for "no such tool";
  // one function per tool, whichever name reached it.
  const cache = objectCreate(null);
  const byTool = objectCreate(null);
  // The backend's tools by property name when SPEC lists them: a name not
  // in it is no tool of the backend's, as the host would answer.
  // A name not found as spelled is looked for with its hyphens as
  // underscores (catalog.NameKey: "get-env" and "get_env" are one name).
  let known = null;
  let knownKey = null;
  if (backend.tools !== undefined) {
    known = objectCreate(null);
    knownKey = objectCreate(null);
    for (const t of backend.tools) {
      const found = tuple(t[1], t[2]);
      known[t[0]] = found;
      const k = nameKey(t[0]);
      if (!hasOwn(knownKey, k)) knownKey[k] = found;
    }
  }
  const fromTable = (prop) => {
    if (hasOwn(known, prop)) return known[prop];
    const k = nameKey(prop);
    return hasOwn(knownKey, k) ? knownKey[k] : undefined;
  };
  const resolve = (prop) => {
    if (typeof prop !== "string") return undefined;
    if (!hasOwn(cache, prop)) {
      const found = known !== null ? fromTable(prop) :
        lookup(backend.name, prop); // [original, ident], or undefined
      let fn = null;
      if (found !== undefined && found !== null) {
        const tool = found[0];
        if (hasOwn(byTool, tool)) {
          fn = byTool[tool];
        } else {
          const full = backend.name + "." + tool;
          fn = function (args) {
            let p;
            try {
              callSeq++;
              const a = args === undefined ? {} : args;
              p = durable ? durableCall(backend.name, tool, a, callSeq) : call(backend.name, tool, a, callSeq, null);
            } catch (e) {
              p = new PromiseCtor((resolve, reject) => reject(e));
            }
            return track(p, full);
          };
          defineProperty(fn, "name", { value: found[1] });
          byTool[tool] = fn;
        }
      }
      cache[prop] = fn;
    }
    const fn = cache[prop];
    return fn === null ? undefined : fn;
  };
  const refuse = () => false;
  return new Proxy({}, { // made in the prelude, before user code runs
    get: (target, prop) => resolve(prop),
    has: (target, prop) => resolve(prop) !== undefined,
    ownKeys: () => keys(backend.name),
    getOwnPropertyDescriptor: (target, prop) => {
      const fn = resolve(prop);
      return fn === undefined ? undefined : { value: fn, writable: false, enumerable: true, configurable: true };
    },
    set: refuse, defineProperty: refuse, deleteProperty: refuse, setPrototypeOf: refuse,
  });
};

for (const backend of spec) {
  const api = makeBackend(backend);
  for (const key of new Set([backend.ident, backend.name])) {
    if (key === "" || key in global) continue; // never shadow a built-in
    defineProperty(global, key, { value: api, writable: true, configurable: true, enumerable: false });
  }
}

let cachedInterfaces;
defineProperty(global, "__interfaces", {
  get() { return cachedInterfaces === undefined ? (cachedInterfaces = interfaces()) : cachedInterfaces; },
  configurable: true,
});
global.__getToolInterface = function __getToolInterface(name) { return toolInterface(StringCtor(name)); };

global.require = function require(name) {
  throw new ErrorCtor("require(" + stringify(StringCtor(name)) + ") is not available: isogate programs have no " +
    "modules, filesystem, network, environment or process access. Call backend tools instead, " +
    "e.g. `await backend.tool({...})`; see __interfaces for what exists.");
};

const format = (v) => {
  if (typeof v === "string") return v;
  if (typeof v === "function") return "[Function " + (v.name || "anonymous") + "]";
  if (typeof v === "bigint") return StringCtor(v) + "n";
  if (isPrototypeOf(ErrorPrototype, v)) return v.stack || StringCtor(v); // v instanceof Error
  try {
    const seen = new WeakSetCtor();
    const s = stringify(v, (k, x) => {
      if (typeof x === "bigint") return StringCtor(x) + "n";
      if (typeof x === "function") return "[Function " + (x.name || "anonymous") + "]";
      if (x !== null && typeof x === "object") {
        if (weakSetHas(seen, x)) return "[Circular]";
        weakSetAdd(seen, x);
      }
      return x;
    });
    return s === undefined ? StringCtor(v) : s;
  } catch (e) {
    try { return StringCtor(v); } catch (e2) { return "[unprintable]"; }
  }
};
// A line is the formatted arguments joined by spaces; `${…}` converts as
// Array.prototype.join would (format never returns null or undefined),
// and concatenating is faster than building a prototype-less array.
const logger = (level) => function (...args) {
  let line = "";
  for (let i = 0; i < args.length; i++) line += (i > 0 ? " " : "") + `${format(args[i])}`;
  log(level, line);
};
global.console = Object.freeze({
  log: logger("log"), info: logger("info"), warn: logger("warn"),
  error: logger("error"), debug: logger("debug"),
});
