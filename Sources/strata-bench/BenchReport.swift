import Foundation

/// One measured figure of a scenario: Strata's value, raw GRDB's value, and their ratio.
struct BenchFigure {
    /// The key in JSON (`insert` gives `insert_ratio`, `insert_strata`, `insert_raw`).
    var key: String
    /// What is measured, for people.
    var label: String
    /// The unit of ``strata`` and ``raw`` (`s`, `µs`, `rows/s`).
    var unit: String
    var strata: Double
    var raw: Double
    /// Whether a larger value is better (throughput): the ratio is then raw / strata, so that a
    /// ratio above 1 always means Strata is slower.
    var higherIsBetter = false

    /// Strata's cost relative to raw GRDB: above 1 means slower.
    var ratio: Double {
        let (a, b) = higherIsBetter ? (raw, strata) : (strata, raw)
        return b == 0 ? .nan : a / b
    }
}

/// The result of one scenario: its parameters, its figures and notes, printed as a text table or
/// as one JSON object.
struct BenchReport {
    var scenario: String
    /// Parameters, in print order (rows, batch size, …).
    var parameters: [(String, Any)] = []
    var figures: [BenchFigure] = []
    /// Free-form lines printed after the figures.
    var notes: [String] = []
    /// Targets: figure key → the highest acceptable ratio.
    var targets: [String: Double] = [:]
    /// The text table's column names of the two sides (JSON keys stay `_strata`/`_raw`).
    var columnNames = (strata: "strata", raw: "raw GRDB")

    init(scenario: String) { self.scenario = scenario }

    mutating func add(_ figure: BenchFigure) { figures.append(figure) }

    // MARK: - Output

    var text: String {
        var lines = ["strata-bench \(scenario)"]
        lines.append(parameters.map { "\($0.0)=\($0.1)" }.joined(separator: " "))
        lines.append("machine: \(MachineDescription.current.summary)")
        lines.append("")
        let header = ["figure", columnNames.strata, columnNames.raw, "ratio", "target"]
        var rows: [[String]] = []
        for f in figures {
            let target = targets[f.key].map { f.ratio <= $0 ? "≤\(Self.format($0))x ok" : "≤\(Self.format($0))x MISSED" } ?? ""
            rows.append([f.label, "\(Self.format(f.strata)) \(f.unit)", "\(Self.format(f.raw)) \(f.unit)", Self.format(f.ratio) + "x", target])
        }
        var widths = header.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        for row in [header] + rows {
            let cells = row.enumerated().map { i, cell in
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                return i == 0 || i == row.count - 1 ? cell + pad : pad + cell
            }
            lines.append(cells.joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
        if !notes.isEmpty {
            lines.append("")
            lines += notes
        }
        return lines.joined(separator: "\n")
    }

    /// One JSON object: `scenario`, the parameters, `machine`, and for each figure
    /// `<key>_strata`, `<key>_raw`, `<key>_ratio`, `<key>_unit`.
    var json: String {
        var object: [String: Any] = ["scenario": scenario, "machine": MachineDescription.current.jsonObject]
        for (name, value) in parameters { object[name] = value }
        for f in figures {
            object["\(f.key)_strata"] = Self.rounded(f.strata)
            object["\(f.key)_raw"] = Self.rounded(f.raw)
            object["\(f.key)_ratio"] = Self.rounded(f.ratio)
            object["\(f.key)_unit"] = f.unit
        }
        if !notes.isEmpty { object["notes"] = notes }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "n/a" }
        if value >= 1000 { return String(format: "%.0f", value) }
        if value >= 100 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    private static func rounded(_ value: Double) -> Any {
        guard value.isFinite else { return NSNull() }
        return (value * 10000).rounded() / 10000
    }
}

/// The machine a benchmark ran on, for the report.
struct MachineDescription {
    var cpu: String
    var cores: Int
    var memoryGiB: Double
    var os: String

    static let current: MachineDescription = {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }.map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
        let release = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        let os = release.split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { String($0.dropFirst("PRETTY_NAME=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } ?? "Linux"
        return MachineDescription(cpu: model, cores: ProcessInfo.processInfo.activeProcessorCount,
                                  memoryGiB: Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824, os: os)
    }()

    var summary: String { "\(cpu), \(cores) cores, \(String(format: "%.0f", memoryGiB)) GiB, \(os)" }
    var jsonObject: [String: Any] { ["cpu": cpu, "cores": cores, "memory_gib": (memoryGiB * 10).rounded() / 10, "os": os] }
}
