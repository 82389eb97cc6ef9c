/// Responses waiting to be written, by reference: the prepared bytes are not copied, only the `Date` line
/// of each send is held with it. Pipelined answers queue in order.
public struct OutputQueue: Sendable {
    /// One queued response. Read in place by index (a copy of an entry retains its response, an atomic
    /// operation, and a response is written at least once); small, because every connection keeps a buffer
    /// of them (ten thousand idle connections hold ten thousand).
    public struct Entry: Sendable {
        /// Written by pointer into its bytes, which the entry keeps alive until then.
        let response: PreparedResponse
        /// Only an interim answer (100 Continue) has none.
        let date: DateLine?
        let connection: ConnectionDirective
        let includeBody: Bool
        let byteCount: Int
    }

    @usableFromInline var entries: [Entry] = []
    /// Bytes of the first entry already written.
    private var sentOfFirst = 0
    /// Bytes queued and not yet written.
    public private(set) var byteCount = 0

    public init() {}

    /// Asked several times a request by the connection's state machine, in another module: inlined there.
    @inlinable public var isEmpty: Bool { entries.isEmpty }

    /// Queues a response with the `Date` line of the second it is answered in (nil for an interim answer);
    /// returns its size on the wire.
    @discardableResult
    public mutating func append(_ response: PreparedResponse, date: DateLine?, connection: ConnectionDirective, includeBody: Bool) -> Int {
        let perSend = (date == nil ? 0 : DateLine.byteCount) + connection.line.count
        let count = response.byteCount(perSendLines: perSend, includeBody: includeBody)
        entries.append(
            Entry(response: response, date: date, connection: connection, includeBody: includeBody, byteCount: count)
        )
        byteCount += count
        return count
    }

    /// `count` bytes were written.
    public mutating func consume(_ count: Int) {
        var remaining = count
        byteCount -= count
        while remaining > 0, !entries.isEmpty {
            let left = entries[0].byteCount - sentOfFirst
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
    /// marked stable points into a prepared response, which the queue keeps alive until it is written, or
    /// into the program's constant data: the pointer may be kept (for `writev`) while the queue is not
    /// changed. Other pieces (the `Date` line) must be copied before `body` returns. A response's body (or
    /// what is left of it) comes with the response, unretained, so a writer can send it another way (from
    /// the file its ``PreparedResponse/bodyOwner`` may be); the queue keeps that alive too.
    ///
    /// Mutating though it changes nothing: the queue lives in a class's state machine, and a non-mutating
    /// call on it there copies it first — the entries' array retained and released a request.
    public mutating func forEachPiece(
        _ body: (UnsafeRawBufferPointer, _ stable: Bool, _ bodyOf: Unmanaged<PreparedResponse>?) -> Bool
    ) {
        var skip = sentOfFirst
        // By index: `entries[index].response` is read in place, where a copy of the entry (`for entry in
        // entries`) retained and released the response.
        for index in entries.indices {
            // Status line, per-send lines, the other fields, the body: skip what was already written.
            if !piece(entries[index].response.statusLine, stable: true, skip: &skip, body) { return }
            if let date = entries[index].date {
                let keepGoing = date.withUnsafeBytes { piece($0, stable: false, skip: &skip, body) }
                if !keepGoing { return }
            }
            if !piece(entries[index].connection.line, stable: true, skip: &skip, body) { return }
            if !piece(entries[index].response.sharedFields, stable: true, skip: &skip, body) { return }
            if !piece(entries[index].response.fields, stable: true, skip: &skip, body) { return }
            if entries[index].includeBody {
                let response = Unmanaged.passUnretained(entries[index].response)
                if !piece(entries[index].response.bodyBytes, stable: true, skip: &skip, bodyOf: response, body) { return }
            }
        }
    }

    private func piece(
        _ bytes: UnsafeRawBufferPointer,
        stable: Bool,
        skip: inout Int,
        bodyOf: Unmanaged<PreparedResponse>? = nil,
        _ body: (UnsafeRawBufferPointer, Bool, Unmanaged<PreparedResponse>?) -> Bool
    ) -> Bool {
        if skip >= bytes.count {
            skip -= bytes.count
            return true
        }
        let remaining = UnsafeRawBufferPointer(rebasing: bytes[skip...])
        skip = 0
        return remaining.isEmpty || body(remaining, stable, bodyOf)
    }

    /// Copies every unwritten byte into `buffer`, which holds at least ``byteCount``, in one pass and
    /// returns how many; nil, with nothing to be taken from `buffer`, when a response with a body of
    /// `largeBodies` bytes or more still has some of it to go (its writer sends that from a file). Walks the
    /// pieces in ``forEachPiece(_:)``'s order without a call per piece: an answer of a few KB (nearly every
    /// answer) is copied like this and sent with one `send`, where the closure per piece cost ~250
    /// instructions a request (`Benchmarks/request-instructions.py`).
    public mutating func copyAll(into buffer: UnsafeMutableRawBufferPointer, unlessBodyOf largeBodies: Int) -> Int? {
        precondition(byteCount <= buffer.count)
        guard let base = buffer.baseAddress else { return 0 }
        var skip = sentOfFirst
        var filled = 0
        @inline(__always)
        func put(_ bytes: UnsafeRawBufferPointer) {
            if skip >= bytes.count {
                skip -= bytes.count
                return
            }
            let count = bytes.count - skip
            (base + filled).copyMemory(from: bytes.baseAddress! + skip, byteCount: count)
            filled += count
            skip = 0
        }
        for index in entries.indices {
            if entries[index].includeBody && entries[index].response.bodyBytes.count >= largeBodies { return nil }
            put(entries[index].response.statusLine)
            if let date = entries[index].date { date.withUnsafeBytes { put($0) } }
            put(entries[index].connection.line)
            put(entries[index].response.sharedFields)
            put(entries[index].response.fields)
            if entries[index].includeBody { put(entries[index].response.bodyBytes) }
        }
        return filled
    }

    /// The whole of the one answer queued, nothing of it written yet (nearly every keep-alive answer): from
    /// `memo` when it holds the answer already, else copied there first. Nil when more than one is queued, some
    /// of it is written, it is larger than the memo, or a body of `largeBodies` bytes or more goes with it (its
    /// writer sends that from a file).
    public mutating func soleAnswer(keptIn memo: RenderedAnswer, unlessBodyOf largeBodies: Int) -> UnsafeRawBufferPointer? {
        guard entries.count == 1, sentOfFirst == 0, byteCount <= memo.capacity else { return nil }
        let kept = entries.withUnsafeBufferPointer { memo.bytes(of: $0.baseAddress!) }
        if let kept { return kept }
        memo.forget()
        guard let count = copyAll(into: memo.buffer, unlessBodyOf: largeBodies) else { return nil }
        return entries.withUnsafeBufferPointer { memo.kept($0.baseAddress!, count: count) }
    }

    /// Copies up to `buffer.count` unwritten bytes into `buffer` (what a TLS record is made from); returns
    /// how many.
    public mutating func gather(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        // All of it fits (nearly every TLS answer): one pass without a call per piece.
        if byteCount <= buffer.count, let all = copyAll(into: buffer, unlessBodyOf: .max) { return all }
        var filled = 0
        forEachPiece { piece, _, _ in
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
