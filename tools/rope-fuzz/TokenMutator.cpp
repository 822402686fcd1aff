//===- TokenMutator.cpp - MLIR-aware mutations for rope-fuzz --------------===//
//
// Byte mutations of MLIR text rarely produce a module that still parses and
// verifies with, say, an empty key sequence: every type of the function must
// change together. These edits work on tokens instead (the extents and
// element types of shaped types, float literals, integers after the rope
// ops' keywords), and an extent or element type is replaced in every type
// of the module at once half of the time, so that signatures and uses stay
// consistent. The crash classes of the reliability issues (empty dims,
// integer softmax, narrow positions near their limits, specs with denormal
// factors, huge static dims) are one edit away from the seeds.
//
//===----------------------------------------------------------------------===//

#include "TokenMutator.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cctype>
#include <random>

using llvm::ArrayRef;
using llvm::StringRef;

namespace {

/// A token of the text: [begin, begin + size).
struct Token {
  size_t begin, size;
};

constexpr const char *kExtents[] = {
    "0", "1", "2", "3", "?", "16", "17", "64", "129", "9223372036854775807"};
constexpr const char *kElementTypes[] = {
    "f32", "f16", "bf16", "f64", "f8E4M3FN", "i1",
    "i8",  "i16", "i32",  "i64", "index",    "complex<f32>"};
constexpr const char *kFloats[] = {"0.0",       "-1.0",     "4.9e-324",
                                   "1.0e-40",   "1.0e+300", "1.0",
                                   "1.0000001", "3.4e+38",  "2.0"};
constexpr const char *kIntegers[] = {
    "0",     "1",     "-1",         "2",           "3",
    "65536", "32767", "2147483647", "-2147483648", "9223372036854775807"};
/// Keywords of the rope ops and attributes followed by an integer.
constexpr const char *kIntegerKeywords[] = {
    "dims = ",        "offset = ",       "seq_dim = ",
    "window = ",      "head_dim = ",     "original_max_position_embeddings = ",
    "num_buckets = ", "max_distance = ", "split-keys="};

bool isShapedTypeStart(StringRef text, size_t at) {
  for (StringRef kw : {"tensor<", "memref<", "vector<"})
    if (text.substr(at).starts_with(kw))
      return true;
  return false;
}

/// The extents and element types of every shaped type in `text`.
void collectShapeTokens(StringRef text, llvm::SmallVectorImpl<Token> &extents,
                        llvm::SmallVectorImpl<Token> &elementTypes) {
  for (size_t at = text.find('<'); at != StringRef::npos;
       at = text.find('<', at + 1)) {
    // `tensor`, `memref` and `vector` all have six letters.
    size_t open = at;
    if (open < 6 || !isShapedTypeStart(text, open - 6))
      continue;
    size_t pos = open + 1;
    // Extents: digits or `?`, each followed by `x`.
    while (pos < text.size()) {
      size_t end = pos;
      if (end < text.size() && text[end] == '?')
        ++end;
      else
        while (end < text.size() &&
               isdigit(static_cast<unsigned char>(text[end])))
          ++end;
      if (end == pos || end >= text.size() || text[end] != 'x')
        break;
      extents.push_back({pos, end - pos});
      pos = end + 1;
    }
    // Element type: up to `>` or `,` (a memref layout, an encoding).
    size_t end = pos;
    while (end < text.size() &&
           (isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
      ++end;
    if (end > pos)
      elementTypes.push_back({pos, end - pos});
  }
}

/// Float literals: digits, a point, digits, an optional exponent.
void collectFloats(StringRef text, llvm::SmallVectorImpl<Token> &floats) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (!isdigit(static_cast<unsigned char>(text[i])) ||
        (i > 0 && (isalnum(static_cast<unsigned char>(text[i - 1])) ||
                   text[i - 1] == '.' || text[i - 1] == '_')))
      continue;
    size_t j = i;
    while (j < text.size() && isdigit(static_cast<unsigned char>(text[j])))
      ++j;
    if (j >= text.size() || text[j] != '.') {
      i = j;
      continue;
    }
    ++j;
    while (j < text.size() && isdigit(static_cast<unsigned char>(text[j])))
      ++j;
    if (j < text.size() && (text[j] == 'e' || text[j] == 'E')) {
      size_t k = j + 1;
      if (k < text.size() && (text[k] == '+' || text[k] == '-'))
        ++k;
      if (k < text.size() && isdigit(static_cast<unsigned char>(text[k]))) {
        while (k < text.size() && isdigit(static_cast<unsigned char>(text[k])))
          ++k;
        j = k;
      }
    }
    size_t begin = i > 0 && text[i - 1] == '-' ? i - 1 : i;
    floats.push_back({begin, j - begin});
    i = j;
  }
}

/// Integers after one of kIntegerKeywords.
void collectKeywordIntegers(StringRef text,
                            llvm::SmallVectorImpl<Token> &ints) {
  for (StringRef kw : kIntegerKeywords) {
    for (size_t at = text.find(kw); at != StringRef::npos;
         at = text.find(kw, at + 1)) {
      size_t begin = at + kw.size(), end = begin;
      if (end < text.size() && text[end] == '-')
        ++end;
      while (end < text.size() &&
             isdigit(static_cast<unsigned char>(text[end])))
        ++end;
      if (end > begin)
        ints.push_back({begin, end - begin});
    }
  }
}

/// Replaces `tokens[pick]` by `with`; with `everywhere`, also every other
/// token of `tokens` that spells the same.
void replace(std::string &text, ArrayRef<Token> tokens, size_t pick,
             StringRef with, bool everywhere) {
  std::string old = text.substr(tokens[pick].begin, tokens[pick].size);
  // From the end, so that earlier offsets stay valid.
  for (size_t i = tokens.size(); i-- > 0;) {
    const Token &t = tokens[i];
    if (i == pick || (everywhere && text.compare(t.begin, t.size, old) == 0))
      text.replace(t.begin, t.size, with.str());
  }
}

template <size_t N>
StringRef pickFrom(const char *const (&choices)[N], std::minstd_rand &rng) {
  return choices[rng() % N];
}

} // namespace

bool mlir::rope::fuzz::mutateTokens(std::string &text, unsigned seed) {
  std::minstd_rand rng(seed | 1u);
  llvm::SmallVector<Token> extents, elementTypes, floats, ints;
  switch (rng() % 4) {
  case 0:
  case 1: {
    collectShapeTokens(text, extents, elementTypes);
    bool extent = rng() % 2 == 0;
    llvm::SmallVector<Token> &tokens = extent ? extents : elementTypes;
    if (tokens.empty())
      return false;
    // Tokens are collected type by type; sort them for `replace`.
    llvm::sort(tokens, [](Token a, Token b) { return a.begin < b.begin; });
    StringRef with =
        extent ? pickFrom(kExtents, rng) : pickFrom(kElementTypes, rng);
    replace(text, tokens, rng() % tokens.size(), with, rng() % 2 == 0);
    return true;
  }
  case 2:
    collectFloats(text, floats);
    if (floats.empty())
      return false;
    replace(text, floats, rng() % floats.size(), pickFrom(kFloats, rng),
            /*everywhere=*/false);
    return true;
  default:
    collectKeywordIntegers(text, ints);
    if (ints.empty())
      return false;
    llvm::sort(ints, [](Token a, Token b) { return a.begin < b.begin; });
    replace(text, ints, rng() % ints.size(), pickFrom(kIntegers, rng),
            /*everywhere=*/false);
    return true;
  }
}
