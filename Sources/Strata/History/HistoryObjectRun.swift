import Foundation

/// A run of like object changes stored as one `_strata_object_changes` record.
///
/// A save that inserts, updates or deletes many objects of one entity in the same way (same
/// kind, same changed properties, no tombstone values) would otherwise write one history row
/// per object: as many row writes again as the save's own. Consecutive like changes are kept
/// as one record instead: `object` holds the first object's primary key and `more_objects` the
/// others, packed as zigzag LEB128 deltas from the previous key (a run of consecutive keys, the
/// usual case for inserts, costs one byte per object). Readers expand a record back into its
/// changes in order, so nothing of this shows through the API.
///
/// Records written before runs existed have `more_objects` NULL and read as one change.
struct HistoryObjectRun {
    /// Objects per record at most: a record stays a few KiB, and a purge batch of records
    /// stays bounded.
    static let maxObjects = 1_024

    var entity: String
    var kind: HistoryChange.Kind
    var properties: [String]
    var tombstone: [String: Value]
    /// The index of the run's first change in its save: the record's `seq`.
    var seq: Int
    var primaryKeys: [Int64]

    /// Consecutive like changes folded into runs (a change with tombstone values is a run of
    /// its own).
    static func runs(of changes: [PendingHistoryChange]) -> [HistoryObjectRun] {
        var runs: [HistoryObjectRun] = []
        for (seq, change) in changes.enumerated() {
            if !runs.isEmpty, runs[runs.count - 1].takes(change) {
                runs[runs.count - 1].primaryKeys.append(change.primaryKey)
            } else {
                runs.append(HistoryObjectRun(entity: change.entity, kind: change.kind, properties: change.properties,
                                             tombstone: change.tombstone, seq: seq, primaryKeys: [change.primaryKey]))
            }
        }
        return runs
    }

    /// Whether `change` continues this run: alike, no tombstone on either, room left.
    private func takes(_ change: PendingHistoryChange) -> Bool {
        change.tombstone.isEmpty && tombstone.isEmpty && primaryKeys.count < Self.maxObjects && kind == change.kind
            && entity == change.entity && properties == change.properties
    }

    // MARK: - Packing

    /// The keys after the first, as zigzag LEB128 deltas (nil for a run of one).
    static func pack(_ keys: [Int64]) -> Data? {
        guard keys.count > 1 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(keys.count - 1)
        var previous = keys[0]
        for key in keys.dropFirst() {
            let delta = key &- previous
            previous = key
            var zigzag = UInt64(bitPattern: (delta << 1) ^ (delta >> 63))
            repeat {
                let low = UInt8(zigzag & 0x7F)
                zigzag >>= 7
                bytes.append(zigzag == 0 ? low : low | 0x80)
            } while zigzag != 0
        }
        return Data(bytes)
    }

    /// The record's keys: `first`, then those packed in `more` (which ``pack(_:)`` wrote).
    /// Malformed bytes end the list where they start (a damaged record loses its tail, never
    /// reads past its bytes).
    static func unpack(first: Int64, more: Data?) -> [Int64] {
        guard let more, !more.isEmpty else { return [first] }
        var keys = [first]
        keys.reserveCapacity(more.count + 1)
        var previous = first
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for byte in more {
            guard shift < 64 else { break }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 != 0 {
                shift += 7
                continue
            }
            let delta = Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
            previous = previous &+ delta
            keys.append(previous)
            value = 0
            shift = 0
        }
        return keys
    }
}
