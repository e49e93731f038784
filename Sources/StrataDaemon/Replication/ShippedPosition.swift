import Foundation

/// Where a store's replica stands: the header of the newest LTX file in its level 0, or why
/// it cannot be read.
public struct ShippedPosition: Sendable {
    /// The newest LTX file's header (nil with a problem).
    var header: LTXHeader?
    /// Why the position could not be read.
    public var problem: String?

    /// The most LTX files of one level looked at (a replica that keeps more is compacted
    /// wrong; its position is reported unreadable rather than listed for seconds).
    static let maxLevelFiles = 200_000

    /// Reads the position of the replica under `positionDirectory`.
    public static func read(positionDirectory: String) -> ShippedPosition {
        let level = positionDirectory + "/ltx/0"
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: level)
        } catch {
            let reason = FileManager.default.fileExists(atPath: positionDirectory)
                ? "cannot list \(level): \((error as NSError).localizedDescription)"
                : "no replica at \(positionDirectory) yet: is `litestream replicate` running for this store (strata-litestream.service)?"
            return ShippedPosition(header: nil, problem: reason)
        }
        guard names.count <= maxLevelFiles else {
            return ShippedPosition(header: nil, problem: "\(level) holds \(names.count) files (more than \(maxLevelFiles)); check Litestream's compaction and retention")
        }
        let newest = names.compactMap { name -> (UInt64, String)? in
            guard name.hasSuffix(".ltx"), name.count == 37, let max = UInt64(name.dropFirst(17).prefix(16), radix: 16) else { return nil }
            return (max, name)
        }.max { $0.0 < $1.0 }
        guard let newest else {
            return ShippedPosition(header: nil, problem: "no LTX file in \(level) yet: is `litestream replicate` running for this store (strata-litestream.service)?")
        }
        do {
            return ShippedPosition(header: try LTXHeader.read(level + "/" + newest.1), problem: nil)
        } catch {
            return ShippedPosition(header: nil, problem: error.reason)
        }
    }
}
