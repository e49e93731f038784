/// The slots of an object changed since its last save: one bit per slot below 64 (most
/// entities have fewer, and an update then allocates nothing to note its change), a set for
/// the others. Iterates in ascending slot order.
struct ChangedSlots: Equatable, Sequence {
    private var low: UInt64 = 0
    private var high: Set<Int> = []

    var isEmpty: Bool { low == 0 && high.isEmpty }
    var count: Int { low.nonzeroBitCount + high.count }

    func contains(_ slot: Int) -> Bool {
        slot < 64 ? low & (1 << UInt64(slot)) != 0 : high.contains(slot)
    }

    mutating func insert(_ slot: Int) {
        if slot < 64 { low |= 1 << UInt64(slot) } else { high.insert(slot) }
    }

    mutating func removeAll() {
        low = 0
        if !high.isEmpty { high.removeAll() }
    }

    /// The slots, ascending.
    func sorted() -> [Int] {
        var slots: [Int] = []
        slots.reserveCapacity(count)
        var bits = low
        while bits != 0 {
            slots.append(bits.trailingZeroBitCount)
            bits &= bits - 1
        }
        return high.isEmpty ? slots : slots + high.sorted()
    }

    func makeIterator() -> IndexingIterator<[Int]> { sorted().makeIterator() }
}
