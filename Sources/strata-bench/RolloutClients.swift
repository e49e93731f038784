import ArgumentParser
import Foundation
import StrataVarlink
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The monotonic clock in nanoseconds, the same in every process of the machine: client
/// processes report when each call started, the benchmark compares it with the reload.
func monotonicNanoseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
}

/// One client of `strata-bench rollout`, in a process of its own (`rollout-client`): calls the
/// data socket every `interval` as a client built against one model version — the old one
/// (`Roll 1`: `code`, `note`) names its version, the new one (`Roll 2`: `label`, `tier`) names
/// none — until its standard input ends. Per call, in turn: an insert, an insert, an update of
/// one of its own rows (the removed attribute or the added one), a fetch of that row by key.
/// Then it writes `r START_NS TOOK_NS` per call, `a PK CODE` per acknowledged insert, `e
/// MESSAGE` per failed call and `end`.
struct RolloutClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollout-client",
        abstract: "One client process of `strata-bench rollout` (started by it; not run by hand).",
        shouldDisplay: false
    )

    @Option(name: .long, help: "The daemon's data socket.") var socket: String
    @Option(name: .long, help: "This client's number.") var client = 0
    @Option(name: .long, help: "The model version the client names (none: the store's own, as a current client).") var version: String?
    @Flag(name: .long, help: "Write in Roll 1's names (code, note); otherwise Roll 2's (label, tier).") var old = false
    @Option(name: .customLong("interval-us"), help: "Pause between calls, in microseconds.") var interval = 5000

    func run() async throws {
        let stop = Atomic<Bool>(false)
        // The benchmark ends the client by closing its standard input.
        Thread.detachNewThread {
            while readLine() != nil {}
            stop.store(true, ordering: .relaxed)
        }
        var lines: [String] = []
        let key = old ? "code" : "label", extra = old ? "note" : "tier"
        var sequence = 0
        var own: [Int64] = []
        do {
            try await VarlinkClient.withConnection(to: socket) { data in
                while !stop.load(ordering: .relaxed) {
                    sequence += 1
                    let start = monotonicNanoseconds()
                    do {
                        switch sequence % 4 {
                        case 1, 2:
                            let code = "c\(client)-\(sequence)"
                            let reply = try await data.call(StrataStore.Insert.self, .init(
                                store: "bench", entity: "Item",
                                values: [key: .string(code), "payload": "rollout write", "rank": .int(Int64(sequence % 1000)), extra: .string("x\(sequence)")],
                                version: version))
                            if let pk = reply.object["_pk"]?.intValue {
                                own.append(pk)
                                lines.append("a \(pk) \(code)")
                            }
                        case 3:
                            if let pk = own.last {
                                _ = try await data.call(StrataStore.Update.self, .init(
                                    store: "bench", entity: "Item", id: pk, values: [extra: .string("u\(sequence)")], version: version))
                            }
                        default:
                            if let pk = own.last {
                                let found = try await data.call(StrataStore.Fetch.self, .init(
                                    store: "bench", entity: "Item", predicate: "SELF == %@", arguments: [.int(pk)], version: version))
                                if found.objects.count != 1 { lines.append("e fetch of \(pk) found \(found.objects.count) objects") }
                            }
                        }
                        lines.append("r \(start) \(monotonicNanoseconds() - start)")
                    } catch {
                        lines.append("e \(error)".replacingOccurrences(of: "\n", with: " "))
                    }
                    if interval > 0 { try await Task.sleep(for: .microseconds(interval)) }
                }
            }
        } catch {
            lines.append("e connection: \(error)".replacingOccurrences(of: "\n", with: " "))
        }
        lines.append("end")
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}

/// The client processes of one `strata-bench rollout` run, and what they answered.
final class RolloutClientProcesses: Sendable {
    /// One call: when it started (monotonic ns), how long it took.
    struct Call: Sendable {
        var start: Int64
        var took: Int64
        var old: Bool
    }

    struct Answers: Sendable {
        var calls: [Call] = []
        /// Acknowledged inserts: primary key → code.
        var acknowledged: [Int64: String] = [:]
        var errors: [String] = []
    }

    private let processes: Mutex<[(process: Process, input: FileHandle, output: FileHandle, old: Bool)]> = Mutex([])
    private let executable: String
    private let socket: String
    private let interval: Int

    init(socket: String, interval: Duration) {
        let executable = URL(filePath: CommandLine.arguments[0]).standardizedFileURL.path
        self.executable = FileManager.default.fileExists(atPath: executable) ? executable : "/proc/self/exe"
        self.socket = socket
        self.interval = Int(interval.milliseconds * 1000)
    }

    /// Starts `count` clients of one kind: `version` named (nil: none), `old` names.
    func start(count: Int, firstNumber: Int, version: String?, old: Bool) throws {
        for number in firstNumber..<(firstNumber + count) {
            let process = Process()
            process.executableURL = URL(filePath: executable)
            process.arguments = ["rollout-client", "--socket", socket, "--client", "\(number)", "--interval-us", "\(interval)"]
                + (version.map { ["--version", $0] } ?? []) + (old ? ["--old"] : [])
            let stdin = Pipe(), stdout = Pipe()
            process.standardInput = stdin
            process.standardOutput = stdout
            try process.run()
            processes.withLock { $0.append((process, stdin.fileHandleForWriting, stdout.fileHandleForReading, old)) }
        }
    }

    /// Ends every client (closes its input) and reads its answers, each on a thread of its own.
    func stop() async -> Answers {
        let all = processes.withLock { $0 }
        for client in all { try? client.input.close() }
        var answers = Answers()
        await withTaskGroup(of: (String, Bool).self) { group in
            for client in all {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        Thread.detachNewThread {
                            let data = client.output.readDataToEndOfFile()
                            client.process.waitUntilExit()
                            continuation.resume(returning: (String(decoding: data, as: UTF8.self), client.old))
                        }
                    }
                }
            }
            for await (text, old) in group {
                var ended = false
                for line in text.split(separator: "\n") {
                    let fields = line.split(separator: " ", maxSplits: 2)
                    switch fields.first {
                    case "r"?:
                        if fields.count == 3, let start = Int64(fields[1]), let took = Int64(fields[2]) {
                            answers.calls.append(Call(start: start, took: took, old: old))
                        }
                    case "a"?:
                        if fields.count == 3, let pk = Int64(fields[1]) { answers.acknowledged[pk] = String(fields[2]) }
                    case "e"?:
                        answers.errors.append(String(line.dropFirst(2)))
                    case "end"?:
                        ended = true
                    default:
                        break
                    }
                }
                if !ended { answers.errors.append("a client process ended without its answers") }
            }
        }
        return answers
    }
}
