/* Protobuf text format for scenarios (what `protoc --decode/--encode` use). */
#ifndef SIMFUZZ_TEXTPB_H
#define SIMFUZZ_TEXTPB_H

#include <simfuzz/scenario.h>

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Print a scenario in protobuf text format, as `protoc --decode` would
 *  print its encoding. Returns 0, or -1 on out of memory. */
int sf_text_print(const sf_scenario *s, FILE *f);

/** Parse a Scenario in protobuf text format into protobuf binary bytes
 *  (*out is malloc'ed; the caller frees it). Returns 0, or -1 with a
 *  one-line message ("line N: ...") in err. Values are not clamped: the
 *  bytes say exactly what the text says, like `protoc --encode`. */
int sf_text_to_binary(const char *text, size_t len, uint8_t **out, size_t *out_len, char *err,
                      size_t errcap);

#ifdef __cplusplus
}
#endif
#endif
