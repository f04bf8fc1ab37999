// Package bench measures isogate's V8 code mode against goja-based designs,
// side by side, on the same workloads.
//
// Every engine configuration is a [Variant]: it runs a [Workload] (the body
// of an async function, TypeScript allowed, plus named host functions with
// JSON arguments and results and a simulated latency) and returns the JSON
// of the awaited result. The built-in variants are:
//
//   - "v8-pool": isogate's engine, a warm V8 isolate pool with a fresh
//     context per run ([v8sandbox.NewPool]; thread isolation);
//   - "v8-proc": the same engine behind process isolation (procpool's
//     supervised worker processes; any [v8sandbox.Runner] plugs in with
//     [NewRunnerVariant]). By default its workers are this very binary, so
//     a main or TestMain running it calls [ServeWorkerIfRequested] first;
//   - "v8-fresh": V8 with a new isolate per run (RecycleAfter 1);
//   - "goja-sync": goja with a synchronous tool bridge (host functions block;
//     Promise.all over them is serialized);
//   - "goja-loop": goja with goja_nodejs' event loop and a Promise bridge
//     (host calls run concurrently and settle on the loop).
//
// Every variant compiles a workload the same way: the body is wrapped in
// `globalThis.__bench_main = async function main() {…}` and its TypeScript
// is stripped by esbuild (ES2022 for V8, [GojaTarget] for goja). The
// transform is cached per source and target, so runs measure the engines;
// its cost is reported on its own.
//
// [Measure] runs one workload on one variant and returns latency
// percentiles, throughput at several concurrencies and Go allocations per
// run; [MeasureMemory] measures the memory held by warm isolates and
// runtimes; package conformance holds the ECMAScript checks. The report
// (cmd/benchreport) puts it all in RESULTS.md, with ratios against v8-pool.
// While a report runs, the workload loop and the sections record the
// figures they measure in a [Figures] record, from which tables that span
// sections (the issue-26 targets table) are rendered without measuring
// anything twice.
//
// Extension points: [RegisterWorkload] adds workloads, [RegisterVariant]
// adds engine configurations and [RegisterSection] adds whole report
// sections (for example gateway-level tier-1/2 dispatch or an end-to-end
// call_tool_chain through a real MCP client); [ReportConfig].Sections
// runs chosen sections alone (benchreport -sections).
package bench
