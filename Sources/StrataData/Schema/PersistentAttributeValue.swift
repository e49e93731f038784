import Foundation

/// A Swift type a model property can hold as one attribute: the scalar types, their
/// optionals, and `RawRepresentable` types whose raw value is one (declare the conformance:
/// `extension Category: PersistentAttributeValue {}`).
///
/// | Swift type | attribute type |
/// |---|---|
/// | `String` | `string` |
/// | `Int`, `Int64` | `int64` |
/// | `Int32`, `Int16` | `int32`, `int16` |
/// | `Double`, `Float` | `double`, `float` |
/// | `Decimal` | `decimal` |
/// | `Bool` | `bool` |
/// | `Date` | `date` |
/// | `Data` | `data` |
/// | `UUID` | `uuid` |
/// | `URL` | `uri` |
///
/// A value read from a row that does not fit a non-optional property (nil, written by
/// another tool or the string-keyed API) reads as the type's ``strataFallback`` (0, "",
/// the epoch…); saving such an object refuses the missing value.
public protocol PersistentAttributeValue {
    /// The attribute type the property is stored as.
    static var strataAttributeType: AttributeType { get }
    /// Whether the attribute is optional (true for `Optional`).
    static var strataIsOptional: Bool { get }
    /// The value a non-optional property reads when its storage holds none.
    static var strataFallback: Self { get }
    /// The value from its stored form (``Value``).
    init?(strataStored value: Value)
    /// The stored form.
    var strataStored: Value { get }
}

extension PersistentAttributeValue {
    /// Not optional.
    public static var strataIsOptional: Bool { false }

    /// The value from storage: converted, or the fallback.
    @inline(__always)
    static func strataRead(_ value: Value) -> Self { Self(strataStored: value) ?? strataFallback }
}

extension String: PersistentAttributeValue {
    /// The attribute type values of this type are stored as.
    public static var strataAttributeType: AttributeType { .string }
    /// What a non-optional property reads when its storage holds none.
    public static var strataFallback: String { "" }
    /// The value from its stored form, or nil when the stored value is of another kind.
    @inline(__always) public init?(strataStored value: Value) {
        guard case .string(let s) = value else { return nil }
        self = s
    }
    /// The stored form.
    @inline(__always) public var strataStored: Value { .string(self) }
}

extension Int: PersistentAttributeValue {
    /// The attribute type values of this type are stored as.
    public static var strataAttributeType: AttributeType { .int64 }
    /// What a non-optional property reads when its storage holds none.
    public static var strataFallback: Int { 0 }
    /// The value from its stored form, or nil when the stored value is of another kind.
    @inline(__always) public init?(strataStored value: Value) {
        guard case .int(let i) = value else { return nil }
        self = Int(i)
    }
    /// The stored form.
    @inline(__always) public var strataStored: Value { .int(Int64(self)) }
}

extension Int64: PersistentAttributeValue {
    /// The attribute type values of this type are stored as.
    public static var strataAttributeType: AttributeType { .int64 }
    /// What a non-optional property reads when its storage holds none.
    public static var strataFallback: Int64 { 0 }
    /// The value from its stored form, or nil when the stored value is of another kind.
    @inline(__always) public init?(strataStored value: Value) {
        guard case .int(let i) = value else { return nil }
        self = i
    }
    /// The stored form.
    @inline(__always) public var strataStored: Value { .int(self) }
}

extension Int32: PersistentAttributeValue {
    /// The attribute type values of this type are stored as.
    public static var strataAttributeType: AttributeType { .int32 }
    /// What a non-optional property reads when its storage holds none.
    public static var strataFallback: Int32 { 0 }
    /// The value from its stored form, or nil when the stored value is of another kind.
    @inline(__always) public init?(strataStored value: Value) {
        guard case .int(let i) = value, let v = Int32(exactly: i) else { return nil }
        self = v
    }
    /// The stored form.
    @inline(__always) public var strataStored: Value { .int(Int64(self)) }
}

extension Int16: PersistentAttributeValue {
    /// The attribute type values of this type are stored as.
    public static var strataAttributeType: AttributeType { .int16 }
    /// What a non-optional property reads when its storage holds none.
    public static var strataFallback: Int16 { 0 }
    /// The value from its stored form, or nil when the stored value is of another kind.
    @inline(__always) public init?(strataStored value: Value) {
        guard case .int(let i) = value, let v = Int16(exactly: i) else { return nil }
        self = v
    }
    /// The stored form.
    @inline(__always) public var strataStored: Value { .int(Int64(self)) }
}

extension Double: PersistentAttributeValue {
    /// The attribute type values of this type are stored as.
    public static var strataAttributeType: AttributeType { .double }
    /// What a non-optional property reads when its storage holds none.
    public static var strataFallback: Double { 0 }
    /// The value from its stored form, or nil when the stored value is of another kind.
    @inline(__always) public init?(strataStored value: Value) {
        switch value {
        case .double(let d): self = d
        case .int(let i): self = Double(i)
        default: return nil
        }
    }
    /// The stored form.
    @inline(__always) public var strataStored: Value { .double(self) }
}

