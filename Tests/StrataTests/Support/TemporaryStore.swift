import Foundation
import GRDB
@testable import Strata

/// A directory under the system temp dir, removed when the value is deinitialised.
final class TemporaryDirectory: @unchecked Sendable {
    let url: URL

    init(_ label: String = "strata") {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A file path inside the directory (not created).
    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Opens stores under a temporary directory for one test.
struct TemporaryStore {
    let directory = TemporaryDirectory("store")
    var url: URL { directory.file("test.sqlite") }

    func open(_ model: ObjectModel, options: StoreOptions = StoreOptions()) throws -> PersistentStore {
        try PersistentStore.open(at: url, model: model, options: options)
    }

    /// A plain GRDB queue on the store file, for checking rows behind the library's back.
    func rawQueue() throws -> DatabaseQueue { try DatabaseQueue(path: url.path) }
}

extension DatabaseQueue {
    /// `SELECT` of one column as strings, in order.
    func strings(_ sql: String, _ arguments: StatementArguments = []) throws -> [String?] {
        try read { db in try String?.fetchAll(db, sql: sql, arguments: arguments) }
    }
}
