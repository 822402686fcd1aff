// Analysis reaching up into Raising: a layering slip.
#include "rope/Raising/Patterns.h"
