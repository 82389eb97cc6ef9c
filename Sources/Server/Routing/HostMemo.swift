import AASA
import HTTP1

/// The Host one event loop matched last, and what it matched. A keep-alive connection sends the same Host
/// on every request: comparing the header's bytes with the remembered ones is about 30 instructions, where
/// matching them again — lower-casing them into the label's string, hashing, probing the table, comparing
/// the name found — was about 450 (`Benchmarks/request-instructions.py`). A match is a pure function of the
/// host table and the bytes, and a snapshot's generation names its table (a process numbers them one by
/// one, and a reload always makes a new one), so a match remembered under another generation is never
/// used. The memo keeps no snapshot (only its number). One loop only, so no lock.
final class HostMemo {
    /// A longer Host is matched every time: the bytes are kept in place, without an allocation a miss.
    static let longestRemembered = 64

    private let remembered = UnsafeMutableRawBufferPointer.allocate(byteCount: longestRemembered, alignment: 8)
    /// -1 while nothing is remembered.
    private var rememberedCount = -1
    private var generation = 0
    private var found: HostMatch?
    private(set) var hits = 0

    deinit { remembered.deallocate() }

    /// `snapshot.hosts.match(hostHeader: header)`, from memory when the last Host was these bytes. Inlined
    /// into the router: called, the memo was retained and released around the call.
    @inline(__always)
    func match(_ header: UnsafeBufferPointer<UInt8>, in snapshot: Snapshot) -> HostMatch? {
        if header.count == rememberedCount, generation == snapshot.generation,
            ByteComparison.equal(UnsafeRawBufferPointer(rebasing: remembered[0..<rememberedCount]), UnsafeRawBufferPointer(header))
        {
            hits += 1
            return found
        }
        return matchAndRemember(header, in: snapshot)
    }

    private func matchAndRemember(_ header: UnsafeBufferPointer<UInt8>, in snapshot: Snapshot) -> HostMatch? {
        let bytes = UnsafeRawBufferPointer(header)
        let match = snapshot.hosts.match(hostHeader: header)
        if header.count <= Self.longestRemembered {
            UnsafeMutableRawBufferPointer(rebasing: remembered[0..<header.count]).copyMemory(from: bytes)
            rememberedCount = header.count
            generation = snapshot.generation
            found = match
        }
        return match
    }
}
