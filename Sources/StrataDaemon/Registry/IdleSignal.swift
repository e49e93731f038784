import Synchronization

/// Wakes whoever waits for a condition that changes when work ends — a store with no call and
/// no deferred work running — without polling: the code that ends work calls ``notify()``,
/// and each waiter checks its condition again.
final class IdleSignal: Sendable {
    private struct State {
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Something that `isIdle` reads may have changed: every waiter checks again.
    func notify() {
        let waiters = state.withLock { state in
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when `isIdle` holds, `timeout` has passed, or the task is cancelled.
    func wait(timeout: Duration, until isIdle: @escaping @Sendable () -> Bool) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait(until: isIdle) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func wait(until isIdle: @escaping @Sendable () -> Bool) async {
        while !Task.isCancelled, !isIdle() {
            let id = state.withLock { state in
                defer { state.nextID += 1 }
                return state.nextID
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    // Checked again under the lock notify() takes: a change made before it is
                    // seen here, one made after it finds the waiter registered.
                    let now = state.withLock { state -> Bool in
                        if state.cancelled.remove(id) != nil || isIdle() { return true }
                        state.waiters[id] = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                    if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
                    state.cancelled.insert(id)
                    return nil
                }
                waiter?.resume()
            }
        }
    }
}
