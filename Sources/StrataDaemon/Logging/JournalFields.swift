import Logging

/// The fields of one journal entry, as `sd_journal_sendv(3)` takes them: `NAME=value`.
///
/// Every entry carries `MESSAGE`, `PRIORITY` (syslog(3) level), `SYSLOG_IDENTIFIER`,
/// `CODE_FILE`, `CODE_LINE` and `CODE_FUNC` (the Swift call site), and one field per
/// metadata key, named by ``fieldName(forMetadataKey:)``:
///
/// ```
/// logger.info("store ready", metadata: ["strata.store": "fleet", "strata.pending": "2"])
/// // MESSAGE=store ready  PRIORITY=6  STRATA_STORE=fleet  STRATA_PENDING=2  …
/// // journalctl -u stratad STRATA_STORE=fleet
/// ```
public struct JournalFields: Sendable, Hashable {
    /// The fields in order: the standard ones first, then the metadata sorted by key.
    public var fields: [(name: String, value: String)]

    /// The fields the handler sets itself; a metadata key that maps to one of them gets the
    /// `META_` prefix instead of overwriting it.
    public static let reservedNames: Set<String> = ["MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC"]

    /// The longest field name journald accepts.
    public static let maximumNameLength = 64

    /// Memberwise initializer.
    public init(message: String, priority: Int, identifier: String, file: String, line: UInt, function: String, metadata: Logger.Metadata) {
        fields = [
            ("MESSAGE", message), ("PRIORITY", "\(priority)"), ("SYSLOG_IDENTIFIER", identifier),
            ("CODE_FILE", file), ("CODE_LINE", "\(line)"), ("CODE_FUNC", function),
        ]
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            fields.append((Self.fieldName(forMetadataKey: key), "\(value)"))
        }
    }

    /// The value of the first field called `name`.
    public subscript(name: String) -> String? { fields.first { $0.name == name }?.value }

    /// `NAME=value` for each field, what `sd_journal_sendv` sends (values may hold newlines
    /// or any byte: the native protocol carries them as they are).
    public var assignments: [String] { fields.map { "\($0.name)=\($0.value)" } }

    // MARK: - Field names

    /// The journal field name of a swift-log metadata key.
    ///
    /// journald accepts field names of ASCII upper-case letters, digits and underscores, not
    /// starting with an underscore (those are the journal's own trusted fields) or a digit, at
    /// most 64 characters long. The rule, applied in order:
    ///
    /// 1. ASCII letters are upper-cased; digits and `_` stay; every other character (`.`,
    ///    `-`, a space, anything not ASCII) becomes `_`: `strata.store` → `STRATA_STORE`,
    ///    `strata.phases_ms` → `STRATA_PHASES_MS`;
    /// 2. leading underscores are dropped: `_private` → `PRIVATE`;
    /// 3. a name that is then empty, starts with a digit, or is one of the fields the handler
    ///    sets itself (``reservedNames``: `message` → `META_MESSAGE`) gets the prefix `META_`;
    /// 4. the name is cut to 64 characters.
    ///
    /// Two keys that map to the same name (`strata.store` and `strata_store`) both become
    /// values of that field; journald keeps every value.
    public static func fieldName(forMetadataKey key: String) -> String {
        var name = String(String.UnicodeScalarView(key.unicodeScalars.map { scalar -> Unicode.Scalar in
            switch scalar {
            case "a"..."z": Unicode.Scalar(scalar.value - 32)!
            case "A"..."Z", "0"..."9", "_": scalar
            default: "_"
            }
        }))
        name = String(name.drop { $0 == "_" })
        if name.isEmpty || name.first!.isNumber || reservedNames.contains(name) { name = "META_" + name }
        return String(name.prefix(maximumNameLength))
    }

    /// Equal when the same fields hold the same values.
    public static func == (lhs: JournalFields, rhs: JournalFields) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }
}
