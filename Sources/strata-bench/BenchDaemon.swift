import Foundation
import Strata
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A real `stratad` process for a benchmark: spawned with `NOTIFY_SOCKET` pointing at a
/// datagram socket the benchmark owns, so that the time from exec to `READY=1` is measured as
/// systemd would see it; its log goes to a file; its peak RSS is read from `/proc`.
final class BenchDaemon: Sendable {
    let process: Process
    let configPath: String
    let logPath: String
    /// exec → `READY=1`.
    let ready: Duration

    /// Spawns `stratad --config config` and waits for `READY=1` (at most `timeout`).
    init(executable: URL, config: String, log: String, notifyDirectory: URL, timeout: Duration = .seconds(600)) throws {
        configPath = config
        logPath = log
        let listener = try NotifyListener(path: notifyDirectory.appending(path: "notify.sock").path)
        defer { listener.close() }
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--config", config]
        var environment = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "JOURNAL_STREAM"] {
            environment[key] = nil
        }
        environment["NOTIFY_SOCKET"] = listener.path
        process.environment = environment
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let output = try FileHandle(forWritingTo: URL(filePath: log))
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        let started = ContinuousClock.now
        try process.run()
        self.process = process
        guard let at = listener.wait(for: "READY=1", timeout: timeout, while: { process.isRunning }) else {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            let tail = (try? String(contentsOfFile: log, encoding: .utf8))?.suffix(2000) ?? ""
            throw BenchError("stratad sent no READY=1 (exit status \(process.isRunning ? "running" : "\(process.terminationStatus)")); its log (\(log)) ends with:\n\(tail)")
        }
        ready = at - started
    }

    var pid: Int32 { process.processIdentifier }

    /// Peak resident set size so far (`VmHWM`), in MiB.
    var peakRSSMegabytes: Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return 0 }
        return kilobytes / 1024
    }

    /// The daemon's log so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// SIGTERM, then waits for the exit; returns the exit status.
    @discardableResult
    func stop(timeout: Duration = .seconds(60)) -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// The benchmark's end of `NOTIFY_SOCKET`: a Unix datagram socket read by a thread of its own,
/// which notes when each message arrives.
final class NotifyListener: Sendable {
    let path: String
    private let fd: Int32
    private let messages = Mutex<[(text: String, at: ContinuousClock.Instant)]>([])
    private let stopped = Atomic<Bool>(false)
    private let done = Atomic<Bool>(false)

    init(path: String) throws {
        guard path.utf8.count < 108 else { throw BenchError("notify socket path too long (\(path.utf8.count) bytes): \(path)") }
        self.path = path
        unlink(path)
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        fd = descriptor
        guard descriptor >= 0 else { throw BenchError("socket(AF_UNIX, SOCK_DGRAM): \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            path.utf8CString.withUnsafeBytes { buffer.copyMemory(from: $0) }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw BenchError("bind \(path): \(reason)")
        }
        var timeout = timeval(tv_sec: 0, tv_usec: 20_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let thread = Thread { [self] in
            let fd = descriptor
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !stopped.load(ordering: .relaxed) {
                let n = recv(fd, &buffer, buffer.count, 0)
                if n > 0 {
                    let now = ContinuousClock.now
                    let text = String(decoding: buffer[0..<n], as: UTF8.self)
                    messages.withLock { $0.append((text, now)) }
                } else if n < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
                    break
                }
            }
            // The reader closes the descriptor itself, so its number is not reused while it reads.
            Glibc.close(fd)
            done.store(true, ordering: .relaxed)
        }
        thread.start()
    }

    /// When a message containing `text` arrived (waits up to `timeout`, while `alive`).
    func wait(for text: String, timeout: Duration, while alive: () -> Bool) -> ContinuousClock.Instant? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let hit = messages.withLock({ $0.first { $0.text.contains(text) }?.at }) { return hit }
            guard alive() else { return nil }
            usleep(1000)
        }
        return nil
    }

    func close() {
        stopped.store(true, ordering: .relaxed)
        unlink(path)
    }
}

extension BenchDaemon {
    /// Starts the release stratad serving one store of the crud data set (`Bench 1`, created
    /// when missing) at `path`: models, configuration, sockets and log under `directory`, named
    /// with `prefix`. Returns the daemon and its data socket.
    static func serving(store: String, at path: URL, prefix: String, in directory: URL, executable: URL,
                        maxConnections: Int) throws -> (BenchDaemon, String) {
        let models = directory.appending(path: "\(prefix)-models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try ModelFile.encode(CRUDDataSet.model, format: .yaml).write(to: models.appending(path: "Bench 1.yaml"))
        try "current: Bench 1\nversions:\n  - Bench 1.yaml\n".write(to: models.appending(path: "versions.yaml"), atomically: true, encoding: .utf8)
        let run = directory.appending(path: "\(prefix)-run")
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
        let dataSocket = run.appending(path: "data.sock").path
        let config = directory.appending(path: "\(prefix).yaml").path
        try """
            stores:
              - name: \(store)
                path: \(path.path)
                model: \(models.path)
            sockets:
              admin: {path: \(run.appending(path: "admin.sock").path), mode: "0600", users: ["\(getuid())"]}
              data: {path: \(dataSocket), mode: "0600", allow_any_peer: true}
            limits: {max_connections: \(maxConnections)}
            log_level: warning

            """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try BenchDaemon(executable: executable, config: config, log: directory.appending(path: "\(prefix).log").path, notifyDirectory: run)
        return (daemon, dataSocket)
    }
}
