import Foundation
import GRDB
import GRDBSQLite

extension Value {
    /// The SQLite value stored for this value (see ``AttributeType`` for the mapping).
    public var databaseValue: DatabaseValue {
        switch self {
        case .null: return .null
        case .string(let s): return s.databaseValue
        case .int(let i): return i.databaseValue
        case .double(let d): return d.databaseValue
        case .decimal(let d): return "\(d)".databaseValue
        case .bool(let b): return (b ? 1 : 0).databaseValue
        case .date(let d): return d.timeIntervalSince1970.databaseValue
        case .data(let d): return d.databaseValue
        case .uuid(let u): return u.uuidString.databaseValue
        case .uri(let u): return u.absoluteString.databaseValue
        }
    }

    /// Reads a stored SQLite value as an attribute of `type`.
    ///
    /// Values written by other tools are accepted when they convert without loss (an integer
    /// in a REAL column, numeric text in a NUMERIC column); anything else is returned in its
    /// storage form so that no data is hidden.
    public init(databaseValue: DatabaseValue, type: AttributeType) {
        switch databaseValue.storage {
        case .null:
            self = .null
        case .int64(let i):
            switch type {
            case .bool: self = .bool(i != 0)
            case .double, .float: self = .double(Double(i))
            case .decimal: self = .decimal(Decimal(i))
            case .date: self = .date(Date(timeIntervalSince1970: Double(i)))
            default: self = .int(i)
            }
        case .double(let d):
            switch type {
            case .date: self = .date(Date(timeIntervalSince1970: d))
            case .decimal: self = .decimal(Decimal(string: String(d)) ?? Decimal(d))
            case .int16, .int32, .int64:
                self = d.rounded() == d && abs(d) < 9.2e18 ? .int(Int64(d)) : .double(d)
            default: self = .double(d)
            }
        case .string(let s):
            switch type {
            case .uuid: self = UUID(uuidString: s).map(Value.uuid) ?? .string(s)
            case .uri: self = URL(string: s).map(Value.uri) ?? .string(s)
            case .decimal: self = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")).map(Value.decimal) ?? .string(s)
            case .date: self = Value.parseISODate(s).map(Value.date) ?? .string(s)
            default: self = .string(s)
            }
        case .blob(let d):
            self = .data(d)
        }
    }

    /// Reads column `index` of a statement's current row as an attribute of `type`: what
    /// ``init(databaseValue:type:)`` reads from the same column, without building a
    /// `DatabaseValue` first for the common cases (NULL, integers, reals, text of a string
    /// attribute). Text of other types and blobs go through ``init(databaseValue:type:)``.
    @inline(__always)
    init(sqliteStatement: OpaquePointer, index: CInt, type: AttributeType) {
        switch sqlite3_column_type(sqliteStatement, index) {
        case SQLITE_NULL:
            self = .null
        case SQLITE_INTEGER:
            let i = sqlite3_column_int64(sqliteStatement, index)
            switch type {
            case .int16, .int32, .int64, .string, .data, .uuid, .uri: self = .int(i)
            default: self = Value(databaseValue: i.databaseValue, type: type)
            }
        case SQLITE_FLOAT:
            let d = sqlite3_column_double(sqliteStatement, index)
            switch type {
            case .double, .float, .string, .data, .uuid, .uri, .bool: self = .double(d)
            default: self = Value(databaseValue: d.databaseValue, type: type)
            }
        case SQLITE_TEXT where type == .string:
            // As GRDB reads text (`String(cString:)`), so that both paths agree.
            self = .string(String(cString: sqlite3_column_text(sqliteStatement, index)!))
        default:
            self = Value(databaseValue: DatabaseValue(sqliteStatement: sqliteStatement, index: index), type: type)
        }
    }

    /// Reads a stored SQLite value without a declared type.
    public init(databaseValue: DatabaseValue) {
        switch databaseValue.storage {
        case .null: self = .null
        case .int64(let i): self = .int(i)
        case .double(let d): self = .double(d)
        case .string(let s): self = .string(s)
        case .blob(let d): self = .data(d)
        }
    }
}

/// A piece of SQL with its arguments, always bound, never interpolated.
public struct SQLFragment: Sendable, Hashable {
    /// The SQL text, with `?` placeholders.
    public var sql: String
    /// The values bound to the placeholders, in order.
    public var arguments: [Value]

    /// A fragment of `sql` with its `arguments`.
    public init(_ sql: String, _ arguments: [Value] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    /// GRDB statement arguments for ``arguments``.
    public var statementArguments: StatementArguments {
        // Through the array literal (``StatementArguments/values(_:)``), not the generic
        // initializer, which builds a key path at run time on every call (a fetch's).
        StatementArguments.values(arguments.map { $0.databaseValue })
    }
}

/// Quotes an SQL identifier: `"name"`, with embedded quotes doubled.
@inline(__always)
public func quoteIdentifier(_ name: String) -> String {
    if !name.utf8.contains(UInt8(ascii: "\"")) { return "\"" + name + "\"" }
    return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