extension Float: PersistentAttributeValue {
    /// The attribute type values of this type are stored as.
    public static var strataAttributeType: AttributeType { .float }
    /// What a non-optional property reads when its storage holds none.
    public static var strataFallback: Float { 0 }
    /// The value from its stored form, or nil when the stored value is of another kind.
    @inline(__always) public init?(strataStored value: Value) {
        switch value {
        case .double(let d): self = Float(d)
        case .int(let i): self = Float(i)
        default: return nil
        }
    }
    /// The stored form.
    @inline(__always) public var strataStored: Value { .double(Double(self)) }
}

extension Decimal: PersistentAttributeValue {
    /// The attribute type values of this type are stored as.
    public static var strataAttributeType: AttributeType { .decimal }
    /// What a non-optional property reads when its storage holds none.
    public static var strataFallback: Decimal { 0 }
    /// The value from its stored form, or nil when the stored value is of another kind.
    public init?(strataStored value: Value) {
        guard let d = value.decimalValue else { return nil }
        self = d
    }
    /// The stored form.
    public var strataStored: Value { .decimal(self) }
}

extension Bool: PersistentAttributeValue {
    /// The attribute type values of this type are stored as.
    public static var strataAttributeType: AttributeType { .bool }
    /// What a non-optional property reads when its storage holds none.
    public static var strataFallback: Bool { false }
    /// The value from its stored form, or nil when the stored value is of another kind.
    @inline(__always) public init?(strataStored value: Value) {
        guard let b = value.boolValue else { return nil }
        self = b
    }
    /// The stored form.
    @inline(__always) public var strataStored: Value { .bool(self) }
}

extension Date: PersistentAttributeValue {
    /// The attribute type values of this type are stored as.
    public static var strataAttributeType: AttributeType { .date }
    /// What a non-optional property reads when its storage holds none.
    public static var strataFallback: Date { Date(timeIntervalSince1970: 0) }
    /// The value from its stored form, or nil when the stored value is of another kind.
    public init?(strataStored value: Value) {
        guard case .date(let d) = value else { return nil }
        self = d
    }
    /// The stored form.
    public var strataStored: Value { .date(self) }
}

extension Data: PersistentAttributeValue {
    /// The attribute type values of this type are stored as.
    public static var strataAttributeType: AttributeType { .data }
    /// What a non-optional property reads when its storage holds none.
    public static var strataFallback: Data { Data() }
    /// The value from its stored form, or nil when the stored value is of another kind.
    public init?(strataStored value: Value) {
        guard case .data(let d) = value else { return nil }
        self = d
    }
    /// The stored form.
    public var strataStored: Value { .data(self) }
}

extension UUID: PersistentAttributeValue {
    /// The attribute type values of this type are stored as.
    public static var strataAttributeType: AttributeType { .uuid }
    /// What a non-optional property reads when its storage holds none.
    public static var strataFallback: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
    /// The value from its stored form, or nil when the stored value is of another kind.
    public init?(strataStored value: Value) {
        guard case .uuid(let u) = value else { return nil }
        self = u
    }
    /// The stored form.
    public var strataStored: Value { .uuid(self) }
}

extension URL: PersistentAttributeValue {
    /// The attribute type values of this type are stored as.
    public static var strataAttributeType: AttributeType { .uri }
    /// What a non-optional property reads when its storage holds none.
    public static var strataFallback: URL { URL(string: "about:blank")! }
    /// The value from its stored form, or nil when the stored value is of another kind.
    public init?(strataStored value: Value) {
        guard case .uri(let u) = value else { return nil }
        self = u
    }
    /// The stored form.
    public var strataStored: Value { .uri(self) }
}

extension Optional: PersistentAttributeValue where Wrapped: PersistentAttributeValue {
    /// The attribute type values of this type are stored as.
    public static var strataAttributeType: AttributeType { Wrapped.strataAttributeType }
    /// Optional.
    public static var strataIsOptional: Bool { true }
    /// What a non-optional property reads when its storage holds none.
    public static var strataFallback: Wrapped? { nil }
    /// The value from its stored form, or nil when the stored value is of another kind.
    @inline(__always) public init?(strataStored value: Value) {
        if case .null = value {
            self = .none
        } else {
            guard let wrapped = Wrapped(strataStored: value) else { return nil }
            self = .some(wrapped)
        }
    }
    /// The stored form.
    @inline(__always) public var strataStored: Value { self?.strataStored ?? .null }
}

extension PersistentAttributeValue where Self: RawRepresentable, RawValue: PersistentAttributeValue {
    /// The raw value's attribute type.
    public static var strataAttributeType: AttributeType { RawValue.strataAttributeType }
    /// The raw value, if it names a case.
    public init?(strataStored value: Value) {
        guard let raw = RawValue(strataStored: value), let v = Self(rawValue: raw) else { return nil }
        self = v
    }
    /// The raw value's stored form.
    public var strataStored: Value { rawValue.strataStored }
}

extension PersistentAttributeValue where Self: RawRepresentable & CaseIterable, RawValue: PersistentAttributeValue {
    /// The first case.
    public static var strataFallback: Self { allCases.first! }
}
