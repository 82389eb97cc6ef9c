internal import CLinux
internal import Glibc

/// Pieces of memory written with one `writev`: the responses a connection has queued go to the kernel
/// by pointer, without being copied together first.
public struct GatherList: ~Copyable {
    private let vectors: UnsafeMutablePointer<iovec>
    public let capacity: Int
    public private(set) var count = 0
    public private(set) var byteCount = 0

    public init(capacity: Int = 64) {
        self.capacity = capacity
        vectors = .allocate(capacity: capacity)
    }

    deinit { vectors.deallocate() }

    public var isFull: Bool { count == capacity }

    /// The memory must stay valid and unchanged until the write is done.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        precondition(count < capacity)
        vectors[count] = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
        count += 1
        byteCount += bytes.count
    }

    public mutating func removeAll() {
        count = 0
        byteCount = 0
    }

    /// One `writev` of everything listed, without raising SIGPIPE on a closed peer (the sockets the
    /// server writes to have it ignored process-wide, as OpenSSL's writes require too).
    ///
    /// `moreFollows`: more bytes of the same answer come right after with another call (a body the kernel
    /// sends from a file), so the kernel holds a short last segment back for them (`MSG_MORE`) instead of
    /// sending the header lines in a packet of their own.
    public func write(to fd: Int32, moreFollows: Bool = false) -> IOResult {
        let (written, code) = Posix.retrying {
            guard moreFollows else { return CLinux_writev(fd, vectors, Int32(count)) }
            var message = msghdr()
            message.msg_iov = vectors
            message.msg_iovlen = count
            return CLinux_sendmsg(fd, &message, Int32(MSG_MORE))
        }
        return Posix.writeOutcome(written, code, call: moreFollows ? "sendmsg" : "writev")
    }

    /// ``write(to:moreFollows:)``, nothing following, with the pieces first copied one after another into
    /// `buffer` and sent with one `send`: for a few KB in several pieces the copy costs less than the
    /// kernel's way with a vector (`writev` reads the vector in and walks it segment by segment, through the
    /// file layer: about 3 % of a keep-alive request's CPU time more than one `send`, measured with `perf`).
    /// `buffer` holds at least ``byteCount`` bytes and none of the pieces.
    public func writeCopied(to fd: Int32, through buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        precondition(byteCount <= buffer.count)
        guard let base = buffer.baseAddress else { return .bytes(0) }
        var offset = 0
        for index in 0..<count {
            let vector = vectors[index]
            if let source = vector.iov_base { (base + offset).copyMemory(from: source, byteCount: vector.iov_len) }
            offset += vector.iov_len
        }
        return Posix.write(fd, UnsafeRawBufferPointer(start: base, count: offset))
    }
}
