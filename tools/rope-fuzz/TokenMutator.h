//===- TokenMutator.h - MLIR-aware mutations for rope-fuzz ------*- C++ -*-===//
//
// The token mode of rope-fuzz (ROPE_FUZZ_MUTATE=tokens): besides libFuzzer's
// byte mutations, edits that keep a module well-formed text, as a hostile
// user edits a test file. See docs/reliability.md.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_TOOLS_ROPE_FUZZ_TOKENMUTATOR_H
#define ROPE_TOOLS_ROPE_FUZZ_TOKENMUTATOR_H

#include <cstddef>
#include <string>

namespace mlir::rope::fuzz {
/// Applies one MLIR-aware edit to `text`, chosen by `seed`: an extent of a
/// shaped type (each occurrence of that extent in the types, or one) becomes
/// 0, 1, `?` or another size; an element type becomes an integer, a small or
/// a wide float type, or `index` (positions become i16 or i32 this way); a
/// float literal becomes an extreme (denormal, 1e-40, 1e300, 0, negative);
/// an integer after a keyword the rope ops take (`dims =`, `offset =`,
/// `window =`, ...) becomes 0, -1 or a limit of i32/i64. Returns false when
/// the text has no token of the chosen kind.
bool mutateTokens(std::string &text, unsigned seed);
} // namespace mlir::rope::fuzz

#endif // ROPE_TOOLS_ROPE_FUZZ_TOKENMUTATOR_H
