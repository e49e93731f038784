import Foundation

/// What `varlink/<interface>.swift.json` says beside the IDL, or one part of it (a type's, a
/// method's, an error's notes): the `///` docs, a field's Swift type, an enum field's Swift name,
/// initializer defaults, `replyAlias`, `alias` and `reason`.
struct Notes {
    private let values: [String: Any]

    init(_ values: [String: Any] = [:]) {
        self.values = values
    }

    /// Reads `file`; `name` names it in errors.
    init(contentsOf file: URL, name: String) throws {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw CodegenError("\(name): cannot read it (\(error.localizedDescription)); each .varlink needs its .swift.json beside it")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data), let values = object as? [String: Any] else {
            throw CodegenError("\(name): not a JSON object")
        }
        self.values = values
    }

    /// The names under this level, sorted (a stable order for errors).
    var keys: [String] { values.keys.sorted() }

    func has(_ key: String) -> Bool { values[key] != nil }

    /// The notes under `key` (none when absent).
    subscript(key: String) -> Notes { Notes(values[key] as? [String: Any] ?? [:]) }

    func string(_ key: String) -> String? { values[key] as? String }

    /// `doc`: a list of lines (a type's, a method's, an error's) or one line (a field's).
    func doc(or fallback: [String]) -> [String] {
        if let lines = values["doc"] as? [String] { return lines }
        if let line = values["doc"] as? String { return [line] }
        return fallback
    }

    /// These notes with `other`'s on top (Python's `{**self, **other}`).
    func merging(_ other: Notes) -> Notes {
        Notes(values.merging(other.values) { _, new in new })
    }

    var isEmpty: Bool { values.isEmpty }
}
