import Foundation

extension DeferredFinisher {
    /// A step's name in words for the log, from the Swift function that ran it:
    /// `runStreamedBuild(_:state:step:adopted:)` → `streamed build`, `copyBatch(_:_:)` → `copy batch`.
    /// A label that is already words is kept as it is.
    static func stepName(_ label: String) -> String {
        let base = label.split(separator: "(", maxSplits: 1).first.map(String.init) ?? label
        guard !base.contains(" ") else { return base }
        var words: [String] = []
        var current = ""
        for character in base {
            if character.isUppercase, !current.isEmpty {
                words.append(current)
                current = ""
            }
            if character == "_" {
                if !current.isEmpty { words.append(current) }
                current = ""
                continue
            }
            current.append(character.lowercased())
        }
        if !current.isEmpty { words.append(current) }
        // "run" and "step" say nothing about which step it is.
        if words.count > 1, words.first == "run" || words.first == "step" { words.removeFirst() }
        return words.isEmpty ? "deferred step" : words.joined(separator: " ")
    }
}
