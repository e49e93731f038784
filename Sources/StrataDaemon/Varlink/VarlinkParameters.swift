import Foundation

/// Typed access to a call's parameters. A missing required parameter, a value of the wrong
/// type, or a parameter the method does not take is `org.varlink.service.InvalidParameter`.
public struct VarlinkParameters: Sendable {
    public let values: [String: JSONValue]

    /// - Throws: `InvalidParameter` naming the first parameter not in `allowed`.
    public init(_ values: [String: JSONValue], allowed: Set<String>) throws(VarlinkError) {
        if let unknown = values.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw .invalidParameter(unknown)
        }
        self.values = values
    }

    private func present(_ key: String) -> JSONValue? {
        guard let value = values[key], value != .null else { return nil }
        return value
    }

    public func string(_ key: String) throws(VarlinkError) -> String? {
        guard let value = present(key) else { return nil }
        guard case .string(let s) = value else { throw .invalidParameter(key) }
        return s
    }

    public func requiredString(_ key: String) throws(VarlinkError) -> String {
        guard let value = try string(key) else { throw .invalidParameter(key) }
        return value
    }

    public func int(_ key: String) throws(VarlinkError) -> Int64? {
        guard let value = present(key) else { return nil }
        guard case .int(let i) = value else { throw .invalidParameter(key) }
        return i
    }

    public func requiredInt(_ key: String) throws(VarlinkError) -> Int64 {
        guard let value = try int(key) else { throw .invalidParameter(key) }
        return value
    }

    public func bool(_ key: String) throws(VarlinkError) -> Bool? {
        guard let value = present(key) else { return nil }
        guard case .bool(let b) = value else { throw .invalidParameter(key) }
        return b
    }

    public func object(_ key: String) throws(VarlinkError) -> [String: JSONValue]? {
        guard let value = present(key) else { return nil }
        guard case .object(let o) = value else { throw .invalidParameter(key) }
        return o
    }

    public func requiredObject(_ key: String) throws(VarlinkError) -> [String: JSONValue] {
        guard let value = try object(key) else { throw .invalidParameter(key) }
        return value
    }

    public func array(_ key: String) throws(VarlinkError) -> [JSONValue]? {
        guard let value = present(key) else { return nil }
        guard case .array(let a) = value else { throw .invalidParameter(key) }
        return a
    }
}
