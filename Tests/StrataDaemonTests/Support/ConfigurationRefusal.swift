import Foundation
import Testing
@testable import StrataDaemon

/// Expects `parse` to refuse `text` with a ``ConfigurationError`` that names `key` and says
/// `reason` (and, given `kinds`, is of one of them): the configuration tests' one check of a
/// refusal.
func expectRefused<T>(_ text: String, key: String, reason: String, kinds: [ConfigurationError.Kind]? = nil,
                      sourceLocation: SourceLocation = #_sourceLocation, _ parse: (String) throws(ConfigurationError) -> T) {
    do {
        _ = try parse(text)
        Issue.record("accepted: \(text)", sourceLocation: sourceLocation)
    } catch {
        if let kinds { #expect(kinds.contains(error.kind), "\(error)", sourceLocation: sourceLocation) }
        #expect(error.key == key, "\(error)", sourceLocation: sourceLocation)
        #expect(error.description.contains(reason), "\(error)", sourceLocation: sourceLocation)
    }
}
