/// One answer's bytes as written, kept by an event loop for the next time the same answer is queued
/// whole: a keep-alive client asking for the same document again within the second (a CDN's burst, a
/// health check, a load test) is sent straight from here, where every answer was otherwise copied piece by
/// piece into the send buffer first. Per event loop, so without a lock.
///
/// Keyed by everything the bytes depend on: the response itself, the `Date` line, the `Connection` line
/// and whether the body goes. The response is held strongly: one freed and another made at the same
/// address must never match. Its loop calls ``forget()`` on every sweep, so nothing it holds outlives a
/// reload for long.
public final class RenderedAnswer {
    let buffer: UnsafeMutableRawBufferPointer
    private var response: PreparedResponse?
    private var date = DateLine(unixSeconds: 0)
    private var connection = ConnectionDirective.none
    private var includeBody = false
    private var count = 0

    /// Answers up to `capacity` bytes are kept.
    public init(capacity: Int) {
        buffer = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { buffer.deallocate() }

    public var capacity: Int { buffer.count }

    /// The bytes kept, when they are `entry`'s. By pointer: a copy of the entry retains its response.
    func bytes(of entry: UnsafePointer<OutputQueue.Entry>) -> UnsafeRawBufferPointer? {
        guard response === entry.pointee.response, let entryDate = entry.pointee.date, entryDate == date,
            entry.pointee.connection == connection, entry.pointee.includeBody == includeBody
        else { return nil }
        return UnsafeRawBufferPointer(rebasing: buffer[0..<count])
    }

    /// The buffer's first `count` bytes are now `entry`'s.
    func kept(_ entry: UnsafePointer<OutputQueue.Entry>, count: Int) -> UnsafeRawBufferPointer {
        response = entry.pointee.response
        date = entry.pointee.date ?? DateLine(unixSeconds: 0)
        connection = entry.pointee.connection
        includeBody = entry.pointee.includeBody
        self.count = count
        return UnsafeRawBufferPointer(rebasing: buffer[0..<count])
    }

    /// Lets go of the response kept (and what it holds alive): nothing matches until ``kept(_:count:)``, so the
    /// buffer may be rewritten.
    public func forget() { response = nil }
}
