import Foundation
import Strata
import StrataVarlink
import Synchronization
import Testing
@testable import StrataDaemon

/// The order an observer's connection sees when the feed writes to it directly and, while the
/// connection does not take writes (a client reading slowly), the observer's task sends what
/// was queued: every transaction once, in token order, across every switch between the two.
/// (`wire` stands for the connection: the direct writer appends to it unless `blocked`.)
@Suite struct ObserverInboxTests {
    final class Wire: Sendable {
        let state = Mutex((tokens: [Int64](), blocked: false))
        var tokens: [Int64] { state.withLock { $0.tokens } }
        func block(_ blocked: Bool) { state.withLock { $0.blocked = blocked } }
        /// The direct writer: the tokens are the messages' text.
        func write(_ joined: Data) -> Bool {
            state.withLock { state in
                guard !state.blocked else { return false }
                state.tokens += Self.tokens(in: joined)
                return true
            }
        }
        /// The observer's task sending what it took.
        func send(_ items: [ObservedTransaction]) { state.withLock { $0.tokens += items.map(\.token) } }
        static func tokens(in joined: Data) -> [Int64] {
            joined.split(separator: 0).map { Int64(String(decoding: $0, as: UTF8.self))! }
        }
    }

    static func item(_ token: Int64) -> ObservedTransaction {
        ObservedTransaction(transaction: HistoryTransaction(token: token, date: Date(), kind: .objects, user: nil, author: nil, changes: []),
                            message: Data("\(token)".utf8))
    }

    static func offer(_ tokens: ClosedRange<Int64>, to inbox: ObserverInbox) -> Bool {
        let items = tokens.map(item)
        return inbox.offer(items, joined: VarlinkReply.joined(items.map(\.message)))
    }

    @Test func directAndQueuedWritesKeepTheOrder() {
        let wire = Wire()
        let inbox = ObserverInbox(limit: 100) { _ in Issue.record("no overflow expected") }
        inbox.writeDirectly(with: wire.write)

        #expect(Self.offer(1...2, to: inbox))
        #expect(wire.tokens == [1, 2] && inbox.delivered == 2, "written directly")
        #expect(inbox.take().items.isEmpty, "nothing queued")
        inbox.sent()

        wire.block(true)
        #expect(Self.offer(3...3, to: inbox))
        wire.block(false)
        // Older transactions wait in the queue: the next ones queue behind them.
        #expect(Self.offer(4...4, to: inbox))
        #expect(wire.tokens == [1, 2])
        let first = inbox.take().items
        #expect(first.map(\.token) == [3, 4])
        // While the task sends what it took, the feed still queues.
        #expect(Self.offer(5...6, to: inbox))
        wire.send(first)
        inbox.sent()
        #expect(wire.tokens == [1, 2, 3, 4])
        let second = inbox.take().items
        #expect(second.map(\.token) == [5, 6])
        wire.send(second)
        inbox.sent()
        // Caught up again: direct.
        #expect(Self.offer(7...7, to: inbox))
        #expect(wire.tokens == Array(1...7))
        #expect(inbox.delivered == 7)
        #expect(inbox.progress.writes == 2, "two direct writes counted as taken by the client")
    }

    @Test func aBlockedConnectionStillOverflowsAtTheLimit() {
        let wire = Wire()
        let overflowed = Mutex(0)
        let inbox = ObserverInbox(limit: 3) { _ in overflowed.withLock { $0 += 1 } }
        inbox.writeDirectly(with: wire.write)
        wire.block(true)
        #expect(Self.offer(1...2, to: inbox))
        #expect(Self.offer(3...3, to: inbox))
        #expect(!Self.offer(4...4, to: inbox), "past the limit the inbox ends")
        #expect(overflowed.withLock { $0 } == 1)
        #expect(inbox.overflowed)
        #expect(wire.tokens.isEmpty)
        wire.block(false)
        #expect(!Self.offer(5...5, to: inbox), "an ended inbox takes nothing, not even directly")
        #expect(wire.tokens.isEmpty)
    }
}
