import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// The daemon's metrics, read by the reference Prometheus parser (the Python
/// `prometheus_client`): from `stratactl metrics` (io.strata.Admin.Metrics) and from the
/// textfile written for node_exporter.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct MetricsTests {
    /// One parsed sample.
    struct Sample: Decodable {
        var family: String
        var type: String
        /// The family's `# HELP` text (empty without one).
        var help: String?
        var name: String
        var labels: [String: String]
        var value: Double
    }

    static let parser = Paths.packageRoot.appendingPathComponent("Tests/EndToEndTests/python/prometheus_samples.py").path

    static var parserAvailable: Bool {
        (try? runCommand("/bin/sh", ["-c", "cd / && python3 -c 'import prometheus_client'"]))?.status == 0
    }

    /// The samples of a Prometheus text file, parsed by `prometheus_client`.
    static func samples(of file: String) async throws -> [Sample] {
        let result = try await runCommandOffThread("/usr/bin/env", ["python3", parser, file])
        try #require(result.status == 0, "prometheus_client refused it: \(result.output)")
        return try JSONDecoder().decode([Sample].self, from: Data(result.output.utf8))
    }

    static func value(_ samples: [Sample], _ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    @Test func requestsAreCountedInStratactlMetricsAndTheTextfile() async throws {
        guard Self.parserAvailable else {
            print("SKIPPED requestsAreCountedInStratactlMetricsAndTheTextfile: python3 with prometheus_client is not available (pip install prometheus_client)")
            return
        }
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        let textfile = sandbox.path("metrics/stratad.prom")
        try FileManager.default.createDirectory(atPath: sandbox.path("metrics"), withIntermediateDirectories: true)
        try sandbox.writeConfig(metrics: "metrics:\n  textfile: \(textfile)\n  interval: 1s")
        let daemon = try DaemonProcess(config: sandbox.configPath)
        try await waitForSocket(sandbox.dataSocket)

        // Five counts, two calls on a store that does not exist, one insert.
        try await VarlinkClient.withConnection(to: sandbox.dataSocket) { data in
            for _ in 0..<5 {
                _ = try await data.call(StrataStore.Count.self, .init(store: "aircraft", entity: "Aircraft"))
            }
            for _ in 0..<2 {
                await #expect(throws: VarlinkError.self) { try await data.call(StrataStore.Count.self, .init(store: "nope", entity: "Aircraft")) }
            }
            _ = try await data.call(StrataStore.Insert.self, .init(store: "aircraft", entity: "Aircraft", values: ["tailNumber": "F-METR"]))
            // Methods no interface has: counted under one label, not under the names clients made up.
            for method in ["io.strata.Store.Nope", "com.example.Made.Up1", "com.example.Made.Up2"] {
                await #expect(throws: VarlinkError.self) { try await data.call(method, [:]) }
            }
        }

        // io.strata.Admin.Metrics through stratactl.
        let result = try await runCommandOffThread(Paths.stratactl, ["metrics", "--socket", sandbox.adminSocket])
        #expect(result.status == 0, "\(result.output)")
        let printed = sandbox.path("printed.prom")
        try result.output.write(toFile: printed, atomically: true, encoding: .utf8)
        let samples = try await Self.samples(of: printed)
        #expect(Self.value(samples, "strata_requests_total", ["method": "io.strata.Store.Count", "outcome": "ok"]) == 5, "\(result.output)")
        #expect(Self.value(samples, "strata_requests_total", ["method": "io.strata.Store.Count", "outcome": "io.strata.Store.NoSuchStore"]) == 2)
        #expect(Self.value(samples, "strata_requests_total", ["method": "io.strata.Store.Insert", "outcome": "ok"]) == 1)
        #expect(Self.value(samples, "strata_request_duration_seconds_count", ["method": "io.strata.Store.Count"]) == 7)
        #expect(Self.value(samples, "strata_requests_total", ["method": "unknown", "outcome": "org.varlink.service.MethodNotFound"]) == 1)
        #expect(Self.value(samples, "strata_requests_total", ["method": "unknown", "outcome": "org.varlink.service.InterfaceNotFound"]) == 2)
        #expect(!result.output.contains("Made.Up"), "no series per made-up method")
        #expect(Self.value(samples, "strata_store_requests_total", ["store": "aircraft"]) == 6)
        #expect(Self.value(samples, "strata_store_ready", ["store": "aircraft"]) == 1)
        #expect(Self.value(samples, "strata_store_pending_tasks", ["store": "aircraft"]) == 0)
        #expect((Self.value(samples, "strata_varlink_connections", ["socket": "admin"]) ?? 0) >= 1)
        #expect(samples.contains { $0.family == "strata_request_duration_seconds" && $0.type == "histogram" })
        #expect(samples.contains { $0.family == "strata_scheduler_pause_latency_seconds" && $0.type == "histogram" })
        #expect(samples.contains { $0.family == "strata_requests" && $0.type == "counter" })
        // Every family says what it is (# HELP) and its kind (# TYPE), as the parser reads them.
        let undescribed = Set(samples.filter { ($0.help ?? "").isEmpty || $0.type == "unknown" }.map(\.family))
        #expect(undescribed.isEmpty, "families without # HELP or # TYPE: \(undescribed.sorted())\n\(result.output)")
        #expect(samples.first { $0.family == "strata_request_duration_seconds" }?.help == DescribedMetricsFactory.help["strata_request_duration_seconds"])

        // The textfile, rewritten every second: it catches up with the calls.
        let deadline = ContinuousClock.now + .seconds(20)
        var written: [Sample] = []
        while ContinuousClock.now < deadline {
            if FileManager.default.fileExists(atPath: textfile) {
                written = try await Self.samples(of: textfile)
                if Self.value(written, "strata_requests_total", ["method": "io.strata.Admin.Metrics", "outcome": "ok"]) == 1 { break }
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(Self.value(written, "strata_requests_total", ["method": "io.strata.Store.Count", "outcome": "ok"]) == 5, "\(daemon.log)")
        #expect(Self.value(written, "strata_requests_total", ["method": "io.strata.Admin.Metrics", "outcome": "ok"]) == 1)
        #expect(Self.value(written, "strata_store_requests_total", ["store": "aircraft"]) == 6)
        // Written aside and renamed: no temporary file is left next to it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.path("metrics")) == ["stratad.prom"])
        await daemon.stop()
    }

    @Test func aTextfileThatCannotBeWrittenIsLoggedAndTheDaemonServes() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig(metrics: "metrics:\n  textfile: \(sandbox.path("missing-directory/stratad.prom"))\n  interval: 1s")
        let daemon = try DaemonProcess(config: sandbox.configPath)
        try await waitForSocket(sandbox.adminSocket)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, !daemon.log.contains("cannot write the metrics textfile") {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(daemon.log.contains("cannot write the metrics textfile"), "\(daemon.log)")
        #expect(daemon.log.contains("missing-directory/.stratad.prom.tmp: No such file or directory"), "\(daemon.log)")
        let status = try await VarlinkClient.withConnection(to: sandbox.adminSocket) { try await $0.call(StrataAdmin.Status.self) }
        #expect(status.status == "1 store ready")
        await daemon.stop()
    }
}
