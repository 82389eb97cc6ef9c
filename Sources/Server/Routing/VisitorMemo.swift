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

    /// The remembered User-Agents' bytes, `longestRemembered` a slot, in one allocation: compared in place,
    /// a hit copies and retains nothing (an entry holding an array retained and released it, two atomic
    /// operations a link request).
    private let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: slotCount * longestRemembered, alignment: 8)
    /// Each slot's User-Agent length; -1 while the slot is empty.
    private let lengths = UnsafeMutableBufferPointer<Int>.allocate(capacity: slotCount)
    private let visitors = UnsafeMutableBufferPointer<Visitor>.allocate(capacity: slotCount)
    private(set) var hits = 0

    init() {
        lengths.initialize(repeating: -1)
        visitors.initialize(repeating: .desktop)
    }

    deinit {
        bytes.deallocate()
        lengths.deallocate()
        _ = visitors.deinitialize()
        visitors.deallocate()
    }

    /// `hash`: the User-Agent's ``FieldValueHash`` as the request parser gave it (computed here without).
    func classify(_ userAgent: UnsafeBufferPointer<UInt8>, hash parsedHash: UInt64? = nil) -> Visitor {
        guard userAgent.count <= Self.longestRemembered else { return Visitor.classify(userAgent) }
        let hash = parsedHash ?? FieldValueHash.of(UnsafeRawBufferPointer(userAgent))
        let index = Int(truncatingIfNeeded: (hash ^ hash >> 33) & UInt64(Self.slotCount - 1))
        let slot = UnsafeMutableRawBufferPointer(rebasing: bytes[index * Self.longestRemembered..<(index + 1) * Self.longestRemembered])
        if lengths[index] == userAgent.count,
            ByteComparison.equal(UnsafeRawBufferPointer(rebasing: slot[0..<userAgent.count]), UnsafeRawBufferPointer(userAgent))
        {
            hits += 1
            return visitors[index]
        }
        let visitor = Visitor.classify(userAgent)
        UnsafeMutableRawBufferPointer(rebasing: slot[0..<userAgent.count]).copyMemory(from: UnsafeRawBufferPointer(userAgent))
        lengths[index] = userAgent.count
        visitors[index] = visitor
        return visitor
    }
}
