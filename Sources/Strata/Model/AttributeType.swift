import Foundation

/// The scalar types an attribute can hold, mirroring Core Data's `NSAttributeDescription.AttributeType`.
///
/// Each type maps to one SQLite storage class:
///
/// | type | SQL column type | stored as |
/// |---|---|---|
/// | `string`, `uri`, `uuid` | `TEXT` | UTF-8 text (UUIDs upper-case, URIs absolute strings) |
/// | `int16`, `int32`, `int64`, `bool` | `INTEGER` | 64-bit integer (`bool` as 0/1) |
/// | `double`, `float` | `REAL` | IEEE double |
/// | `decimal` | `NUMERIC` | decimal text, numeric affinity |
/// | `date` | `REAL` | seconds since 1970-01-01 UTC (`datetime(col, 'unixepoch')` reads it) |
/// | `data` | `BLOB` | bytes |
public enum AttributeType: String, Sendable, Hashable, Codable, CaseIterable {
    case string
    case int16
    case int32
    case int64
    case double
    case float
    case decimal
    case bool
    case date
    case data
    case uuid
    case uri

    /// The SQL column type used in `CREATE TABLE`.
    public var sqlType: String {
        switch self {
        case .string, .uuid, .uri: return "TEXT"
        case .int16, .int32, .int64, .bool: return "INTEGER"
        case .double, .float, .date: return "REAL"
        case .decimal: return "NUMERIC"
        case .data: return "BLOB"
        }
    }

    /// Whether values of this type are integers.
    public var isInteger: Bool {
        switch self {
        case .int16, .int32, .int64: return true
        default: return false
        }
    }

    /// Whether values of this type are numbers (integers, floating point or decimal).
    public var isNumeric: Bool {
        switch self {
        case .int16, .int32, .int64, .double, .float, .decimal: return true
        default: return false
        }
    }

    /// The inclusive range of an integer type.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .int16: return Int64(Int16.min)...Int64(Int16.max)
        case .int32: return Int64(Int32.min)...Int64(Int32.max)
        case .int64: return Int64.min...Int64.max
        default: return nil
        }
    }

    /// Whether a column of type `self` can hold every value of `other` without loss,
    /// so that changing an attribute from `other` to `self` is a lightweight (widening) change.
    public func widens(_ other: AttributeType) -> Bool {
        if self == other { return true }
        switch (other, self) {
        case (.int16, .int32), (.int16, .int64), (.int32, .int64): return true
        case (.float, .double): return true
        case (.int16, .double), (.int32, .double): return true
        case (.int16, .decimal), (.int32, .decimal), (.int64, .decimal): return true
        default: return false
        }
    }

    /// Names accepted in model files besides the canonical raw value (Core Data's spellings).
    public init?(modelName: String) {
        let lowered = modelName.lowercased()
        switch lowered {
        case "string": self = .string
        case "int16", "integer 16", "integer16": self = .int16
        case "int32", "integer 32", "integer32": self = .int32
        case "int64", "integer 64", "integer64", "int", "integer": self = .int64
        case "double": self = .double
        case "float": self = .float
        case "decimal": self = .decimal
        case "bool", "boolean": self = .bool
        case "date": self = .date
        case "data", "binary", "binary data", "binarydata": self = .data
        case "uuid": self = .uuid
        case "uri", "url": self = .uri
        default: return nil
        }
    }
}
