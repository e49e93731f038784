// A C interface to RE2 (Debian's libre2-dev) for Strata's MATCHES: RE2 matches in time linear
// in the text whatever the pattern, where a backtracking engine (ICU's) can take exponential
// time on patterns like (a+)+b. Every helper is prefixed with the module's name.

#include "CStrataRE2.h"

#include <re2/re2.h>
#include <cstring>
#include <string>

struct CStrataRE2Pattern {
    RE2 regex;
    CStrataRE2Pattern(const re2::StringPiece &pattern, const RE2::Options &options) : regex(pattern, options) {}
};

static void CStrataRE2_copy(char *destination, size_t capacity, const std::string &source) {
    size_t length = source.size() < capacity - 1 ? source.size() : capacity - 1;
    std::memcpy(destination, source.data(), length);
    destination[length] = 0;
}

extern "C" CStrataRE2Pattern *CStrataRE2_compile(const char *pattern, size_t length, int caseInsensitive, long maxMemory,
                                                 CStrataRE2Error *error) {
    RE2::Options options;
    options.set_encoding(RE2::Options::EncodingUTF8);
    options.set_log_errors(false);
    options.set_case_sensitive(caseInsensitive == 0);
    options.set_dot_nl(false);
    if (maxMemory > 0) options.set_max_mem(maxMemory);
    re2::StringPiece text(pattern, length);
    CStrataRE2Pattern *compiled = new CStrataRE2Pattern(text, options);
    if (compiled->regex.ok()) return compiled;
    if (error != nullptr) {
        CStrataRE2_copy(error->reason, sizeof error->reason, compiled->regex.error());
        const std::string &argument = compiled->regex.error_arg();
        CStrataRE2_copy(error->fragment, sizeof error->fragment, argument);
        error->offset = -1;
        if (!argument.empty()) {
            std::string whole(pattern, length);
            size_t found = whole.find(argument);
            if (found != std::string::npos) error->offset = (long)found;
        }
    }
    delete compiled;
    return nullptr;
}

extern "C" int CStrataRE2_fullMatch(const CStrataRE2Pattern *compiled, const char *text, size_t length) {
    return RE2::FullMatch(re2::StringPiece(text, length), compiled->regex) ? 1 : 0;
}

extern "C" void CStrataRE2_free(CStrataRE2Pattern *compiled) {
    delete compiled;
}
