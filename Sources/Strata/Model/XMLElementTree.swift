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

    /// Parses a whole document with Foundation's `XMLParser` (no external entities).
    static func parse(_ data: Data, file: String?) throws(ModelError) -> XMLElementTree {
        let parser = XMLParser(data: data)
        let builder = Builder()
        parser.delegate = builder
        parser.shouldResolveExternalEntities = false
        guard parser.parse(), let root = builder.root else {
            let line = parser.lineNumber
            let reason = parser.parserError.map { "\($0.localizedDescription)" } ?? "not a well-formed XML document"
            throw ModelError(.invalidFile, "line \(line): invalid XML: \(reason)", file: file)
        }
        return root
    }

    /// Collects elements; used only on the parsing thread, for the duration of one parse.
    private final class Builder: NSObject, XMLParserDelegate {
        var stack: [XMLElementTree] = []
        var root: XMLElementTree?

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            stack.append(XMLElementTree(name: elementName, attributes: attributes, line: parser.lineNumber))
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            guard let element = stack.popLast() else { return }
            if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(element) }
        }
    }
}
