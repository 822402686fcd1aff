//===- RegisterTestPasses.cpp - test passes in the test C API -------------===//
//
// libRopeCAPITesting.so registers the test-only passes and pipelines when it
// is loaded, so that a host names them in a pipeline like any other pass;
// everything else is the production C API.
//
//===----------------------------------------------------------------------===//

#include "RopeTestPasses.h"

namespace {

struct RegisterTestPassesAtLoad {
  RegisterTestPassesAtLoad() { mlir::rope::test::registerRopeTestPasses(); }
};

const RegisterTestPassesAtLoad registerTestPassesAtLoad;

} // namespace
