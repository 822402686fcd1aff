/*===- rope-c/Spec.h - #rope.spec attributes as JSON --------------*- C -*-===*\
|*                                                                            *|
|* The rotary spec attribute (`#rope.spec<...>`) read and written by the      *|
|* dialect itself, so that a binding needs no second parser of its grammar.   *|
|* A spec crosses the API as JSON with the attribute's own parameter names:   *|
|*   {"base": 10000.0, "dims": 0, "offset": 0, "layout": "half",              *|
|*    "attention_factor": null, "inverse": false,                             *|
|*    "scaling": null | {"kind": "yarn", "factor": 4.0,                       *|
|*                       "original_max_position_embeddings": 4096, ...}}      *|
|* where "kind" is the scaling attribute's mnemonic (linear, dynamic, yarn,   *|
|* llama3, longrope, freq_factors) and the other keys are its parameters.     *|
|* Diagnostics are the JSON list of rope-c/Compiler.h; strings returned       *|
|* through `char **` are freed with ropeFreeString.                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ROPE_C_SPEC_H
#define ROPE_C_SPEC_H

#include "rope-c/Compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Parses `text` (`length` bytes) as a `#rope.spec<...>` attribute with the
/// dialect's parser and verifier and sets `*json` to every parameter of it
/// (the scaling's included). Returns 0, or 1 with `*diagnostics` set (when
/// not NULL).
ROPE_CAPI_EXPORTED int ropeSpecParse(const char *text, size_t length,
                                     char **json, char **diagnostics);

/// Builds the attribute from `json` (keys left out take the attribute's
/// defaults), verifies it and sets `*text` to the dialect's printed form.
/// Returns 0, or 1 with `*diagnostics` set (when not NULL).
ROPE_CAPI_EXPORTED int ropeSpecPrint(const char *json, size_t length,
                                     char **text, char **diagnostics);

#ifdef __cplusplus
}
#endif

#endif /* ROPE_C_SPEC_H */
