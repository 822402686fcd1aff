// ... which include the IR: a cycle inside one layer.
#include "rope/Dialect/Rope/IR/Ops.h"
