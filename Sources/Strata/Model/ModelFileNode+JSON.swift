import Foundation

// MARK: - Reading

extension ModelFileNode {
    /// Parses JSON text (RFC 8259) into a node tree, keeping line numbers, number literals
    /// as written, and rejecting duplicate keys in an object.
    static func parseJSON(_ data: Data) throws(ModelFileSyntaxError) -> ModelFileNode {
        var parser = JSONReader(bytes: Array(data))
        if parser.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
        parser.skipWhitespace()
        let node = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.index < parser.bytes.count {
            throw parser.error("unexpected text after the end of the JSON document")
        }
        return node
    }
}

private struct JSONReader {
    let bytes: [UInt8]
    var index = 0
    var line = 1

    init(bytes: [UInt8]) { self.bytes = bytes }

    func error(_ message: String) -> ModelFileSyntaxError {
        ModelFileSyntaxError(message: "invalid JSON: \(message)", line: line)
    }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while let c = current {
            switch c {
            case 0x20, 0x09, 0x0D: index += 1
            case 0x0A: index += 1; line += 1
            default: return
            }
        }
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws(ModelFileSyntaxError) {
        guard current == byte else {
            throw error(current == nil ? "unexpected end of file, expected \(what)" : "expected \(what)")
        }
        index += 1
    }

    mutating func parseValue(depth: Int) throws(ModelFileSyntaxError) -> ModelFileNode {
        guard depth < 200 else { throw error("nesting is too deep") }
        let startLine = line
        guard let c = current else { throw error("unexpected end of file, expected a value") }
        switch c {
        case UInt8(ascii: "{"):
            index += 1
            var pairs: [(key: String, value: ModelFileNode)] = []
            var seen: Set<String> = []
            skipWhitespace()
            if current == UInt8(ascii: "}") { index += 1; return ModelFileNode(.object(pairs), line: startLine) }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { throw error("expected a quoted key") }
                let keyLine = line
                let key = try parseString()
                guard seen.insert(key).inserted else {
                    throw ModelFileSyntaxError(message: "duplicate key '\(key)'", line: keyLine)
                }
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "':' after a key")
                skipWhitespace()
                pairs.append((key, try parseValue(depth: depth + 1)))
                skipWhitespace()
                if current == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "}"), "',' or '}'")
                return ModelFileNode(.object(pairs), line: startLine)
            }
        case UInt8(ascii: "["):
            index += 1
            var items: [ModelFileNode] = []
            skipWhitespace()
            if current == UInt8(ascii: "]") { index += 1; return ModelFileNode(.array(items), line: startLine) }
            while true {
                skipWhitespace()
                items.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                if current == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "]"), "',' or ']'")
                return ModelFileNode(.array(items), line: startLine)
            }
        case UInt8(ascii: "\""):
            return ModelFileNode(.string(try parseString()), line: startLine)
        case UInt8(ascii: "t"): try literal("true"); return ModelFileNode(.bool(true), line: startLine)
        case UInt8(ascii: "f"): try literal("false"); return ModelFileNode(.bool(false), line: startLine)
        case UInt8(ascii: "n"): try literal("null"); return ModelFileNode(.null, line: startLine)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return ModelFileNode(.number(try parseNumber()), line: startLine)
        default:
            throw error("unexpected character '\(Character(Unicode.Scalar(c)))'")
        }
    }

    mutating func literal(_ word: String) throws(ModelFileSyntaxError) {
        let utf8 = Array(word.utf8)
        guard index + utf8.count <= bytes.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
            throw error("unexpected word, expected '\(word)'")
        }
        index += utf8.count
    }

    mutating func parseNumber() throws(ModelFileSyntaxError) -> String {
        let start = index
        func digits() -> Int {
            var n = 0
            while let c = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) { index += 1; n += 1 }
            return n
        }
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") { index += 1 } else if digits() == 0 { throw error("invalid number") }
        if current == UInt8(ascii: ".") {
            index += 1
            if digits() == 0 { throw error("invalid number: digits expected after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            if digits() == 0 { throw error("invalid number: digits expected in the exponent") }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    mutating func parseString() throws(ModelFileSyntaxError) -> String {
        index += 1  // opening quote
        var out: [UInt8] = []
        while true {
            guard let c = current else { throw error("unterminated string") }
            index += 1
            switch c {
            case UInt8(ascii: "\""):
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let e = current else { throw error("unterminated string") }
                index += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error("unpaired UTF-16 surrogate in \\u escape")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid UTF-16 surrogate pair") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                    out.append(contentsOf: Array(String(Character(u)).utf8))
                default:
                    throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))'")
                }
            case 0x00..<0x20:
                throw error("control character in a string; escape it (\\n, \\t, \\u0000)")
            default:
                out.append(c)
            }
        }
    }

    mutating func hex4() throws(ModelFileSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count,
              let v = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
        else { throw error("invalid \\u escape: four hex digits expected") }
        index += 4
        return v
    }
}

// MARK: - Writing

extension ModelFileNode {
    /// JSON text with object keys sorted, two-space indentation and a final newline.
    func jsonText() -> String {
        var out = ""
        writeJSON(into: &out, indent: "")
        return out + "\n"
    }

    private func writeJSON(into out: inout String, indent: String) {
        switch content {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n
        case .string(let s), .plain(let s): out += s.jsonQuoted
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            if items.allSatisfy(\.isScalar) {
                out += "[" + items.map { item in var s = ""; item.writeJSON(into: &s, indent: ""); return s }
                    .joined(separator: ", ") + "]"
                return
            }
            let inner = indent + "  "
            out += "[\n"
            for (i, item) in items.enumerated() {
                out += inner
                item.writeJSON(into: &out, indent: inner)
                out += i == items.count - 1 ? "\n" : ",\n"
            }
            out += indent + "]"
        case .object(let pairs):
            if pairs.isEmpty { out += "{}"; return }
            let inner = indent + "  "
            out += "{\n"
            let sorted = pairs.sorted { $0.key < $1.key }
            for (i, pair) in sorted.enumerated() {
                out += inner + pair.key.jsonQuoted + ": "
                pair.value.writeJSON(into: &out, indent: inner)
                out += i == sorted.count - 1 ? "\n" : ",\n"
            }
            out += indent + "}"
        }
    }

    var isScalar: Bool {
        switch content {
        case .array, .object: return false
        default: return true
        }
    }
}
