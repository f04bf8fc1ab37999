// Package jsonrpcio reads and writes JSON-RPC 2.0 messages on a byte stream
// as the MCP stdio transport frames them: one JSON value per line.
//
// It is the lean half of isogate's stdio connections (internal/backend's
// connection to a stdio backend): the go-sdk's own stdio connection reads
// in a goroutine of its own and hands every message over a channel, and
// decodes each one twice (once as a possible batch, once as a message)
// through a decoder that allocates and zeroes a 32 KB buffer per call. A
// [Reader] reads in its caller's goroutine and decodes a frame in place,
// with the SDK's rules: keys matched case-sensitively, nesting bounded by
// [MaxDepth], a value followed by the end of its line, batches (JSON
// arrays of messages) unpacked in order.
package jsonrpcio
