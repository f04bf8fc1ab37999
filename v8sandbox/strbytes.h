// strbytes.h declares the C interface of strbytes.cc: a V8 string's bytes
// copied straight into memory the caller owns.
#ifndef ISOGATE_STRBYTES_H
#define ISOGATE_STRBYTES_H

#ifdef __cplusplus
extern "C" {
#endif

// isogate_one_byte_length returns the length of the string held by a v8go
// value when V8 stores it one byte per character (Latin-1), else -1. The
// caller holds the isolate's lock and has entered it.
int isogate_one_byte_length(void* iso, void* value);
// isogate_write_one_byte copies the n characters of that string to dst.
void isogate_write_one_byte(void* iso, void* value, unsigned char* dst, int n);

#ifdef __cplusplus
}
#endif

#endif
