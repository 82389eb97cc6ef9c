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
    /// The last match, remembered or not (a Host over the length kept is not), held until the next lookup:
    /// in place for the document paths, and boxed for the link path once it asks (below).
    private var lastMatch: HostMatch?
    private var found: Found?
    private(set) var hits = 0

    /// A match in an object of its own: read through an unretained reference, the link path's use of it
    /// costs no reference-count change, where copying the match out retained and released its two names
    /// (four atomic operations a request, around calls that kept the optimizer from removing them).
    final class Found {
        let match: HostMatch
        init(_ match: HostMatch) { self.match = match }
    }

    deinit { remembered.deallocate() }

    /// `snapshot.hosts.match(hostHeader: header)`, from memory when the last Host was these bytes. Inlined
    /// into the router: called, the memo was retained and released around the call.
    @inline(__always)
    func match(_ header: UnsafeBufferPointer<UInt8>, in snapshot: Snapshot) -> HostMatch? {
        if isRemembered(header, in: snapshot) { return lastMatch }
        return matchAndRemember(header, in: snapshot)
    }

    /// The match, unretained: valid until the next lookup of this memo.
    @inline(__always)
    func found(_ header: UnsafeBufferPointer<UInt8>, in snapshot: Snapshot) -> Unmanaged<Found>? {
        if !isRemembered(header, in: snapshot) { _ = matchAndRemember(header, in: snapshot) }
        if let found { return Unmanaged.passUnretained(found) }
        // Boxed on the first link request after a new match only: the document paths never pay for it.
        guard let lastMatch else { return nil }
        let box = Found(lastMatch)
        found = box
        return Unmanaged.passUnretained(box)
    }

    @inline(__always)
    private func isRemembered(_ header: UnsafeBufferPointer<UInt8>, in snapshot: Snapshot) -> Bool {
        guard header.count == rememberedCount, generation == snapshot.generation,
            ByteComparison.equal(UnsafeRawBufferPointer(rebasing: remembered[0..<rememberedCount]), UnsafeRawBufferPointer(header))
        else { return false }
        hits += 1
        return true
    }

    private func matchAndRemember(_ header: UnsafeBufferPointer<UInt8>, in snapshot: Snapshot) -> HostMatch? {
        let match = snapshot.hosts.match(hostHeader: header)
        lastMatch = match
        found = nil
        if header.count <= Self.longestRemembered {
            UnsafeMutableRawBufferPointer(rebasing: remembered[0..<header.count]).copyMemory(from: UnsafeRawBufferPointer(header))
            rememberedCount = header.count
            generation = snapshot.generation
        } else {
            rememberedCount = -1
        }
        return match
    }
}
