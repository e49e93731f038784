import Foundation

/// JSON for standard output: pretty-printed, keys sorted, dates in ISO 8601.
enum JSONOutput {
    static func print<T: Encodable>(_ value: T) throws {
        Swift.print(try string(value))
    }

    static func string<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(isoString(date))
        }
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// A `JSONSerialization`-compatible value (objects from `jsonObject(style:)`) as text.
    static func string(jsonObject: Any) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: jsonObject, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    static func isoString(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }
}
