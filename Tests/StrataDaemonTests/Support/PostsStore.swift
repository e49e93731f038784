import Foundation
import Strata
import Testing

extension DaemonSandbox {
    /// A *Post 3* store of 2,400 posts (about 2.4 MB: each `hexColor` carries ~1 KB) at
    /// `storePath`, and the sandbox's configuration hosting it as `posts` at *Post 4* without a
    /// backup: a rewrite that copies every row, then the drop of the old rows and the vacuum.
    func hostPosts(at storePath: String) async throws {
        let models = Paths.packageRoot.appendingPathComponent("config/models/Post")
        let post3 = try #require(try ModelDirectory(url: models).version(named: "Post 3"))
        try await offThread {
            let store = try PersistentStore.open(at: URL(fileURLWithPath: storePath), model: post3)
            let context = ObjectContext(store: store)
            let filler = String(repeating: "0123456789abcdef", count: 60)
            for index in 0..<2400 {
                _ = try context.insert("Post", values: ["postID": UUID(), "hexColor": "\(index)-\(filler)"])
            }
            try context.save()
            try store.close()
        }
        try writeConfig(stores: [], extraStores: """
              - name: posts
                path: \(storePath)
                model: \(models.path)
                backup: false

            """)
    }
}
