// zstd, for history's contents: each version compressed with the one before as its prefix, so it costs about its change.
#include <zstd.h>
