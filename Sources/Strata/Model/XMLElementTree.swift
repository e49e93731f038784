import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// A parsed XML element: name, attributes, child elements and the line it starts on.
struct XMLElementTree {
    var name: String
    var attributes: [String: String]
    var children: [XMLElementTree] = []
    var line: Int?
    /// The element's own text (character data directly inside it), trimmed of surrounding white space.
    var text: String { rawText.trimmingCharacters(in: .whitespacesAndNewlines) }
    fileprivate var rawText = ""

    /// The deepest element nesting accepted: a Core Data model nests a few levels; a deeper
    /// document would make the tree's (recursive) destruction exhaust the stack.
    static let maxDepth = 200

    /// Parses a whole document with Foundation's `XMLParser` (no external entities).
    ///
    /// Refused before the parser sees them, because Foundation's `XMLParser` crashes on them
    /// (both found by fuzzing): invalid UTF-8, and processing instructions (`<?x?>`) other than
    /// the XML declaration. Elements nested deeper than ``maxDepth`` are refused while parsing.
    static func parse(_ data: Data, file: String?) throws(ModelError) -> XMLElementTree {
        if let offset = invalidUTF8Offset(data) {
            throw ModelError(.invalidFile, "the file is not valid UTF-8 (at byte offset \(offset)); Core Data model contents are UTF-8 XML", file: file)
        }
        if let offset = processingInstructionOffset(data) {
            throw ModelError(.invalidFile, "processing instructions (<?…?>) are not part of a Core Data model (at byte offset \(offset)); remove it", file: file)
        }
        let parser = XMLParser(data: data)
        let builder = Builder()
        parser.delegate = builder
        parser.shouldResolveExternalEntities = false
        let parsed = parser.parse()
        if builder.tooDeep {
            throw ModelError(.invalidFile, "line \(parser.lineNumber): elements are nested more than \(maxDepth) levels deep; this is not a Core Data model", file: file)
        }
        guard parsed, let root = builder.root else {
            let line = parser.lineNumber
            let reason = parser.parserError.map { "\($0.localizedDescription)" } ?? "not a well-formed XML document"
            throw ModelError(.invalidFile, "line \(line), column \(parser.columnNumber): invalid XML: \(reason)", file: file)
        }
        return root
    }

    // MARK: - Checks before parsing

    /// The offset of the first byte that is not part of valid UTF-8, or nil.
    static func invalidUTF8Offset(_ data: Data) -> Int? {
        var iterator = data.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    /// The offset of the first `<?` that is not the XML declaration at the start (`<?xml`
    /// followed by white space: `<?xmli?>` is a processing instruction), or nil.
    static func processingInstructionOffset(_ data: Data) -> Int? {
        let bytes = [UInt8](data)
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        let declaration = Array("<?xml".utf8)
        if bytes[start...].starts(with: declaration), bytes.count > start + declaration.count,
           [0x20, 0x09, 0x0D, 0x0A].contains(bytes[start + declaration.count]),
           let end = firstIndex(of: Array("?>".utf8), in: bytes, from: start) {
            start = end + 2
        }
        return firstIndex(of: Array("<?".utf8), in: bytes, from: start)
    }

    private static func firstIndex(of needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        for i in start...(bytes.count - needle.count) where bytes[i] == needle[0] && Array(bytes[i..<i + needle.count]) == needle {
            return i
        }
        return nil
    }

    // MARK: - Building

    /// Collects elements; used only on the parsing thread, for the duration of one parse.
    private final class Builder: NSObject, XMLParserDelegate {
        var stack: [XMLElementTree] = []
        var root: XMLElementTree?
        var tooDeep = false

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            guard stack.count < XMLElementTree.maxDepth else {
                tooDeep = true
                stack.removeAll()
                parser.abortParsing()
                return
            }
            stack.append(XMLElementTree(name: elementName, attributes: attributes, line: parser.lineNumber))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].rawText += string
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            guard let element = stack.popLast() else { return }
            if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(element) }
        }
    }
}
