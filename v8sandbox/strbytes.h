// strbytes.h declares the C interface of strbytes.cc: a V8 string's bytes
// copied straight into memory the caller owns.
#ifndef ISOGATE_STRBYTES_H
#define ISOGATE_STRBYTES_H

#ifdef __cplusplus
extern "C" {
#endif

// isogate_latin1_length returns the length of the string held by a v8go
// value when every one of its characters fits in one byte (Latin-1),
// whether V8 stores it one or two bytes per character, else -1. The caller
// holds the isolate's lock and has entered it.
int isogate_latin1_length(void* iso, void* value);
// isogate_write_one_byte copies the n characters of such a string to dst,
// one byte each.
void isogate_write_one_byte(void* iso, void* value, unsigned char* dst, int n);
// isogate_utf8_length returns the length of the string's UTF-8 encoding,
// as V8 writes it (a lone surrogate takes 3 bytes, as in
// String::Utf8Value).
int isogate_utf8_length(void* iso, void* value);
// isogate_write_utf8 writes that encoding, n bytes, to dst.
void isogate_write_utf8(void* iso, void* value, char* dst, int n);

#ifdef __cplusplus
}
#endif

#endif
