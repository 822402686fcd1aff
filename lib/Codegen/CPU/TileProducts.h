//===- TileProducts.h - what the matrix-engine passes share -----*- C++ -*-===//
//
// --rope-pack-tile-products builds a product on packed operands and marks
// it; --rope-lower-tile-products finds it, on memrefs, by the same mark and
// reads the packed layouts these constants describe.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_LIB_CODEGEN_CPU_TILEPRODUCTS_H
#define ROPE_LIB_CODEGEN_CPU_TILEPRODUCTS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::rope::tiles {

/// Discardable marker of a packed product (its value: the engine that
/// computes it, kTileEngine or kDotEngine), loops (b..., row panel, column
/// panel, row, column, k / kBlock, k-pair, pair) over
///   A [b..., row panels, kBlock, K / kBlock, kBlock / 2, 2]
///   B [b..., column panels, K / kBlock, kBlock / 2, kBlock, 2]
///   C [b..., row panels, kBlock, column panels, kBlock] (f32)
/// (A and C are views of the row-major operands, rows padded to kBlock).
inline constexpr llvm::StringLiteral kTileProduct = "rope.tile_product";

/// The engines of a packed product: AMX tiles, or, where the target has no
/// tiles for its type, AVX-512 BF16 dot products (vdpbf16ps) reading the
/// same packed layout (a row of B's panel, 32 columns × a k pair, is two
/// 512-bit registers).
inline constexpr llvm::StringLiteral kTileEngine = "amx";
inline constexpr llvm::StringLiteral kDotEngine = "avx512bf16";

/// The side of a block of C (two accumulator tiles each way), the rows and
/// columns of a panel, and the K of one step (a tile of A: 16 rows of 32
/// bf16, 64 bytes).
inline constexpr int64_t kBlock = 32;

/// An accumulator tile's side, and the rows of every tile.
inline constexpr int64_t kTileRows = 16;

} // namespace mlir::rope::tiles

#endif // ROPE_LIB_CODEGEN_CPU_TILEPRODUCTS_H
