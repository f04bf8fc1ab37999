// Package catalog is isogate's tool catalogue: the set of tools offered by
// every connected backend MCP server, addressable by name and searchable.
//
// Tools are named "backend.tool" using the original names reported by the
// backend. Every backend and tool also gets a sanitized JavaScript identifier
// (see [JSIdent]) so that code mode can expose it as
// `await backend_js.tool_js(args)`; sanitized names are unique within their
// scope (backends among backends, tools within a backend).
//
// The catalogue is pure computation and safe for concurrent use: writers
// ([Catalog.SetBackend], [Catalog.RemoveBackend]) build a new immutable
// snapshot and publish it atomically, so readers never block and always see
// a consistent view.
package catalog
