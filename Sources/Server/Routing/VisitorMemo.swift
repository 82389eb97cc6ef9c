import AASA
import HTTP1
import Links

/// The visitor classes of the User-Agents one event loop read last. A client sends the same User-Agent
/// on every request of a connection, and a campaign's clicks come from a few browser builds: comparing
/// the bytes with a remembered User-Agent (about 150 instructions for a desktop Chrome's 111 bytes) is
/// cheaper than reading them for signatures again (about 1,200). A class is a pure function of the
/// bytes, so a remembered one is always the class `Visitor.classify` gives. Direct-mapped and bounded:
/// `slotCount` entries of at most `longestRemembered` bytes each; a longer User-Agent is classified every
/// time. Used by one loop only, so it takes no lock.
final class VisitorMemo {
    static let slotCount = 16
    static let longestRemembered = 512

    private struct Entry {
        let userAgent: [UInt8]
        let visitor: Visitor
    }

    private var slots = [Entry?](repeating: nil, count: slotCount)
    private(set) var hits = 0

    /// `hash`: the User-Agent's ``FieldValueHash`` as the request parser gave it (computed here without).
    func classify(_ userAgent: UnsafeBufferPointer<UInt8>, hash parsedHash: UInt64? = nil) -> Visitor {
        guard userAgent.count <= Self.longestRemembered else { return Visitor.classify(userAgent) }
        let hash = parsedHash ?? FieldValueHash.of(UnsafeRawBufferPointer(userAgent))
        let index = Int(truncatingIfNeeded: (hash ^ hash >> 33) & UInt64(Self.slotCount - 1))
        if let entry = slots[index], ByteComparison.equal(entry.userAgent, userAgent) {
            hits += 1
            return entry.visitor
        }
        let visitor = Visitor.classify(userAgent)
        slots[index] = Entry(userAgent: Array(userAgent), visitor: visitor)
        return visitor
    }
}
