import Foundation

/// Writes a ``JSONValue`` as compact JSON text with sorted keys, byte for byte what
/// `JSONEncoder` (`.sortedKeys`, `.withoutEscapingSlashes`) wrote for it, without the
/// `Codable` machinery: numbers as Swift prints them (`3` for `3.0`, `1e+20`), strings with
/// `"`, `\`, and control characters escaped, everything else as UTF-8.
struct JSONValueWriter {
    private(set) var bytes: [UInt8] = []

    /// The text of `value`; nil when it holds a number JSON cannot represent (NaN, infinity).
    static func write(_ value: JSONValue) -> [UInt8]? {
        var writer = JSONValueWriter()
        writer.bytes.reserveCapacity(256)
        guard writer.append(value) else { return nil }
        return writer.bytes
    }

    private mutating func append(_ value: JSONValue) -> Bool {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let b): bytes.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): bytes.append(contentsOf: String(i).utf8)
        case .double(let d):
            guard d.isFinite else { return false }
            var text = d.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            bytes.append(contentsOf: text.utf8)
        case .string(let s): appendString(s)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                guard append(element) else { return false }
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            // Keys in order (the same text for the same value), each member taken with its key
            // rather than looked up again.
            for (i, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                appendString(member.key)
                bytes.append(UInt8(ascii: ":"))
                guard append(member.value) else { return false }
            }
            bytes.append(UInt8(ascii: "}"))
        }
        return true
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private mutating func appendString(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied whole rather than byte by byte.
        let copied = s.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            for byte in utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied == true {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
            case 0x08: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "f"))
            case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
            case 0..<0x20:
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
