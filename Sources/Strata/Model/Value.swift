import Foundation

/// A value stored in an attribute, passed to a predicate, or read from a store.
///
/// `Value` is the common currency between the object layer, predicates and SQL.
/// Integers of every width are `.int`, `Float` and `Double` are `.double`.
///
/// ```swift
/// let v: Value = "F-GSPT"          // .string
/// let n: Value = 42                // .int
/// object["colorScheme.primary"] = .string("red")
/// ```
public enum Value: Sendable, Hashable {
    case null
    case string(String)
    case int(Int64)
    case double(Double)
    case decimal(Decimal)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    case uri(URL)

    /// Whether this is `.null`.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// A short name of the value's kind, for error messages.
    public var kindName: String {
        switch self {
        case .null: return "nil"
        case .string: return "String"
        case .int: return "Integer"
        case .double: return "Double"
        case .decimal: return "Decimal"
        case .bool: return "Bool"
        case .date: return "Date"
        case .data: return "Data"
        case .uuid: return "UUID"
        case .uri: return "URI"
        }
    }

    // MARK: - Accessors

    /// The string, if this is one.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    /// The integer, if this is one (a Boolean as 0/1, a whole double as its integer).
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .bool(let b): return b ? 1 : 0
        case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }
    /// The number as a double, if this is a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .decimal(let d): return NSDecimalNumber(decimal: d).doubleValue
        default: return nil
        }
    }
    /// The Boolean, if this is one (an integer: whether it is not 0).
    public var boolValue: Bool? {
        switch self {
        case .bool(let b): return b
        case .int(let i): return i != 0
        default: return nil
        }
    }
    /// The date, if this is one.
    public var dateValue: Date? { if case .date(let d) = self { return d } else { return nil } }
    /// The bytes, if this is data.
    public var dataValue: Data? { if case .data(let d) = self { return d } else { return nil } }
    /// The UUID, if this is one.
    public var uuidValue: UUID? { if case .uuid(let u) = self { return u } else { return nil } }
    /// The URL, if this is one.
    public var uriValue: URL? { if case .uri(let u) = self { return u } else { return nil } }
    /// The decimal, if this is a number.
    public var decimalValue: Decimal? {
        switch self {
        case .decimal(let d): return d
        case .int(let i): return Decimal(i)
        case .double(let d): return Decimal(d)
        default: return nil
        }
    }

    // MARK: - Conversion to an attribute type

    /// Converts the value to the representation of `type`, or returns nil if it cannot be
    /// converted without loss (a string for an integer attribute, 70000 for `int16`, …).
    ///
    /// Strings are parsed for UUID, URI, Decimal and Date (ISO 8601) attributes, so that
    /// model files and JSON clients can give them as text.
    public func coerced(to type: AttributeType) -> Value? {
        if case .null = self { return .null }
        switch type {
        case .string:
            if case .string = self { return self }
            return nil
        case .int16, .int32, .int64:
            guard let i = int64Value, type.integerRange!.contains(i) else { return nil }
            if case .bool = self { return nil }
            return .int(i)
        case .double, .float:
            if case .bool = self { return nil }
            if let d = doubleValue { return .double(d) }
            return nil
        case .decimal:
            if case .string(let s) = self, let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) { return .decimal(d) }
            if case .bool = self { return nil }
            return decimalValue.map(Value.decimal)
        case .bool:
            if case .bool = self { return self }
            if case .int(let i) = self, i == 0 || i == 1 { return .bool(i == 1) }
            return nil
        case .date:
            switch self {
            case .date: return self
            case .double(let d): return .date(Date(timeIntervalSince1970: d))
            case .int(let i): return .date(Date(timeIntervalSince1970: Double(i)))
            case .string(let s): return Value.parseISODate(s).map(Value.date)
            default: return nil
            }
        case .data:
            if case .data = self { return self }
            return nil
        case .uuid:
            if case .uuid = self { return self }
            if case .string(let s) = self, let u = UUID(uuidString: s) { return .uuid(u) }
            return nil
        case .uri:
            if case .uri = self { return self }
            if case .string(let s) = self, let u = URL(string: s), u.scheme != nil { return .uri(u) }
            return nil
        }
    }

    /// Parses `2023-06-05T10:00:00Z`, with or without fractional seconds, or `2023-06-05`.
    static func parseISODate(_ s: String) -> Date? {
        let full = ISO8601DateFormatter()
        full.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = full.date(from: s) { return d }
        full.formatOptions = [.withInternetDateTime]
        if let d = full.date(from: s) { return d }
        full.formatOptions = [.withFullDate]
        return full.date(from: s)
    }

    /// ISO 8601 text of a date, with milliseconds, in UTC.
    static func isoString(_ d: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: d)
    }
}

// MARK: - Literals

extension Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    /// A string value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer value.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A double value.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A Boolean value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// The null value.
    public init(nilLiteral: ()) { self = .null }
}

extension Value: CustomStringConvertible {
    /// A readable rendering: strings quoted, dates in ISO 8601, data as a byte count.
    public var description: String {
        switch self {
        case .null: return "nil"
        case .string(let s): return "\"\(s)\""
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .decimal(let d): return "\(d)"
        case .bool(let b): return b ? "true" : "false"
        case .date(let d): return Value.isoString(d)
        case .data(let d): return "<\(d.count) bytes>"
        case .uuid(let u): return u.uuidString
        case .uri(let u): return u.absoluteString
        }
    }
}

// MARK: - Conversions from Swift values

/// A Swift type that can be turned into a ``Value``: used for predicate arguments and keyed setters.
public protocol ValueConvertible: Sendable {
    var strataValue: Value { get }
}

extension Value: ValueConvertible { public var strataValue: Value { self } }
extension String: ValueConvertible { public var strataValue: Value { .string(self) } }
extension Substring: ValueConvertible { public var strataValue: Value { .string(String(self)) } }
extension Int: ValueConvertible { public var strataValue: Value { .int(Int64(self)) } }
extension Int16: ValueConvertible { public var strataValue: Value { .int(Int64(self)) } }
extension Int32: ValueConvertible { public var strataValue: Value { .int(Int64(self)) } }
extension Int64: ValueConvertible { public var strataValue: Value { .int(self) } }
extension Double: ValueConvertible { public var strataValue: Value { .double(self) } }
extension Float: ValueConvertible { public var strataValue: Value { .double(Double(self)) } }
extension Decimal: ValueConvertible { public var strataValue: Value { .decimal(self) } }
extension Bool: ValueConvertible { public var strataValue: Value { .bool(self) } }
extension Date: ValueConvertible { public var strataValue: Value { .date(self) } }
extension Data: ValueConvertible { public var strataValue: Value { .data(self) } }
extension UUID: ValueConvertible { public var strataValue: Value { .uuid(self) } }
extension URL: ValueConvertible { public var strataValue: Value { .uri(self) } }
extension Optional: ValueConvertible where Wrapped: ValueConvertible {
    /// The value, or null.
    public var strataValue: Value { self?.strataValue ?? .null }
}
