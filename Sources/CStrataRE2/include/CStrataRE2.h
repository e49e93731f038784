#ifndef C_STRATA_RE2_H
#define C_STRATA_RE2_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A compiled regular expression (RE2: matching in time linear in the text, no backtracking).
typedef struct CStrataRE2Pattern CStrataRE2Pattern;

/// What a failed compilation says: RE2's reason, the fragment it names, and that fragment's
/// byte offset in the pattern (-1 when it cannot be placed).
typedef struct {
    char reason[256];
    char fragment[128];
    long offset;
} CStrataRE2Error;

/// Compiles `pattern` (`length` bytes of UTF-8) for whole-string matches, case-insensitively
/// when `caseInsensitive` is non-zero, with at most `maxMemory` bytes for the compiled program
/// (0: RE2's default, 8 MiB). Returns NULL and fills `error` when the pattern is not valid or
/// does not fit.
CStrataRE2Pattern *CStrataRE2_compile(const char *pattern, size_t length, int caseInsensitive, long maxMemory,
                                      CStrataRE2Error *error);

/// Whether the whole of `text` (`length` bytes of UTF-8) matches: 1, or 0.
int CStrataRE2_fullMatch(const CStrataRE2Pattern *compiled, const char *text, size_t length);

/// Frees a compiled pattern.
void CStrataRE2_free(CStrataRE2Pattern *compiled);

#ifdef __cplusplus
}
#endif

#endif
