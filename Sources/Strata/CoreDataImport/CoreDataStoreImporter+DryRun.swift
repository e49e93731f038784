import Foundation

extension CoreDataStoreImporter {
    /// What ``importStore(at:to:progress:)`` would do, without creating `destination`: the
    /// import and the migration run on a scratch store in a private temporary directory
    /// (mode 0700), which is removed afterwards, so the report's counts — objects, links,
    /// and what each hop discards (``StagedMigrationReport/Hop/discarded``) — are exact.
    /// `destination` is only named in the report. Errors are those of the import.
    public func dryRun(at source: URL, destination: URL,
                       progress: ((CoreDataImportProgress) -> Void)? = nil) throws(CoreDataImportError) -> CoreDataImportReport {
        let scratch = FileManager.default.temporaryDirectory.appending(path: "strata-coredata-dry-run-\(UUID().uuidString.prefix(8))")
        do {
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw CoreDataImportError(.io, "cannot create a scratch directory for the dry run at \(scratch.path): \(error)")
        }
        defer { try? FileManager.default.removeItem(at: scratch) }
        var report = try importStore(at: source, to: scratch.appending(path: destination.lastPathComponent), progress: progress)
        report.destination = destination
        return report
    }
}
