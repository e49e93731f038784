import ArgumentParser
import Foundation

/// `strata-bench busy-core`: keeps one core busy for a share of the time (a CPU hog beside the
/// clients, as on a host that runs other work): spins for `percent` of every 10 ms and sleeps the
/// rest, until killed. `strata-bench upgrade --busy-core PERCENT` starts one for its whole run.
struct BusyCoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "busy-core",
        abstract: "Keep one core busy for a share of the time, until killed (started by `strata-bench upgrade --busy-core`).",
        shouldDisplay: false
    )

    @Option(name: .long, help: "Share of each 10 ms period to spin, in percent (1-100).") var percent = 50

    func validate() throws {
        guard (1...100).contains(percent) else { throw ValidationError("--percent must be between 1 and 100") }
    }

    func run() throws {
        let period = Duration.milliseconds(10)
        let busy = period * (Double(percent) / 100)
        let clock = ContinuousClock()
        var sink = 0
        while true {
            let start = clock.now
            while clock.now - start < busy { sink &+= 1 }
            let rest = period - (clock.now - start)
            if rest > .zero { Thread.sleep(forTimeInterval: rest.seconds) }
            if sink == -1 { print(sink) }
        }
    }

    /// Starts a busy-core process of this executable at `percent`; kill it with `terminate()`.
    static func start(percent: Int) throws -> Process {
        let process = Process()
        let executable = URL(filePath: CommandLine.arguments[0]).standardizedFileURL.path
        process.executableURL = URL(filePath: FileManager.default.fileExists(atPath: executable) ? executable : "/proc/self/exe")
        process.arguments = ["busy-core", "--percent", "\(percent)"]
        try process.run()
        return process
    }
}
