import Foundation
import Strata
import StrataVarlink

/// The change history of one hosted store, read once per commit and handed to every
/// `Observe` call of that store (docs/History.md, "Observers").
///
/// While at least one observer is subscribed, the feed follows the store's commits: each
/// wake-up reads the new transactions once (pages of ``pageSize``, on the store's executor, not
/// counted as client load), encodes each once as an `Observe` reply, and offers the lot to
/// every ``ObserverInbox``. An observer's cost per commit is then a copy of bytes into its
/// socket, not a query: 100 observers cost one read per commit, as one does. An unfiltered
/// observer that keeps up is written to by the feed itself, without waking its task. An inbox
/// that holds more than its limit is dropped and marked overflowed; the others never wait for it.
actor ObserverFeed {
    /// Transactions read per page while catching up with the commits.
    static let pageSize = 1_000

    /// The last token read and handed out.
    private var position: Int64 = 0
    private var inboxes: [ObjectIdentifier: ObserverInbox] = [:]
    /// Following the commits, while there are observers.
    private var following = false

    /// Subscribes `inbox` and returns the token from which it will be handed every
    /// transaction (those after it); what committed before is for the observer to read itself.
    ///
    /// - Throws: `HostingError` (the store is not open), `HistoryError` (its history cannot be read).
    func subscribe(_ inbox: ObserverInbox, on hosted: HostedStore) async throws -> Int64 {
        if !following {
            guard let store = hosted.store else { throw HostingError.unavailable(store: hosted.name, reason: "not open") }
            // Subscribed to the commits before the latest token is read, so none falls between.
            let commits = store.historyCommits()
            let latest = try await hosted.performUpkeep { try $0.latestHistoryToken() }
            if !following {   // another subscriber may have started it meanwhile
                following = true
                position = latest
                Task { await self.follow(commits, hosted: hosted) }
            }
        }
        inboxes[ObjectIdentifier(inbox)] = inbox
        return position
    }

    /// Observers subscribed now.
    var count: Int { inboxes.count }

    /// Reads and hands out what commits, until no observer is left or the store closes.
    private func follow(_ commits: AsyncStream<Int64>, hosted: HostedStore) async {
        var wakeups = commits.makeAsyncIterator()
        while true {
            inboxes = inboxes.filter { $0.value.isOpen }
            if inboxes.isEmpty {
                following = false
                return
            }
            do {
                try await catchUp(hosted)
            } catch {
                // The next subscriber starts again from the store's latest token.
                for inbox in inboxes.values { inbox.end(.failed(error)) }
                inboxes = [:]
                following = false
                return
            }
            guard await wakeups.next() != nil else {
                for inbox in inboxes.values { inbox.end(.closed) }
                inboxes = [:]
                following = false
                return
            }
        }
    }

    private func catchUp(_ hosted: HostedStore) async throws {
        while true {
            let from = position
            let page = try await hosted.performUpkeep { try $0.history(since: from, limit: Self.pageSize) }
            let items = try page.transactions.map { transaction in
                ObservedTransaction(transaction: transaction, message: try StoreInterface.observeMessage(transaction))
            }
            if !items.isEmpty {
                // The bytes every unfiltered, caught-up observer's connection gets: joined once.
                let joined = VarlinkReply.joined(items.lazy.map(\.message))
                for (id, inbox) in inboxes where !inbox.offer(items, joined: joined) { inboxes[id] = nil }
            }
            position = max(position, page.next)
            if page.transactions.count < Self.pageSize { return }
        }
    }
}
