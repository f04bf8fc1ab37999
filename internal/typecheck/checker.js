// checker.js runs in the checker's resident isolate after typescript.js
// (globalThis.ts) and the libraries (globalThis.__isogate_tc_libs, a map
// file name → text). It checks one program at a time against one set of
// declarations; the library and declaration SourceFiles are parsed once and
// reused by every check, so a check parses only the program, and a clean
// program is checked in a program shared with the other checks against the
// same declarations (see "A base" below), whose checker keeps the
// libraries' types.
//
// Trusted code over hostile text: the program is never run, only parsed and
// type-checked; the isolate's heap cap and the call's deadline bound that.
(function () {
  "use strict";
  const ts = globalThis.ts;
  const libTexts = globalThis.__isogate_tc_libs;
  delete globalThis.__isogate_tc_libs;

  const options = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    lib: ["lib.es2022.d.ts"],
    strict: false,
    noImplicitAny: false,
    noEmit: true,
    skipLibCheck: true,
    noLib: false,
    types: [],
    allowJs: false,
    noResolve: true,
    isolatedModules: false,
  };

  const files = new Map(); // file name → SourceFile parsed once (libraries, runtime globals)
  // Files are parsed as tsc parses them: without the JSDoc comments of
  // TypeScript files (which no type error depends on; the libraries are
  // mostly comments), a third less work for the libraries.
  const parseOptions = { languageVersion: ts.ScriptTarget.ES2022, jsDocParsingMode: ts.JSDocParsingMode.ParseForTypeErrors };
  const parse = (name, text) => ts.createSourceFile(name, text, parseOptions, true, ts.ScriptKind.TS);
  for (const name of Object.keys(libTexts)) files.set(name, parse(name, libTexts[name]));

  // What code mode's runtime adds to ES2022 (bridge.js).
  files.set("isogate-runtime.d.ts", parse("isogate-runtime.d.ts", [
    "interface IsogateConsole { log(...data: any[]): void; info(...data: any[]): void; warn(...data: any[]): void;",
    "  error(...data: any[]): void; debug(...data: any[]): void; }",
    "declare var console: IsogateConsole;",
    "declare function require(name: string): any;",
    "declare var __interfaces: any;",
    "declare function __getToolInterface(name: string): any;",
  ].join("\n")));

  // Declarations by id, the newest few kept (one per catalogue version).
  const decls = new Map();
  const MAX_DECLS = 4;

  const PROGRAM = "program.ts";
  const BACKEND_PREFIX = "IsogateBackend_";

  const host = (program) => ({
    getSourceFile: (name) => (name === PROGRAM ? program : name === DECLS ? decls.get(currentDecls) : files.get(name)),
    getDefaultLibFileName: () => "lib.es2022.d.ts",
    writeFile: () => {},
    getCurrentDirectory: () => "/",
    getDirectories: () => [],
    fileExists: (name) => name === PROGRAM || files.has(name) || name === DECLS,
    readFile: () => undefined,
    getCanonicalFileName: (name) => name,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => "\n",
  });
  const DECLS = "isogate-tools.d.ts";
  let currentDecls = "";

  // The innermost node of sf that contains pos.
  const nodeAt = (sf, pos) => {
    let node = sf;
    for (;;) {
      let next;
      ts.forEachChild(node, (child) => {
        if (next === undefined && child.pos <= pos && pos < child.end && child.getStart(sf) <= pos) next = child;
      });
      if (next === undefined) return node;
      node = next;
    }
  };

  const isBackendType = (checker, expr) => {
    const t = checker.getTypeAtLocation(expr);
    const s = t && (t.aliasSymbol || t.symbol);
    return !!s && typeof s.name === "string" && s.name.startsWith(BACKEND_PREFIX);
  };

  // The tool call node belongs to: a call `b.t(...)` or `b["t"](...)`
  // whose object is a backend; with where the node sits in it.
  const toolCallOf = (checker, node) => {
    for (let n = node; n; n = n.parent) {
      if (ts.isCallExpression(n)) {
        const callee = n.expression;
        if ((ts.isPropertyAccessExpression(callee) || ts.isElementAccessExpression(callee)) &&
          isBackendType(checker, callee.expression)) {
          const nameNode = ts.isPropertyAccessExpression(callee) ? callee.name : callee.argumentExpression;
          let where = "call";
          if (within(node, nameNode)) where = "name";
          else if (n.arguments.length > 0 && within(node, n.arguments[0])) where = "args";
          return { call: n, callee, where, backend: callee.expression.getText(), tool: nameNode.getText().replace(/^["']|["']$/g, "") };
        }
      }
    }
    return null;
  };
  // unknownBackendOf returns the backend an undeclared identifier is a
  // misspelling of, when it is the object of a method call (`x.t(...)`);
  // else undefined: an undeclared name elsewhere is left to the compiler's
  // own message.
  const unknownBackendOf = (checker, node) => {
    if (!node || !ts.isIdentifier(node)) return undefined;
    const access = node.parent;
    if (!access || !ts.isPropertyAccessExpression(access) || access.expression !== node) return undefined;
    if (!access.parent || !ts.isCallExpression(access.parent) || access.parent.expression !== access) return undefined;
    const names = checker.getSymbolsInScope(node, ts.SymbolFlags.Variable)
      .filter((sym) => {
        const t = checker.getTypeOfSymbol(sym);
        const ts_ = t && (t.aliasSymbol || t.symbol);
        return !!ts_ && typeof ts_.name === "string" && ts_.name.startsWith(BACKEND_PREFIX);
      })
      .map((sym) => sym.name);
    return suggest(node.text, names);
  };
  const within = (node, outer) => !!outer && node.pos >= outer.pos && node.end <= outer.end;

  const isLiteral = (node) => ts.isStringLiteral(node) || ts.isNumericLiteral(node) ||
    ts.isNoSubstitutionTemplateLiteral(node) || node.kind === ts.SyntaxKind.TrueKeyword ||
    node.kind === ts.SyntaxKind.FalseKeyword || ts.isBigIntLiteral(node) ||
    (ts.isPrefixUnaryExpression(node) && ts.isNumericLiteral(node.operand)) ||
    ts.isObjectLiteralExpression(node) || ts.isArrayLiteralExpression(node);

  // plainLiteral reports whether v is written out in full: a literal, or
  // an object or array literal without spread (whose parts TypeScript
  // cannot follow when they were built up at run time).
  const plainLiteral = (v) => {
    while (ts.isParenthesizedExpression(v)) v = v.expression;
    if (ts.isObjectLiteralExpression(v)) return v.properties.every((p) => !ts.isSpreadAssignment(p));
    if (ts.isArrayLiteralExpression(v)) return v.elements.every((e) => !ts.isSpreadElement(e));
    return isLiteral(v);
  };
  // valueAt is the value a diagnostic at node concerns: an object
  // literal's property is reported at its name.
  const valueAt = (node) => {
    const p = node.parent;
    return p && ts.isPropertyAssignment(p) && p.name === node ? p.initializer : node;
  };

  const propsOf = (checker, type) => (type ? checker.getPropertiesOfType(type).map((p) => p.name) : []);
  // suggest finds the valid name an agent most likely meant: the
  // compiler's own spelling suggestion, else the one name that starts the
  // other ("ident" for "id"), else the one closest within two edits.
  const suggest = (name, candidates) => {
    const s = ts.getSpellingSuggestion(name, candidates, (c) => c);
    if (s) return s;
    const lower = name.toLowerCase();
    const prefixed = candidates.filter((c) => c.length >= 2 &&
      (lower.startsWith(c.toLowerCase()) || c.toLowerCase().startsWith(lower)));
    if (prefixed.length === 1) return prefixed[0];
    let best, bestDist = 3, ties = 0;
    for (const c of candidates) {
      const d = distance(lower, c.toLowerCase());
      if (d < bestDist) { best = c; bestDist = d; ties = 0; } else if (d === bestDist) ties++;
    }
    return ties === 0 ? best : undefined;
  };
  const distance = (a, b) => {
    if (Math.abs(a.length - b.length) > 2) return 3;
    let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const cur = [i];
      for (let j = 1; j <= b.length; j++) {
        cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      }
      prev = cur;
    }
    return prev[b.length];
  };

  // classify turns one diagnostic of the program into what the agent reads.
  const classify = (checker, sf, d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, " ");
    const out = { code: d.code, message: text, line: 0, column: 0, kind: "", certain: false };
    if (d.start === undefined) return out;
    const lc = sf.getLineAndCharacterOfPosition(d.start);
    out.line = lc.line;
    out.column = lc.character + 1;
    const node = nodeAt(sf, d.start);
    const backend = (d.code === 2304 || d.code === 2552) && unknownBackendOf(checker, node);
    if (backend) {
      // A name declared nowhere, as the object of a call `x.t(...)` and
      // spelt like a backend (`everythin.echo(...)`): a ReferenceError
      // wherever it is reached, as certain as an unknown tool.
      out.kind = "unknown_backend";
      out.certain = true;
      out.name = node.text;
      out.tool = node.parent.getText();
      out.suggestion = backend;
      return out;
    }
    const call = toolCallOf(checker, node);
    if (!call) return out;
    const tool = call.backend + "." + call.tool;
    out.tool = tool;
    if (call.where === "name" && (d.code === 2339 || d.code === 2551)) {
      out.kind = "unknown_tool";
      out.certain = true;
      out.name = call.tool;
      const s = suggest(call.tool, propsOf(checker, checker.getTypeAtLocation(call.callee.expression)));
      if (s) out.suggestion = call.backend + "." + s;
      return out;
    }
    if (call.where === "args" && (d.code === 2353 || d.code === 2561) && (ts.isIdentifier(node) || ts.isStringLiteral(node))) {
      out.kind = "unknown_parameter";
      out.certain = true;
      out.name = node.text;
      let obj = node.parent;
      while (obj && !ts.isObjectLiteralExpression(obj)) obj = obj.parent;
      const expected = obj ? propsOf(checker, checker.getContextualType(obj)) : [];
      out.expected = expected;
      const s = suggest(node.text, expected);
      if (s) out.suggestion = s;
      return out;
    }
    // A missing parameter is certain in an object literal written out in
    // full only: a value built up at run time (`const a = {}; a.id = 1`)
    // has properties TypeScript does not see (measured false positives).
    const missing = /Property '([^']+)' is missing in type/.exec(text);
    const value = valueAt(node);
    if (missing && (d.code === 2741 || d.code === 2345 || d.code === 2322) &&
      ts.isObjectLiteralExpression(value) && plainLiteral(value)) {
      out.kind = "missing_parameter";
      out.certain = true;
      out.name = missing[1];
      return out;
    }
    if ((d.code === 2554 || d.code === 2555) && call.call.arguments.length === 0) {
      out.kind = "missing_arguments";
      out.certain = true;
      return out;
    }
    if (call.where === "args" && (d.code === 2322 || d.code === 2345 || d.code === 2820)) {
      // An object literal's property is reported at its name; the value
      // must be a literal for the mistake to be certain.
      const p = node.parent;
      const named = p && ts.isPropertyAssignment(p) && p.name === node;
      // `never` comes from a schema that admits no property, which
      // backends enforce loosely (a measured false positive): not certain.
      if (plainLiteral(value) && !/type 'never'/.test(text)) {
        out.kind = "wrong_type";
        out.certain = true;
        if (named) out.name = node.getText();
        else if (p && ts.isPropertyAssignment(p)) out.name = p.name.getText();
      }
      return out;
    }
    return out;
  };

  // The plan: every tool a program may call, found from the types (a
  // property of a backend's interface, IsogateBackend_N), with where and
  // whether in a loop; and the places where the program reaches tools in
  // a way the plan cannot name (a computed tool name, a backend object
  // passed around as a value, globalThis, eval, a backend whose tools are
  // not known yet), which leave the plan partial.
  const ITERATING = new Set(["map", "forEach", "filter", "flatMap", "reduce", "reduceRight", "some", "every",
    "find", "findIndex", "findLast", "findLastIndex", "sort", "from", "fromAsync"]);
  const ONCE = new Set(["then", "catch", "finally"]);
  const DYNAMIC_GLOBALS = new Set(["globalThis", "eval", "Function", "self", "window", "global"]);

  // The program's own state (IsogateState, internal/codemode/state.go) is
  // followed as a backend is, so that the plan lists its writes (a side
  // effect); its calls are not tool calls to the diagnostics (isBackendType).
  const STATE_INTERFACE = "IsogateState";
  const isBackendSymbol = (s) => !!s && typeof s.name === "string" && (s.name.startsWith(BACKEND_PREFIX) || s.name === STATE_INTERFACE);
  let typeQueries = 0; // the types the last plan asked for (the tests count them)
  const backendInterface = (t) => {
    const s = t && (t.aliasSymbol || t.symbol);
    return isBackendSymbol(s) ? s.name : "";
  };
  // The binary operators whose result is never an object: arithmetic,
  // bitwise, comparison, equality, `in`, `instanceof`, and the compound
  // assignments made of them.
  const LOGICAL = new Set([ts.SyntaxKind.AmpersandAmpersandToken, ts.SyntaxKind.BarBarToken,
    ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.AmpersandAmpersandEqualsToken,
    ts.SyntaxKind.BarBarEqualsToken, ts.SyntaxKind.QuestionQuestionEqualsToken]);
  const RIGHT = new Set([ts.SyntaxKind.EqualsToken, ts.SyntaxKind.CommaToken]);
  // neverBackend reports whether an expression's kind alone says its type
  // is not a backend's: a literal, an object or array literal (their types'
  // symbols are "__object" and Array), an arrow function ("__function"),
  // a unary or a non-logical binary expression (a primitive).
  const neverBackend = (n) => ts.isLiteralExpression(n) || ts.isTemplateExpression(n) ||
    n.kind === ts.SyntaxKind.TrueKeyword || n.kind === ts.SyntaxKind.FalseKeyword || n.kind === ts.SyntaxKind.NullKeyword ||
    ts.isObjectLiteralExpression(n) || ts.isArrayLiteralExpression(n) || ts.isArrowFunction(n) ||
    ts.isPrefixUnaryExpression(n) || ts.isPostfixUnaryExpression(n) || ts.isTypeOfExpression(n) ||
    ts.isVoidExpression(n) || ts.isDeleteExpression(n) ||
    (ts.isBinaryExpression(n) && !LOGICAL.has(n.operatorToken.kind) && !RIGHT.has(n.operatorToken.kind));
  const skipParens = (n) => {
    while (n.parent && (ts.isParenthesizedExpression(n.parent) || ts.isNonNullExpression(n.parent))) n = n.parent;
    return n;
  };
  const isFunctionLike = (n) => ts.isFunctionDeclaration(n) || ts.isFunctionExpression(n) || ts.isArrowFunction(n) ||
    ts.isMethodDeclaration(n) || ts.isGetAccessorDeclaration(n) || ts.isSetAccessorDeclaration(n) || ts.isConstructorDeclaration(n);
  const isExported = (fn) => !!(ts.getCombinedModifierFlags(fn) & ts.ModifierFlags.Export) ||
    (fn.parent && ts.isExportAssignment(fn.parent));

  // knownNames finds the names of sf that cannot hold a backend, whose
  // types the plan need not ask for (asking checks each reference again:
  // most of a plan's cost). A name refers to a declaration of the program
  // that bears it, or else to a global; its type at a reference is its
  // declared type T narrowed by the program's control flow, and narrowing
  // yields T, members of T (a union's), never, an intersection (a type of
  // no symbol), or a type a guard names (`x is C`, instanceof, an inferred
  // predicate) that is assignable to T. So a name none of whose
  // declarations has a type that is a backend's, has a member that is, or
  // is one a backend's type is assignable to, cannot hold a backend. A
  // program that names a backend's interface itself is asked about in
  // full.
  const ANY_LIKE = ts.TypeFlags.AnyOrUnknown | ts.TypeFlags.Instantiable | ts.TypeFlags.Intersection;
  const PRIMITIVE = ts.TypeFlags.StringLike | ts.TypeFlags.NumberLike | ts.TypeFlags.BigIntLike |
    ts.TypeFlags.BooleanLike | ts.TypeFlags.ESSymbolLike | ts.TypeFlags.VoidLike | ts.TypeFlags.Null |
    ts.TypeFlags.Never | ts.TypeFlags.EnumLike;
  const perChecker = new WeakMap(); // checker → { backends, closed }, for the base's later checks
  const checkerMemo = (checker, declsFile) => {
    let m = perChecker.get(checker);
    if (!m) {
      // Every type a backend's symbol can be the symbol of: the
      // declarations' interfaces (and anything else they name so).
      const backends = [];
      const visit = (n) => {
        const sym = n.symbol;
        if (n !== declsFile && sym && isBackendSymbol(sym)) {
          if (sym.flags & ts.SymbolFlags.Type) backends.push(checker.getDeclaredTypeOfSymbol(sym));
          if (sym.flags & ts.SymbolFlags.Value) backends.push(checker.getTypeOfSymbol(sym));
        }
        ts.forEachChild(n, visit);
      };
      if (declsFile) visit(declsFile);
      m = { backends, closed: new Map() };
      perChecker.set(checker, m);
    }
    return m;
  };
  const closedType = (checker, memo, t) => {
    let c = memo.closed.get(t);
    if (c === undefined) {
      if (t.flags & ANY_LIKE || isBackendSymbol(t.aliasSymbol) || isBackendSymbol(t.symbol)) c = false;
      else if (t.flags & ts.TypeFlags.Union) c = t.types.every((m) => closedType(checker, memo, m));
      else if (t.flags & PRIMITIVE) c = true;
      else if (t.flags & (ts.TypeFlags.Object | ts.TypeFlags.NonPrimitive)) c = true;
      else c = false;
      if (c && !(t.flags & PRIMITIVE)) c = !memo.backends.some((b) => checker.isTypeAssignableTo(b, t));
      memo.closed.set(t, c);
    }
    return c;
  };
  const knownNames = (checker, sf, declsFile) => {
    const noBackend = new Set();
    if (sf.text.includes(BACKEND_PREFIX)) return { noBackend };
    const memo = checkerMemo(checker, declsFile);
    // The members of classes, object literals and types are not
    // referred to by a bare name.
    const member = (n) => ts.isClassElement(n) || ts.isTypeElement(n) ||
      (ts.isObjectLiteralElementLike(n) && ts.isObjectLiteralExpression(n.parent));
    const byName = new Map(); // name → the program's symbols of that name
    const collect = (n) => {
      if (n.name && ts.isIdentifier(n.name) && !member(n)) {
        for (const sym of [n.symbol, n.localSymbol]) {
          if (!sym) continue;
          let l = byName.get(n.name.text);
          if (!l) byName.set(n.name.text, (l = []));
          l.push(sym);
        }
      }
      ts.forEachChild(n, collect);
    };
    collect(sf);
    const seen = new Set();
    const visit = (n) => {
      if (ts.isIdentifier(n) && !seen.has(n.text)) {
        seen.add(n.text);
        const syms = (byName.get(n.text) || []).slice();
        const global = checker.resolveName(n.text, undefined, ts.SymbolFlags.Value, false);
        if (global) syms.push(global);
        if (syms.length > 0 && syms.every((sym) => closedType(checker, memo, checker.getTypeOfSymbol(sym)))) noBackend.add(n.text);
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
    return { noBackend };
  };

  // declVars is the names of the variables declarations declare.
  const declVarNames = new WeakMap();
  const declVars = (declsFile) => {
    if (!declsFile) return new Set();
    let names = declVarNames.get(declsFile);
    if (!names) {
      names = new Set();
      const visit = (n) => {
        if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name)) names.add(n.name.text);
        ts.forEachChild(n, visit);
      };
      visit(declsFile);
      declVarNames.set(declsFile, names);
    }
    return names;
  };

  // exhaustive (the tests compare) asks the checker for the type of every
  // name, as if no name were known not to hold a backend.
  const planOf = (checker, sf, declsFile, exhaustive) => {
    const known = exhaustive ? null : knownNames(checker, sf, declsFile);
    typeQueries = 0;
    // ifaceOf is backendInterface without asking the checker (which checks
    // the expression again: most of a plan's cost) when the expression's
    // kind gives the answer, or when it is a name that cannot hold a
    // backend (knownNames); an assignment or a comma expression has the
    // type of its right operand.
    const ifaces = new Map();
    // typeOf asks the checker for an expression's type once.
    const types = new Map();
    const typeOf = (n) => {
      let t = types.get(n);
      if (t === undefined) {
        typeQueries++;
        t = checker.getTypeAtLocation(n);
        types.set(n, t);
      }
      return t;
    };
    const ifaceOf = (n) => {
      let iface = ifaces.get(n);
      if (iface === undefined) {
        if (neverBackend(n)) iface = "";
        else if (ts.isBinaryExpression(n) && RIGHT.has(n.operatorToken.kind)) iface = ifaceOf(n.right);
        else if (known && ts.isIdentifier(n) && ts.isExpressionNode(n) && !ts.isMetaProperty(n.parent) &&
          known.noBackend.has(n.text)) iface = "";
        else iface = backendInterface(typeOf(n));
        ifaces.set(n, iface);
      }
      return iface;
    };
    const refs = new Map(); // symbol → identifiers that refer to it
    const idents = [];
    const visit = (n) => { if (ts.isIdentifier(n)) idents.push(n); ts.forEachChild(n, visit); };
    visit(sf);
    const refsOf = (sym) => {
      if (!refs.has(sym)) refs.set(sym, idents.filter((i) => checker.getSymbolAtLocation(i) === sym));
      return refs.get(sym);
    };

    // reach says how often node may run in a run: loop "yes" inside a
    // loop (or an array method's callback), "unknown" where the program's
    // shape does not say (recursion, a callback handed to code we do not
    // know, a function passed around, a class field's initializer), else
    // "no", with times the most runs it can make (each call of a function
    // runs its body once; a call of a function from three places, three
    // times). times is what one approval of the plan covers: the gateway
    // counts the calls against it.
    const ONCE_RESULT = { loop: "no", times: 1 };
    const YES = { loop: "yes", times: Infinity };
    const UNKNOWN = { loop: "unknown", times: Infinity };
    const reach = (node, seen) => {
      let child = node;
      for (let n = node.parent; n; child = n, n = n.parent) {
        if (ts.isForOfStatement(n) || ts.isForInStatement(n)) {
          // Only the iterated expression runs once; the head's binding
          // (with its defaults) and the body run per element.
          if (child !== n.expression) return YES;
        } else if (ts.isForStatement(n)) {
          if (child !== n.initializer) return YES;
        } else if (ts.isWhileStatement(n) || ts.isDoStatement(n)) {
          return YES;
        } else if (ts.isPropertyDeclaration(n) && child === n.initializer &&
          !(ts.getCombinedModifierFlags(n) & ts.ModifierFlags.Static)) {
          return UNKNOWN; // runs at every `new` of its class
        } else if (isFunctionLike(n)) {
          return functionReach(n, seen);
        }
      }
      return ONCE_RESULT;
    };
    // hostCalls is how many times the host itself calls fn: the wrapper
    // of a program body once, a module's entry point (its default export
    // or main) once, any other function never.
    const hostCalls = (fn) => {
      if (ts.isFunctionDeclaration(fn) && fn.parent === sf && isWrapper(fn)) return 1;
      if (!isExported(fn)) return 0;
      if (fn.parent && ts.isExportAssignment(fn.parent)) return 1;
      return ts.getCombinedModifierFlags(fn) & ts.ModifierFlags.Default || (fn.name && fn.name.text === "main") ? 1 : 0;
    };
    // isWrapper reports whether fn is the function the host wrapped a
    // program body in (checker.go's wrap): the file is that function and
    // `export {}`, nothing else.
    const isWrapper = (fn) => fn.name && fn.name.text === "__isogate_program" && sf.statements.length === 2 &&
      sf.statements[0] === fn && ts.isExportDeclaration(sf.statements[1]) && !sf.statements[1].moduleSpecifier &&
      !!sf.statements[1].exportClause && ts.isNamedExports(sf.statements[1].exportClause) &&
      sf.statements[1].exportClause.elements.length === 0;
    // A function's reach does not depend on where the walk came from
    // unless the walk met a function it is still in (a cycle): those
    // without are kept, so a chain of functions each called twice is
    // walked once, not 2^n times.
    const reached = new Map();
    let cycles = 0;
    const MAX_TIMES = 1e6; // a bound past this is kept at it (the calls past it ask again)
    const functionReach = (fn, seen) => {
      if (reached.has(fn)) return reached.get(fn);
      if (seen.has(fn)) {
        cycles++;
        return UNKNOWN;
      }
      const before = cycles;
      seen.add(fn);
      let out;
      try {
        out = functionReachOf(fn, seen);
      } finally {
        seen.delete(fn);
      }
      if (out.times > MAX_TIMES && out.loop === "no") out = { loop: "no", times: MAX_TIMES };
      if (cycles === before) reached.set(fn, out);
      return out;
    };
    const functionReachOf = (fn, seen) => {
      const self = skipParens(fn);
      const p = self.parent;
      if (p && ts.isCallExpression(p) && p.expression === self) return reach(p, seen); // called where written
      if (p && ts.isCallExpression(p) && p.arguments.includes(self)) {
        const callee = p.expression;
        const method = ts.isPropertyAccessExpression(callee) ? callee.name.text : "";
        if (ITERATING.has(method)) return YES;
        // A promise's then, catch or finally calls back once; another
        // object's method of that name may call it any number of times.
        if (ONCE.has(method) && isPromise(callee.expression)) return reach(p, seen);
        return UNKNOWN;
      }
      let name;
      if (ts.isFunctionDeclaration(fn) && fn.name) name = fn.name;
      else if (p && ts.isVariableDeclaration(p) && p.initializer === self && ts.isIdentifier(p.name)) name = p.name;
      let out = { loop: "no", times: hostCalls(fn) };
      if (name === p?.name && (ts.getCombinedModifierFlags(p) & ts.ModifierFlags.Export) && name.text === "main") {
        out = { loop: "no", times: 1 }; // export const main = …: the module's entry point
      }
      if (!name) return out.times > 0 ? out : UNKNOWN;
      const sym = checker.getSymbolAtLocation(name);
      if (!sym) return UNKNOWN;
      for (const r of refsOf(sym)) {
        if (r === name) continue;
        if (r.pos >= fn.pos && r.end <= fn.end) return UNKNOWN; // recursion
        const use = skipParens(r);
        if (!(use.parent && ts.isCallExpression(use.parent) && use.parent.expression === use)) return UNKNOWN;
        const at = reach(use.parent, seen);
        if (at.loop === "yes") return YES;
        out = at.loop === "no" ? { loop: out.loop, times: out.times + at.times } : UNKNOWN;
      }
      return out;
    };
    const isPromise = (expr) => {
      const t = typeOf(expr);
      const s = t && (t.aliasSymbol || t.symbol);
      return !!s && s.name === "Promise" && !!s.declarations && s.declarations.every((d) => d.getSourceFile().fileName.startsWith("lib."));
    };

    const pos = (n) => {
      const lc = sf.getLineAndCharacterOfPosition(n.getStart(sf));
      return { line: lc.line, column: lc.character + 1 };
    };
    const calls = [];
    const dynamic = [];
    const dyn = (n, why) => dynamic.push({ ...pos(n), text: n.getText(sf).slice(0, 80), why });
    const isDeclName = (n) => n.parent && ts.isDeclaration(n.parent) && n.parent.name === n;
    const isAccessed = (n) => {
      const use = skipParens(n);
      const p = use.parent;
      return !!p && (ts.isPropertyAccessExpression(p) || ts.isElementAccessExpression(p)) && p.expression === use;
    };
    const isMemberName = (n) => n.parent && ts.isPropertyAccessExpression(n.parent) && n.parent.name === n;
    const walk = (n) => {
      // Only a name a global of these or the declarations' variables
      // bear can resolve to one (resolving a name is not cached: asking
      // for every name was a sixth of a plan's cost).
      if (ts.isIdentifier(n) && !isDeclName(n) && !isMemberName(n) &&
        (exhaustive || DYNAMIC_GLOBALS.has(n.text) || declVars(declsFile).has(n.text))) {
        const sym = checker.getSymbolAtLocation(n);
        const decl = sym && sym.declarations && sym.declarations[0];
        const file = decl && decl.getSourceFile();
        if (DYNAMIC_GLOBALS.has(n.text) && file !== sf) dyn(n, "reaches globals by name");
        else if (file && file.fileName === DECLS && ts.isVariableDeclaration(decl) &&
          (typeOf(n).flags & ts.TypeFlags.Any)) dyn(n, "a backend whose tools are not known yet");
      }
      // The types asked for are those of the places a backend object comes
      // from (a name, `this`) and of the objects whose members are taken:
      // any other expression of a backend's type (`await b`, `c ? b : d`,
      // a call returning one) is made of one of those, already seen where
      // it was used as a value, and asking for the types of all of them
      // checked each again, most of a plan's cost.
      const candidate = ts.isExpression(n) && !ts.isParenthesizedExpression(n) && !ts.isNonNullExpression(n) &&
        !isDeclName(n) && !isMemberName(n) && !ts.isPartOfTypeNode(n) && !ts.isPartOfTypeQuery(n) &&
        (ts.isIdentifier(n) || n.kind === ts.SyntaxKind.ThisKeyword || isAccessed(n));
      const iface = candidate ? ifaceOf(n) : "";
      if (iface) {
        const use = skipParens(n);
        const p = use.parent;
        if (p && (ts.isPropertyAccessExpression(p) || ts.isElementAccessExpression(p)) && p.expression === use) {
          let member;
          if (ts.isPropertyAccessExpression(p)) member = p.name.text;
          else if (ts.isStringLiteralLike(p.argumentExpression) || ts.isNumericLiteral(p.argumentExpression)) member = p.argumentExpression.text;
          if (member === undefined) {
            dyn(p, "a computed tool name");
          } else {
            // A member the backend does not declare is kept too (unknown):
            // a tool the configuration denies is not in the declarations.
            const access = skipParens(p);
            const called = access.parent && ts.isCallExpression(access.parent) && access.parent.expression === access;
            const r = called ? reach(access.parent, new Set()) : UNKNOWN;
            const call = { backend: iface, tool: member, ...pos(p), loop: r.loop };
            // A call in a function no one calls is still shown (and counted) once.
            if (r.loop === "no") call.times = Math.max(1, r.times);
            if (!checker.getPropertyOfType(typeOf(n), member)) call.unknown = true;
            calls.push(call);
          }
        } else if (!(p && ts.isVariableDeclaration(p) && p.initializer === use && ts.isIdentifier(p.name))) {
          dyn(use, "a backend object used as a value");
        } else if (p.type && !backendInterface(checker.getTypeFromTypeNode(p.type))) {
          // A variable declared with a type of its own (`any`, `{}`, …)
          // holds the backend under a type the plan cannot follow.
          dyn(use, "a backend object used as a value");
        }
      }
      ts.forEachChild(n, walk);
    };
    walk(sf);
    return { calls, dynamic };
  };

  // A base is one program over the libraries, the runtime globals and one
  // set of declarations, with its type checker, in which programs are
  // checked one after another, each as a file of its own: the libraries'
  // types are then resolved once per base instead of once per check, which
  // was most of a check's cost. What a shared checker says of a program is
  // what a fresh one says, with two exceptions: the order in which a
  // message lists a union's members (and so which member it elaborates on)
  // follows the order the checker made their types in, and a missing
  // global type is reported once per checker. So a program the base finds
  // anything in is checked again in a fresh program of its own, whose
  // report is the one returned (a mistake costs both checks; a clean
  // program, the common case, one cheap one); a base that reported a
  // global diagnostic is not used again. A program is checked in a fresh
  // program from the start when sharing could change more: when it is not
  // a module (a script's declarations are globals), when it names other
  // modules or declares global or ambient ones (a program merges those
  // before any check). A base is rebuilt after BASE_USES checks: each
  // leaves its nodes and types in the checker, and the rebuild bounds
  // them (with 100, the heap grew to about 55 MB and its collection took
  // back more than the rebuilds save: 25 keeps it near 35 MB). The bases of the MAX_BASES declarations used last are kept (the
  // gateways of a process share the checker, each with its catalogue).
  const BASE_USES = 25;
  const MAX_BASES = 2;
  const bases = new Map(); // declarations id → { program, checker, uses }, the last used last
  let fileSeq = 0;

  const baseFor = (id) => {
    let b = bases.get(id);
    bases.delete(id);
    if (!b || b.uses >= BASE_USES) {
      const program = ts.createProgram({ rootNames: [DECLS, "isogate-runtime.d.ts"], options, host: host(undefined) });
      b = { program, checker: program.getTypeChecker(), uses: 0 };
      if (b.checker.getGlobalDiagnostics().length > 0) return null;
    }
    bases.set(id, b);
    while (bases.size > MAX_BASES) bases.delete(bases.keys().next().value);
    return b;
  };

  // sharable reports whether sf may be checked in a base: a module that
  // names no other module and declares no global or ambient one.
  const sharable = (sf) => {
    if (!ts.isExternalModule(sf) || (sf.flags & ts.NodeFlags.PossiblyContainsDynamicImport)) return false;
    for (const st of sf.statements) {
      if (ts.isImportDeclaration(st) || ts.isImportEqualsDeclaration(st) || ts.isModuleDeclaration(st) ||
        ts.isNamespaceExportDeclaration(st) || (ts.isExportDeclaration(st) && st.moduleSpecifier)) return false;
    }
    return true;
  };

  // inBase checks source in the base of its declarations: the report of a
  // clean program, null when the program must be checked on its own.
  const inBase = (req) => {
    if (req.fresh) return null;
    const name = "program-" + (++fileSeq) + ".ts";
    const sf = parse(name, req.source);
    if (sf.parseDiagnostics.length > 0 || !sharable(sf)) return null;
    const b = baseFor(req.decls);
    if (!b) return null;
    // What createProgram sets on the files it finds, for a module that
    // names no other module.
    sf.path = sf.resolvedPath = "/" + name;
    sf.originalFileName = name;
    sf.imports = [];
    sf.moduleAugmentations = [];
    sf.ambientModuleNames = [];
    ts.bindSourceFile(sf, options);
    b.uses++;
    const clean = b.program.getSyntacticDiagnostics(sf).length === 0 && b.program.getSemanticDiagnostics(sf).length === 0;
    if (b.checker.getGlobalDiagnostics().length > 0 && bases.get(req.decls) === b) bases.delete(req.decls);
    if (!clean) return null;
    return JSON.stringify({ diagnostics: [], plan: planOf(b.checker, sf, decls.get(req.decls), req.exhaustivePlan), shared: true, typeQueries });
  };

  // alone checks sf in a program of its own.
  const alone = (sf, req) => {
    const program = ts.createProgram({ rootNames: [PROGRAM, DECLS, "isogate-runtime.d.ts"], options, host: host(sf) });
    const checker = program.getTypeChecker();
    const syntactic = program.getSyntacticDiagnostics(sf);
    const semantic = syntactic.length > 0 ? [] : program.getSemanticDiagnostics(sf);
    const diagnostics = [];
    for (const d of syntactic) diagnostics.push(classify(checker, sf, d));
    for (const d of semantic) diagnostics.push(classify(checker, sf, d));
    const plan = syntactic.length > 0 ? null : planOf(checker, sf, decls.get(req.decls), req.exhaustivePlan);
    return JSON.stringify({ diagnostics, plan, shared: false, typeQueries });
  };

  // __isogate_tc_forget() drops the bases, and with them the nodes and
  // types of the programs checked in them: the host calls it when a check
  // left the heap past half its cap, so that one principal's large
  // programs do not fill the heap for the next checks (issue 42).
  globalThis.__isogate_tc_forget = () => {
    bases.clear();
    return "ok";
  };

  // __isogate_tc_decls({id, text}) parses a set of declarations once.
  globalThis.__isogate_tc_decls = (arg) => {
    const { id, text } = JSON.parse(arg);
    if (!decls.has(id)) {
      decls.set(id, parse(DECLS, text));
      while (decls.size > MAX_DECLS) decls.delete(decls.keys().next().value);
    }
    return "ok";
  };

  // __isogate_tc_check({decls, source, fresh}) checks source (already
  // wrapped by the host) against the declarations of that id: in the
  // base of those declarations when it can, else (or when fresh is set:
  // the tests compare the two) in a program of its own. shared in the
  // reply says which.
  globalThis.__isogate_tc_check = (arg) => {
    const req = JSON.parse(arg);
    if (!decls.has(req.decls)) return JSON.stringify({ needDecls: true });
    currentDecls = req.decls;
    const out = inBase(req);
    if (out !== null) return out;
    return alone(parse(PROGRAM, req.source), req);
  };

  // A first check, while the isolate is built: it binds the libraries and
  // compiles the checker's hot paths, so that a program's first check,
  // which runs under its deadline, is a warm one.
  globalThis.__isogate_tc_decls(JSON.stringify({ id: "", text: "declare var __isogate_warm: { f(a: { x: string }): Promise<any> };" }));
  globalThis.__isogate_tc_check(JSON.stringify({ decls: "", source: "async function f() { await __isogate_warm.f({ x: 'a', y: 1 }); }\nexport {};\n" }));
  decls.delete("");
  bases.delete("");
})();
