import ArgumentParser
import Foundation
import Strata

/// Prints a JSON-compatible value (dictionaries, arrays, scalars) on stdout, keys sorted.
func printJSON(_ value: Any) throws {
    print(try JSONOutput.string(jsonObject: value))
}

/// A one-line progress bar on stderr, redrawn in place; silent when stderr is not a terminal
/// (then a line per 10% step) or when disabled.
final class ProgressBar: @unchecked Sendable {
    private let enabled: Bool
    private let isTerminal = isatty(STDERR_FILENO) != 0
    private let lock = NSLock()
    private var lastDecile = -1
    private var drawn = false

    init(enabled: Bool) { self.enabled = enabled }

    func update(fraction: Double, label: String) {
        guard enabled else { return }
        lock.lock(); defer { lock.unlock() }
        let clamped = min(1, max(0, fraction))
        if isTerminal {
            let width = 30
            let filled = Int(clamped * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let text = String(format: "\r[%@] %3d%% %@", bar, Int(clamped * 100), String(label.prefix(70)) as NSString)
            FileHandle.standardError.write(Data((text + "\u{1B}[K").utf8))
            drawn = true
        } else {
            let decile = Int(clamped * 10)
            if decile != lastDecile {
                lastDecile = decile
                FileHandle.standardError.write(Data("\(decile * 10)% \(label)\n".utf8))
            }
        }
    }

    func finish() {
        lock.lock(); defer { lock.unlock() }
        if drawn { FileHandle.standardError.write(Data("\n".utf8)) }
        drawn = false
    }
}
