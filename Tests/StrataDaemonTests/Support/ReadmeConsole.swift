import Foundation

/// The console blocks of README.md: each `$ stratactl …` command with the output lines the
/// README shows for it. DemoTests runs the same commands in the same story and checks every
/// documented line against its real output, allowing what changes from run to run (see
/// ``normalized(_:)``); a `…` line stands for lines left out.
struct ReadmeConsole {
    /// One documented command and its output lines (without the `…` lines).
    struct Command: Hashable {
        /// The command as typed, without the `$ ` and any `# comment`.
        var command: String
        /// The output lines shown.
        var lines: [String]
    }

    let commands: [Command]

    init(readme: URL = Paths.packageRoot.appendingPathComponent("README.md")) throws {
        let text = try String(contentsOf: readme, encoding: .utf8)
        var commands: [Command] = []
        var inConsole = false
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("```") {
                inConsole = !inConsole && line == "```console"
                continue
            }
            guard inConsole else { continue }
            if line.hasPrefix("$ ") {
                let typed = line.dropFirst(2).components(separatedBy: " #").first ?? ""
                commands.append(Command(command: typed.trimmingCharacters(in: .whitespaces), lines: []))
            } else if !commands.isEmpty, line.trimmingCharacters(in: .whitespaces) != "…" {
                commands[commands.count - 1].lines.append(line)
            }
        }
        self.commands = commands
    }

    /// The documented `stratactl` commands, each with its occurrence (the second
    /// `stratactl status` is `("stratactl status", 2)`).
    var stratactl: [(key: Key, lines: [String])] {
        var seen: [String: Int] = [:]
        return commands.filter { $0.command.hasPrefix("stratactl ") }.map { command in
            seen[command.command, default: 0] += 1
            return (Key(command: command.command, occurrence: seen[command.command]!), command.lines)
        }
    }

    /// A command and which time it runs in the story.
    struct Key: Hashable, CustomStringConvertible {
        var command: String
        var occurrence: Int
        var description: String { "`\(command)` (#\(occurrence))" }
    }

    /// The daemon's log lines the README quotes for the demo: the `code` spans of its
    /// "Terminal 1 shows the same story in the daemon's log (…)" sentence, a trailing `…` cut.
    static func quotedLogLines(readme: URL = Paths.packageRoot.appendingPathComponent("README.md")) -> [String] {
        guard let text = try? String(contentsOf: readme, encoding: .utf8),
              let start = text.range(of: "Terminal 1 shows the same story in the daemon's log ("),
              let end = text.range(of: "); under systemd", range: start.upperBound..<text.endIndex) else { return ["(README.md: no quoted log lines)"] }
        let sentence = text[start.upperBound..<end.lowerBound]
        return sentence.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map {
            $0.element.replacingOccurrences(of: "…", with: "").replacingOccurrences(of: "\n", with: " ").trimmingCharacters(in: .whitespaces)
        }
    }

    /// A line with what changes between runs made equal: every number is `N` (pids, times,
    /// dates, counts, rates, percentages), a progress bar is `[bar]`, runs of spaces are one
    /// (column widths follow the values), and `directory` (the demo's, in a real run's
    /// absolute paths) is the README's `/home/you/strata`.
    static func normalized(_ line: String, directory: String? = nil) -> String {
        var text = line
        if let directory { text = text.replacingOccurrences(of: directory, with: "/home/you/strata") }
        text = text.replacingOccurrences(of: #"\[[#-]{30}\]"#, with: "[bar]", options: .regularExpression)
        text = text.replacingOccurrences(of: #"[0-9]+([.:][0-9]+)*"#, with: "N", options: .regularExpression)
        text = text.replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression)
        return text.trimmingCharacters(in: .whitespaces)
    }

    /// The documented lines that the real `output` lacks (normalized; empty when every one is
    /// there). A line that ends in `…` (a table cell cut to its column) matches a real line
    /// that starts like it, up to the last whole word before the cut: where a cell is cut
    /// depends on the paths in it.
    static func missing(_ lines: [String], in output: String, directory: String?) -> [String] {
        let real = output.components(separatedBy: "\n").map { normalized($0, directory: directory) }
        return lines.filter { line in
            guard !line.isEmpty else { return false }
            let documented = normalized(line, directory: directory)
            guard documented.hasSuffix("…") else { return !real.contains(documented) }
            var prefix = String(documented.dropLast())
            if !prefix.hasSuffix(" "), let space = prefix.lastIndex(of: " ") { prefix = String(prefix[..<space]) }
            prefix = prefix.trimmingCharacters(in: .whitespaces)
            return !real.contains { $0.hasPrefix(prefix) }
        }
    }
}
