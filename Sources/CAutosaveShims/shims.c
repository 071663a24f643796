// Everything is a static inline function in include/CAutosaveShims.h; SwiftPM needs a source file.
#include "CAutosaveShims.h"
