import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// Paths of the package and its built executables.
enum Paths {
    static let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The directory of the test bundle, where SwiftPM puts the executables too.
    static var binaries: URL {
        if let override = ProcessInfo.processInfo.environment["STRATA_BIN_DIR"] { return URL(fileURLWithPath: override) }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" {
            if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("stratad").path) { return url }
            url.deleteLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/debug")
    }

    static var stratad: String { binaries.appendingPathComponent("stratad").path }
    static var stratactl: String { binaries.appendingPathComponent("stratactl").path }
    static var aircraftModel: String { packageRoot.appendingPathComponent("config/models/Aircraft").path }
}

/// A temporary directory with a daemon configuration in it.
struct DaemonSandbox {
    let directory: URL
    var configPath: String { directory.appendingPathComponent("stratad.yaml").path }
    var adminSocket: String { directory.appendingPathComponent("run/admin.sock").path }
    var dataSocket: String { directory.appendingPathComponent("run/data.sock").path }

    init() throws {
        // Short paths: Unix socket paths are limited to 107 bytes.
        directory = URL(fileURLWithPath: "/tmp/sd-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Writes a configuration hosting `stores` (name → file) on the Aircraft model.
    func writeConfig(stores: [String] = ["aircraft"], extraStores: String = "", limits: String = "", metrics: String = "",
                     dataAnyPeer: Bool = false, dataGroups: [String] = []) throws {
        var text = "stores:\n"
        for name in stores {
            text += "  - name: \(name)\n    path: \(path("\(name).sqlite"))\n    model: \(Paths.aircraftModel)\n    busy_timeout: 1s\n"
        }
        text += extraStores
        text += """
            sockets:
              admin:
                path: \(adminSocket)
                mode: "0666"
                users: [root]
              data:
                path: \(dataSocket)
                mode: "0666"
                allow_any_peer: \(dataAnyPeer)
                groups: [\(dataGroups.joined(separator: ", "))]
            scheduler:
              idle_after: 1s
            \(limits)
            \(metrics)
            log_level: debug

            """
        try text.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// The configuration of the daemon tests that run deferred work on one seeded store: store
    /// `load` at `store` (default `load.sqlite` here) with `models`, no backup, `storeLines`
    /// added to the store (replication); the sandbox's sockets with `mode`; `scheduler` lines.
    func loadStoreConfig(models: String, store: String? = nil, storeLines: [String] = [], mode: String = "0600",
                         scheduler: [String]) -> String {
        var lines = ["stores:", "  - name: load", "    path: \(store ?? path("load.sqlite"))", "    model: \(models)", "    backup: false"]
        lines += storeLines.map { "    " + $0 }
        lines += ["sockets:", "  admin:", "    path: \(adminSocket)", "    mode: \"\(mode)\"",
                  "  data:", "    path: \(dataSocket)", "    mode: \"\(mode)\"", "scheduler:"]
        lines += scheduler.map { "  " + $0 }
        return (lines + ["log_level: info", ""]).joined(separator: "\n")
    }
}

/// A datagram socket that plays systemd's notify socket.
final class NotifyListener: @unchecked Sendable {
    // @unchecked: the fd is only read by the test's thread; messages guarded by the lock.
    let path: String
    private let fd: Int32
    private let lock = NSLock()
    private var messages: [String] = []
    private var arrivals: [ContinuousClock.Instant] = []

    init(path: String) {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            path.utf8CString.withUnsafeBytes { buffer.copyMemory(from: $0) }
        }
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            // The reader closes the fd itself once stopped, so its number cannot be reused
            // (by the next test's socket) while this thread still reads it.
            while !self.stopped {
                let n = recv(fd, &buffer, buffer.count, 0)
                if n > 0 {
                    let text = String(decoding: buffer[0..<n], as: UTF8.self)
                    lock.lock(); messages.append(text); arrivals.append(.now); lock.unlock()
                } else if n < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
                    break
                }
            }
            Glibc.close(fd)
        }
    }

    var all: [String] { lock.lock(); defer { lock.unlock() }; return messages }

    /// When each message equal to `text` arrived.
    func arrivals(of text: String) -> [ContinuousClock.Instant] {
        lock.lock(); defer { lock.unlock() }
        return zip(messages, arrivals).filter { $0.0 == text }.map(\.1)
    }

    /// Waits until a message satisfies `predicate`; returns it.
    func wait(timeout: Duration = .seconds(20), _ predicate: (String) -> Bool) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let hit = all.first(where: predicate) { return hit }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    private var stopFlag = false
    private var stopped: Bool { lock.lock(); defer { lock.unlock() }; return stopFlag }

    func close() {
        lock.lock(); stopFlag = true; lock.unlock()
        unlink(path)
    }
}

/// A running `stratad`. Released while it still runs (a test that threw before `stop()`),
/// it kills the process: no test leaves a daemon behind.
final class DaemonProcess: @unchecked Sendable {
    let process = Process()
    let output = PipeCapture()

    /// - Parameter wrapper: a command that runs stratad (its path and arguments are appended).
    init(config: String, environment: [String: String] = [:], wrapper: [String] = []) throws {
        process.executableURL = URL(fileURLWithPath: wrapper.first ?? Paths.stratad)
        process.arguments = wrapper.dropFirst() + (wrapper.isEmpty ? [] : [Paths.stratad]) + ["--config", config]
        var env = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "JOURNAL_STREAM"] { env[key] = nil }
        env.merge(environment) { $1 }
        process.environment = env
        try output.run(process)
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    var log: String { output.text }

    /// Whether the log contains `text` within `timeout`: the daemon's output reaches the test
    /// through a pipe, after the reply a test may already have read.
    func logContains(_ text: String, within timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !log.contains(text), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return log.contains(text)
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for exit; returns the status (nil if it did not exit in time, then kills it).
    func waitForExit(timeout: Duration = .seconds(20)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { process.terminate(); return nil }
        return process.terminationStatus
    }

    func stop() async {
        if process.isRunning { signal(SIGTERM); _ = await waitForExit() }
    }
}

/// Waits for a socket file to accept connections.
func waitForSocket(_ path: String, timeout: Duration = .seconds(20)) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if FileManager.default.fileExists(atPath: path),
           (try? await VarlinkClient.withConnection(to: path) { _ in true }) == true { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    Issue.record("socket \(path) never accepted connections")
}

/// Mounts a tmpfs of `size` (`32m`) at `path`; false when that is not possible here (not root).
func mountTmpfs(_ path: String, size: String) -> Bool {
    (try? runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path]).status) == 0
}

extension DaemonSandbox {
    /// The sandbox's directory `disk` with a small file system of its own: a tmpfs of `size`
    /// (`32m`), for tests of a full or nearly full disk. Nil, after printing why `test` is
    /// SKIPPED, where this machine cannot mount one (not root). Unmount it with
    /// ``unmountSmallDisk(_:)``.
    func smallDisk(size: String, for test: String) throws -> String? {
        let disk = path("disk")
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        guard getuid() == 0, mountTmpfs(disk, size: size) else {
            print("SKIPPED \(test): needs root to mount a small tmpfs")
            return nil
        }
        return disk
    }

    /// Unmounts ``smallDisk(size:for:)``'s file system (lazily: open files may remain).
    func unmountSmallDisk(_ disk: String) {
        _ = try? runCommand("/bin/umount", ["-l", disk])
    }
}

/// Runs a command; returns exit status and combined output.
@discardableResult
func runCommand(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
