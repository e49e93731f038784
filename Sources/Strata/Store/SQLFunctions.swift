import CStrataRE2
import Foundation
import GRDB

/// The SQL functions that predicates and sort descriptors compile to. The store registers them
/// on every connection (`SQLFunctions.register(in: db)` from `Configuration.prepareDatabase`).
///
/// All functions are deterministic and return NULL when a text argument is NULL. `flags` is a
/// bit set: 1 = case-insensitive (`[c]`), 2 = diacritic-insensitive (`[d]`).
///
/// | function | result |
/// |---|---|
/// | `strata_fold(text, flags)` | `text` folded for comparison (see ``fold(_:flags:)``) |
/// | `strata_beginswith(text, prefix, flags)` | 1 if `text` starts with `prefix` |
/// | `strata_endswith(text, suffix, flags)` | 1 if `text` ends with `suffix` |
/// | `strata_contains(text, needle, flags)` | 1 if `text` contains `needle` |
/// | `strata_like(text, pattern, flags)` | 1 if the whole `text` matches a `*`/`?` wildcard pattern |
/// | `strata_matches(text, regex, flags)` | 1 if the whole `text` matches a regular expression (RE2 syntax, linear time) |
///
/// Other SQLite tools see these names in no schema object: they only appear in queries.
public enum SQLFunctions {
    /// Registers every Strata SQL function on `db`.
    ///
    /// ```swift
    /// var config = Configuration()
    /// config.prepareDatabase { db in SQLFunctions.register(in: db) }
    /// ```
    public static func register(in db: Database) {
        db.add(function: DatabaseFunction("strata_fold", argumentCount: 2, pure: true) { args in
            guard case .string(let s) = args[0].storage else { return args[0] }
            return fold(s, flags: flags(args[1]))
        })
        db.add(function: textPredicate("strata_beginswith") { a, b in a.utf8.starts(with: b.utf8) })
        db.add(function: textPredicate("strata_endswith") { a, b in a.utf8.reversed().starts(with: b.utf8.reversed()) })
        db.add(function: textPredicate("strata_contains") { a, b in b.isEmpty || a.utf8.firstRange(of: b.utf8) != nil })
        db.add(function: textPredicate("strata_like") { a, b in wildcardMatch(Array(a), pattern: Array(b)) })
        db.add(function: DatabaseFunction("strata_matches", argumentCount: 3, pure: true) { args in
            guard case .string(let text) = args[0].storage, case .string(let pattern) = args[1].storage else { return nil }
            let flags = flags(args[2])
            let regex = try regularExpression(pattern, flags: flags)
            return regex.matches(fold(text, flags: flags & 2))
        })
    }

    /// Folds `text` for comparison: case (flag 1) and diacritics (flag 2) removed with
    /// `String.folding(options:locale:)` (locale-independent), then NFC-normalized so that
    /// precomposed and decomposed accents compare equal. With no flag, `text` is unchanged.
    public static func fold(_ text: String, flags: Int) -> String {
        var options: String.CompareOptions = []
        if flags & 1 != 0 { options.insert(.caseInsensitive) }
        if flags & 2 != 0 { options.insert(.diacriticInsensitive) }
        guard !options.isEmpty else { return text }
        return text.folding(options: options, locale: nil).precomposedStringWithCanonicalMapping
    }

    /// Compiles a MATCHES pattern (cached), throwing ``RegexError`` when it is not a valid
    /// regular expression or does not fit the engine's limits.
    static func regularExpression(_ pattern: String, flags: Int) throws(RegexError) -> LinearRegex {
        let key = "\(flags)\u{0}\(pattern)"
        if let cached = regexCache.get(key) { return cached }
        let regex = try LinearRegex(fold(pattern, flags: flags & 2), caseInsensitive: flags & 1 != 0)
        regexCache.set(key, regex)
        return regex
    }

    /// `*` matches any run of characters, `?` one character, `\` escapes the next one.
    static func wildcardMatch(_ text: [Character], pattern: [Character]) -> Bool {
        var t = 0, p = 0
        var starP = -1, starT = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "*" {
                starP = p
                starT = t
                p += 1
                continue
            }
            if p < pattern.count {
                var literal = pattern[p]
                var width = 1
                if literal == "\\", p + 1 < pattern.count {
                    literal = pattern[p + 1]
                    width = 2
                } else if literal == "?" {
                    t += 1
                    p += 1
                    continue
                }
                if literal == text[t] {
                    t += 1
                    p += width
                    continue
                }
            }
            guard starP >= 0 else { return false }
            starT += 1
            t = starT
            p = starP + 1
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }

    // MARK: - Helpers

    private static func flags(_ value: DatabaseValue) -> Int {
        if case .int64(let i) = value.storage { return Int(i) }
        return 0
    }

    /// A 3-argument `(text, text, flags) -> 0/1` function over folded text.
    private static func textPredicate(
        _ name: String, _ test: @escaping @Sendable (String, String) -> Bool
    ) -> DatabaseFunction {
        DatabaseFunction(name, argumentCount: 3, pure: true) { args in
            guard case .string(let a) = args[0].storage, case .string(let b) = args[1].storage else { return nil }
            let flags = flags(args[2])
            return test(fold(a, flags: flags), fold(b, flags: flags)) ? 1 : 0
        }
    }

    private static let regexCache = RegexCache()
}

/// A small cache of compiled MATCHES patterns shared by all connections.
///
/// `@unchecked Sendable`: the dictionary is only touched under `lock`, and a compiled
/// ``LinearRegex`` is immutable and safe to match from any thread. (An NSLock rather than
/// `Synchronization.Mutex`, which needs macOS 15 while the package supports macOS 14.)
private final class RegexCache: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String: LinearRegex] = [:]
    private let capacity = 128

    func get(_ key: String) -> LinearRegex? {
        lock.lock()
        defer { lock.unlock() }
        return entries[key]
    }

    func set(_ key: String, _ regex: LinearRegex) {
        lock.lock()
        defer { lock.unlock() }
        if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
        entries[key] = regex
    }
}
