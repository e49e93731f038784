import ArgumentParser
import Foundation
import Strata
import Synchronization

/// Prints a JSON-compatible value (dictionaries, arrays, scalars) on stdout, keys sorted.
func printJSON(_ value: Any) throws {
    print(try JSONOutput.string(jsonObject: value))
}

/// The progress bar of `stratactl`, drawn here only: `[#########---------------------]  30% label`.
///
/// On a terminal it redraws one line in place (erasing the rest of a longer previous one);
/// otherwise it prints a line per update, or only per 10% step (`decilesOnly`), so that logs
/// stay short. Disabled, it prints nothing.
final class ProgressBar: Sendable {
    private struct State {
        var lastDecile = -1
        var drawn = false
    }

    private let enabled: Bool
    private let output: FileHandle
    private let isTerminal: Bool
    private let decilesOnly: Bool
    private let state = Mutex(State())

    /// A bar on `output` (standard error by default).
    init(enabled: Bool, output: FileHandle = .standardError, decilesOnly: Bool = true) {
        self.enabled = enabled
        self.output = output
        self.isTerminal = isatty(output.fileDescriptor) != 0
        self.decilesOnly = decilesOnly
    }

    /// `[#########---------------------]  30%`: the bar itself, `fraction` clamped to 0...1.
    static func bar(fraction: Double, width: Int = 30) -> String {
        let clamped = min(1, max(0, fraction))
        let filled = Int(clamped * Double(width))
        let percent = String(Int(clamped * 100))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
            + String(repeating: " ", count: max(0, 3 - percent.count)) + percent + "%"
    }

    /// Draws `prefix [bar] NN% label`.
    func update(fraction: Double, label: String, prefix: String = "") {
        guard enabled else { return }
        let clamped = min(1, max(0, fraction))
        let line = prefix + Self.bar(fraction: clamped) + " " + String(label.prefix(70))
        state.withLock { state in
            if isTerminal {
                output.write(Data("\r\(line)\u{1B}[K".utf8))
                state.drawn = true
                return
            }
            let decile = Int(clamped * 10)
            guard !decilesOnly || decile != state.lastDecile else { return }
            state.lastDecile = decile
            output.write(Data((decilesOnly ? "\(decile * 10)% \(label)" : line).utf8 + [UInt8(ascii: "\n")]))
        }
    }

    /// Ends the bar's line on a terminal.
    func finish() {
        state.withLock { state in
            if state.drawn { output.write(Data("\n".utf8)) }
            state.drawn = false
        }
    }
}
