/// Responses waiting to be written, by reference: the prepared bytes are not copied, only the lines
/// that change per send (`Date`, `Connection`) are held per response. Pipelined answers queue in order.
public struct OutputQueue: Sendable {
    public struct Entry: Sendable {
        let response: PreparedResponse
        /// `Date: …` and the `Connection` line of this send.
        let perSend: [UInt8]
        let includeBody: Bool

        var byteCount: Int { response.byteCount(perSendLines: perSend.count, includeBody: includeBody) }
    }

    @usableFromInline var entries: [Entry] = []
    /// Bytes of the first entry already written.
    private var sentOfFirst = 0
    /// Bytes queued and not yet written.
    public private(set) var byteCount = 0

    public init() {}

    /// Asked several times a request by the connection's state machine, in another module: inlined there.
    @inlinable public var isEmpty: Bool { entries.isEmpty }

    /// Queues a response; returns its size on the wire.
    @discardableResult
    public mutating func append(_ response: PreparedResponse, dateLine: [UInt8], connection: ConnectionDirective, includeBody: Bool) -> Int
    {
        let perSend = connection == .none ? dateLine : dateLine + connection.line
        let entry = Entry(response: response, perSend: perSend, includeBody: includeBody)
        entries.append(entry)
        let count = entry.byteCount
        byteCount += count
        return count
    }

    /// `count` bytes were written.
    public mutating func consume(_ count: Int) {
        var remaining = count
        byteCount -= count
        while remaining > 0, let first = entries.first {
            let left = first.byteCount - sentOfFirst
            if remaining < left {
                sentOfFirst += remaining
                return
            }
            remaining -= left
            entries.removeFirst()
            sentOfFirst = 0
        }
        if entries.isEmpty && entries.capacity > 16 { entries = [] }
    }

    /// Calls `body` with the unwritten bytes in order, piece by piece, until it returns false. A piece
    /// marked stable points into a prepared response, which the queue keeps alive until it is written:
    /// the pointer may be kept (for `writev`) while the queue is not changed. Other pieces (the per-send
    /// lines) must be copied before `body` returns.
    public func forEachPiece(_ body: (UnsafeRawBufferPointer, _ stable: Bool) -> Bool) {
        var skip = sentOfFirst
        for entry in entries {
            // Status line, per-send lines, the other fields, the body: skip what was already written.
            if !piece(entry.response.statusLine, stable: true, skip: &skip, body) { return }
            let keepGoing = entry.perSend.withUnsafeBytes { piece($0, stable: false, skip: &skip, body) }
            if !keepGoing { return }
            if !piece(entry.response.sharedFields, stable: true, skip: &skip, body) { return }
            if !piece(entry.response.fields, stable: true, skip: &skip, body) { return }
            if entry.includeBody && !piece(entry.response.bodyBytes, stable: true, skip: &skip, body) { return }
        }
    }

    private func piece(
        _ bytes: UnsafeRawBufferPointer,
        stable: Bool,
        skip: inout Int,
        _ body: (UnsafeRawBufferPointer, Bool) -> Bool
    ) -> Bool {
        if skip >= bytes.count {
            skip -= bytes.count
            return true
        }
        let remaining = UnsafeRawBufferPointer(rebasing: bytes[skip...])
        skip = 0
        return remaining.isEmpty || body(remaining, stable)
    }

    /// Copies up to `buffer.count` unwritten bytes into `buffer` (what a TLS record is made from); returns
    /// how many.
    public func gather(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var filled = 0
        forEachPiece { piece, _ in
            let count = min(piece.count, buffer.count - filled)
            UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<(filled + count)]).copyMemory(
                from: UnsafeRawBufferPointer(rebasing: piece[0..<count])
            )
            filled += count
            return filled < buffer.count
        }
        return filled
    }
}
