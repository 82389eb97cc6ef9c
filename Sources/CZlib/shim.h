#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
#include <zlib.h>
/* deflateInit2 is a macro over deflateInit2_, which Swift cannot import. */
static inline int CZlib_deflateInit2(z_stream *s, int level, int windowBits) {
    return deflateInit2(s, level, Z_DEFLATED, windowBits, 9, Z_DEFAULT_STRATEGY);
}
static inline int CZlib_inflateInit2(z_stream *s, int windowBits) {
    return inflateInit2(s, windowBits);
}
#endif
