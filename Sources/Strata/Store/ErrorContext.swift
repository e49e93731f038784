/// The context an error message starts with: `version 'Aircraft 2', entity 'Aircraft': ` from the
/// parts that are present (nothing when none is), so that every error of the library names
/// what it concerns in the same words and order.
enum ErrorContext {
    /// The present `parts` joined by ", " and followed by ": ", or "" when none is present.
    static func prefix(_ parts: String?...) -> String {
        let present = parts.compactMap { $0 }
        return present.isEmpty ? "" : present.joined(separator: ", ") + ": "
    }
}

extension Optional where Wrapped == String {
    /// `label 'value'` (`entity 'Aircraft'`), or nil without a value: a part of an
    /// ``ErrorContext/prefix(_:)``.
    static func quoted(_ label: String, _ value: String?) -> String? {
        value.map { "\(label) '\($0)'" }
    }
}
