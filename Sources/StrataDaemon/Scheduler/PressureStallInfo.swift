import Foundation

/// The kernel's pressure stall information for one resource (`/proc/pressure/io`, a cgroup's
/// `io.pressure`):
///
/// ```
/// some avg10=31.20 avg60=12.05 avg300=3.10 total=716473259
/// full avg10=0.00 avg60=0.00 avg300=0.00 total=0
/// ```
///
/// `some` is the share of time in which at least one task stalled on the resource.
public struct PressureStallInfo: Sendable, Hashable {
    /// `some avg10` of the pressure file, percent.
    public var someAvg10: Double
    /// `some avg60` of the pressure file, percent.
    public var someAvg60: Double
    /// `full avg10` of the pressure file, percent.
    public var fullAvg10: Double?

    /// Parses the text of a pressure file; nil when there is no `some` line.
    public init?(parsing text: String) {
        var some: [String: Double]?
        var full: [String: Double]?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let kind = fields.first else { continue }
            var values: [String: Double] = [:]
            for field in fields.dropFirst() {
                let pair = field.split(separator: "=", maxSplits: 1)
                if pair.count == 2, let value = Double(pair[1]) { values[String(pair[0])] = value }
            }
            if kind == "some" { some = values } else if kind == "full" { full = values }
        }
        guard let some, let avg10 = some["avg10"] else { return nil }
        someAvg10 = avg10
        someAvg60 = some["avg60"] ?? avg10
        fullAvg10 = full?["avg10"]
    }

    /// Reads and parses a pressure file; nil when it is missing or unreadable.
    public static func read(_ path: String) -> PressureStallInfo? {
        guard let text = readSmallFile(path) else { return nil }
        return PressureStallInfo(parsing: text)
    }
}

/// Reads a small file (a /proc or /sys file, whose size reads as 0) with plain POSIX calls:
/// the scheduler reads a few of them every few tens of milliseconds while work runs.
func readSmallFile(_ path: String, limit: Int = 64 * 1024) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while bytes.count < limit {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            return nil
        }
        if n == 0 { break }
        bytes.append(contentsOf: buffer[0..<n])
    }
    return String(decoding: bytes, as: UTF8.self)
}
