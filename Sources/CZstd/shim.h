// zstd, for history's contents: each version compressed with the one before as its prefix, so it costs about its change.
// The experimental part too, for ZSTD_d_forceIgnoreChecksum (a chain's inner frames; see Zstd.swift). The library is
// linked dynamically: Zstd.swift treats a library that refuses the parameter as one that checks every frame.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
