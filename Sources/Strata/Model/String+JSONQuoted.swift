extension String {
    /// The string as a JSON string literal: quotes, backslashes and control characters (DEL
    /// included) escaped, everything else as it is. Model files written as JSON and predicates'
    /// descriptions quote strings with it.
    var jsonQuoted: String {
        var out = "\""
        for scalar in unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
