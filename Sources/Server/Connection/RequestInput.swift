/// A connection's request bytes not yet consumed: the rest of the last read while it is still in the
/// loop's read buffer, or a copy of it.
///
/// Request heads are parsed and answered where they were read, and only what is left when the
/// connection next reads or waits is copied (``settle()``): copying every request into a buffer of its
/// own, allocated and freed per request so that an idle connection holds none, was about 450
/// instructions a request. The owner of the read buffer changes it only after ``settle()``.
struct RequestInput {
    /// Bytes copied out of a read buffer.
    private var owned: [UInt8] = []
    /// The unconsumed rest of the last read, where it was read. Never empty; when set, ``owned`` is.
    private var borrowed: UnsafeRawBufferPointer?

    var isEmpty: Bool { borrowed == nil && owned.isEmpty }

    var count: Int { borrowed?.count ?? owned.count }

    /// The bytes, wherever they are.
    @inline(__always)
    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let borrowed { return body(borrowed.assumingMemoryBound(to: UInt8.self)) }
        return owned.withUnsafeBufferPointer(body)
    }

    /// The bytes while they are where they were read. A caller holding the input inside a class reads
    /// this first: it copies no array (``withBytes(_:)`` on a copy retains and releases one).
    @inline(__always)
    var inPlace: UnsafeBufferPointer<UInt8>? { borrowed?.assumingMemoryBound(to: UInt8.self) }

    /// Bytes a read returned. `inPlace`: used where they are until ``settle()`` (when nothing is
    /// waiting before them); otherwise copied at once.
    mutating func receive(_ bytes: UnsafeRawBufferPointer, inPlace: Bool) {
        guard !bytes.isEmpty else { return }
        settle()
        if inPlace && owned.isEmpty {
            borrowed = bytes
        } else {
            owned.append(contentsOf: bytes)
        }
    }

    /// Copies what is still borrowed, before its read buffer changes.
    @inline(__always)
    mutating func settle() {
        guard let rest = borrowed else { return }
        borrowed = nil
        owned.append(contentsOf: rest)
    }

    /// Drops the first `length` bytes (an answered request, a PROXY header).
    mutating func consume(_ length: Int) {
        if let rest = borrowed {
            borrowed = length < rest.count ? UnsafeRawBufferPointer(rebasing: rest[length...]) : nil
        } else if length < owned.count {
            owned.removeFirst(length)
        } else {
            // An idle connection keeps no read buffer (10,000 idle connections must stay small).
            owned = []
        }
    }

    /// Drops bytes in the middle (a body judged and not kept), copying what is borrowed first.
    mutating func remove(_ range: Range<Int>) {
        settle()
        owned.removeSubrange(range)
    }

    mutating func removeAll() {
        borrowed = nil
        owned = []
    }
}
