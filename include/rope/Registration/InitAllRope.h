//===- InitAllRope.h - register everything rope provides --------*- C++ -*-===//
//
// One place that knows every dialect, pass and pipeline of the project, so
// that rope-opt and the mlir-opt plugin register exactly the same things.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_REGISTRATION_INITALLROPE_H
#define ROPE_REGISTRATION_INITALLROPE_H

namespace mlir {
class DialectRegistry;
namespace rope {

/// Adds the rope dialect and the dialects its lowerings produce.
void registerAllRopeDialects(DialectRegistry &registry);

/// Registers every rope pass and named pipeline with the global registry.
void registerAllRopePasses();

} // namespace rope
} // namespace mlir

#endif // ROPE_REGISTRATION_INITALLROPE_H
