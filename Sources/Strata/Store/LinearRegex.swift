import CStrataRE2
import Foundation

/// A regular expression for `MATCHES`, matched in time linear in the text whatever the pattern:
/// RE2 (Debian's libre2, through ``CStrataRE2``) instead of a backtracking engine, so that a
/// pattern from a peer — `(a+)+b` over a column of `a`s — cannot take a store's threads for the
/// call's whole time limit (ICU's engine took 4 s there). The whole text must match, as with
/// NSPredicate's `MATCHES`.
///
/// RE2's syntax is Perl's and ICU's for everything `MATCHES` is usually written with (classes,
/// `\d \w \s`, quantifiers with bounds, alternation, groups, Unicode classes `\p{L}`,
/// `(?i)`); it has no backreferences (`\1`), lookaround (`(?=…)`, `(?<!…)`), possessive
/// quantifiers or atomic groups — the features that make matching exponential. A pattern that
/// uses them, or does not parse, is refused with RE2's reason and its place in the pattern
/// (docs/Predicates.md).
///
/// ```swift
/// let regex = try LinearRegex("[A-Z]-[A-Z]{4}")
/// regex.matches("F-GSPT")   // true
/// ```
///
/// `@unchecked Sendable`: the compiled pattern is a C pointer that RE2 documents as safe to
/// match from several threads at once; it is freed once, in `deinit`.
final class LinearRegex: @unchecked Sendable {
    private let compiled: OpaquePointer

    /// The most memory one compiled pattern may take (RE2's `max_mem`): a pattern whose program
    /// does not fit (`a{1000}{1000}`) is refused rather than compiled.
    static let maxMemory = 8 << 20
    /// The longest pattern accepted, in UTF-8 bytes.
    static let maxPatternBytes = 4096

    /// Compiles `pattern`, case-insensitively with `caseInsensitive`.
    ///
    /// - Throws: ``RegexError`` naming the place in the pattern and what to do.
    init(_ pattern: String, caseInsensitive: Bool = false) throws(RegexError) {
        let bytes = Array(pattern.utf8)
        guard bytes.count <= Self.maxPatternBytes else {
            throw RegexError(pattern: pattern, offset: Self.maxPatternBytes, fragment: "",
                             reason: "the pattern is \(bytes.count) bytes long, over the limit of \(Self.maxPatternBytes)")
        }
        var error = CStrataRE2Error()
        let compiled = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                CStrataRE2_compile(chars.baseAddress, chars.count, caseInsensitive ? 1 : 0, Self.maxMemory, &error)
            }
        }
        guard let compiled else {
            let reason = withUnsafeBytes(of: &error.reason) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let fragment = withUnsafeBytes(of: &error.fragment) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            throw RegexError(pattern: pattern, offset: error.offset >= 0 ? Int(error.offset) : nil, fragment: fragment, reason: reason)
        }
        self.compiled = compiled
    }

    deinit { CStrataRE2_free(compiled) }

    /// Whether the whole of `text` matches.
    func matches(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { CStrataRE2_fullMatch(compiled, $0.baseAddress, $0.count) == 1 }
        }
    }
}

/// A `MATCHES` pattern that the engine refuses: it does not parse, uses what RE2 leaves out
/// (backreferences, lookaround), or is over its limits.
struct RegexError: Error, CustomStringConvertible, Sendable {
    /// The pattern as given.
    var pattern: String
    /// Where in the pattern (UTF-8 bytes from its start) the problem lies, when known.
    var offset: Int?
    /// The part of the pattern the engine names.
    var fragment: String
    /// The engine's reason.
    var reason: String

    var description: String {
        let place = offset.map { "at byte \($0) of the pattern" } ?? "in the pattern"
        let part = fragment.isEmpty ? "" : " (\(fragment))"
        return "\(place)\(part): \(reason); MATCHES takes RE2 syntax, which has no backreferences or lookaround"
    }
}
