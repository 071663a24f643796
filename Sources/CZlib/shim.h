// zlib, for its CRC-32: the journal checksums every record, and zlib does it three times as fast as
// a table-driven loop in Swift (50 MB: 19 ms against 50 ms).
#include <zlib.h>
