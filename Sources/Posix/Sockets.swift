internal import CLinux
internal import Glibc

extension Posix {
    /// A bound, listening, non-blocking, close-on-exec TCP socket and the port it got (port 0 picks one).
    /// No SO_REUSEPORT: a second server started by mistake must fail with "address in use", not share.
    /// `deferAccept` is for listeners whose clients always speak first (HTTP, TLS, PROXY protocol).
    public static func listen(
        address: String,
        port: Int,
        backlog: Int32 = 4096,
        deferAccept: Bool = false
    ) throws(SystemError) -> (fd: Int32, port: Int) {
        let isV6 = address.contains(":")
        let family = isV6 ? AF_INET6 : AF_INET
        let fd = try check("socket") {
            socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do throws(SystemError) {
            try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            // "::" must not also claim IPv4, so "0.0.0.0" and "::" can be listed side by side.
            if isV6 { try setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1) }
            // The kernel hands over a connection once its first bytes arrive (or after about a second of
            // silence): every accept is then followed by a read that finds the request, with no wake-up
            // in between. A quarter less CPU per new connection.
            if deferAccept { try setOption(fd, Int32(IPPROTO_TCP), TCP_DEFER_ACCEPT, 1) }
            var storage = try socketAddress(address, port: port)
            try check("bind") {
                withUnsafePointer(to: &storage.address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, storage.length) }
                }
            }
            try check("listen") { Glibc.listen(fd, backlog) }
            return (fd, try localPort(fd))
        } catch {
            close(fd)
            throw error
        }
    }

    /// A connected, non-blocking, close-on-exec TCP socket; the connection completes in the background
    /// (wait for writable, then ``connectionError(_:)``).
    public static func startConnect(address: String, port: Int) throws(SystemError) -> Int32 {
        let family = address.contains(":") ? AF_INET6 : AF_INET
        let fd = try check("socket") {
            socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do throws(SystemError) {
            var storage = try socketAddress(address, port: port)
            let (result, code) = retrying {
                withUnsafePointer(to: &storage.address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, storage.length) }
                }
            }
            if result < 0 && code != EINPROGRESS { throw SystemError(call: "connect", code: code) }
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// The error of a background connect once the socket is writable (nil: connected).
    public static func connectionError(_ fd: Int32) -> SystemError? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else {
            return SystemError(call: "getsockopt", code: errno)
        }
        return value == 0 ? nil : SystemError(call: "connect", code: value)
    }

    static func socketAddress(_ address: String, port: Int) throws(SystemError) -> (address: sockaddr_storage, length: socklen_t) {
        if address.contains(":") {
            var address6 = sockaddr_in6()
            address6.sin6_family = sa_family_t(AF_INET6)
            address6.sin6_port = in_port_t(UInt16(port).bigEndian)
            return try stored(address6, text: address) { inet_pton(AF_INET6, address, &$0.sin6_addr) }
        }
        var address4 = sockaddr_in()
        address4.sin_family = sa_family_t(AF_INET)
        address4.sin_port = in_port_t(UInt16(port).bigEndian)
        return try stored(address4, text: address) { inet_pton(AF_INET, address, &$0.sin_addr) }
    }

    /// `value` with its address parsed in by `parse` (inet_pton), in a sockaddr_storage.
    private static func stored<Address>(
        _ value: Address,
        text: String,
        parse: (inout Address) -> Int32
    ) throws(SystemError) -> (address: sockaddr_storage, length: socklen_t) {
        var value = value
        guard parse(&value) == 1 else { throw SystemError(call: "inet_pton(\(text))", code: EINVAL) }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: value, as: Address.self) }
        return (storage, socklen_t(MemoryLayout<Address>.size))
    }

    public static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws(SystemError) {
        var value = value
        try check("setsockopt") { setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }

    /// Small responses on a kept-alive connection must not wait for the client's delayed ACK (Nagle).
    public static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    public static func localPort(_ fd: Int32) throws(SystemError) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        try check("getsockname") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
        }
        return withUnsafePointer(to: &storage) { pointer in
            if Int32(pointer.pointee.ss_family) == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    public enum AcceptResult {
        case accepted(fd: Int32, peer: SocketAddress)
        case wouldBlock
    }

    /// Accepts one connection, non-blocking and close-on-exec, with the peer's address (formatted only
    /// when someone asks: most connections are never logged by address).
    public static func accept(_ listener: Int32) throws(SystemError) -> AcceptResult {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let (fd, code) = retrying {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    CLinux_accept4(listener, $0, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
                }
            }
        }
        if fd >= 0 { return .accepted(fd: fd, peer: SocketAddress(&storage)) }
        switch code {
        // ECONNABORTED: the client gave up while queued; nothing to accept, not an error.
        case EAGAIN, EWOULDBLOCK, ECONNABORTED: return .wouldBlock
        default: throw SystemError(call: "accept4", code: code)
        }
    }

    /// One read into `buffer`; `.closed` at end of stream.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        receive(fd, into: buffer, flags: 0, call: "read")
    }

    /// Copies what is waiting without consuming it (a PROXY header must be read before OpenSSL reads the socket).
    public static func peek(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        receive(fd, into: buffer, flags: Int32(MSG_PEEK), call: "recv")
    }

    private static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, flags: Int32, call: String) -> IOResult {
        let (count, code) = retrying { CLinux_recv(fd, buffer.baseAddress, buffer.count, flags) }
        if count > 0 { return .bytes(count) }
        if count == 0 { return .closed }
        if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock(.readable) }
        return .failed(SystemError(call: call, code: code).description)
    }

    /// One write, without raising SIGPIPE on a closed peer.
    public static func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> IOResult {
        let (count, code) = retrying { CLinux_send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL)) }
        return writeOutcome(count, code, call: "send")
    }

    /// A socket write's result as the event loops act on it: a full send buffer waits for writable, a peer
    /// that is gone ends the connection quietly, anything else is a failure named by its call.
    /// Inlined, the call's name a constant: every answer's write goes through it.
    @inline(__always)
    static func writeOutcome(_ written: Int, _ code: Int32, call: StaticString) -> IOResult {
        if written >= 0 { return .bytes(written) }
        if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock(.writable) }
        if code == EPIPE || code == ECONNRESET { return .closed }
        return .failed(SystemError(call: "\(call)", code: code).description)
    }

    /// Writes all of `bytes` to a blocking descriptor (stderr, stdout, a file); false if it failed.
    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { writeAll(fd, $0) == nil }
    }

    static func writeAll(_ fd: Int32, _ raw: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        while offset < raw.count {
            let (count, code) = retrying { Glibc.write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset) }
            if count <= 0 { return count < 0 ? code : EIO }
            offset += count
        }
        return nil
    }

    public static func close(_ fd: Int32) {
        // EINTR on close: the descriptor is gone either way on Linux; retrying could close another's fd.
        _ = Glibc.close(fd)
    }

    public static func shutdownWrite(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Close with RST: frees kernel buffers at once for connections we give up on (timeouts, eviction).
    public static func abort(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        _ = Glibc.close(fd)
    }
}

/// An IPv4 or IPv6 peer address, kept as bytes and formatted on demand.
public struct SocketAddress: Sendable, Equatable, CustomStringConvertible {
    private let isV6: Bool
    private let high: UInt64
    private let low: UInt64

    init(_ storage: inout sockaddr_storage) {
        let family = Int32(storage.ss_family)
        if family == AF_INET6 {
            isV6 = true
            let bytes = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr.__in6_u.__u6_addr8 }
            }
            var parts: (UInt64, UInt64) = (0, 0)
            withUnsafeBytes(of: bytes) { raw in
                parts = (raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            }
            (high, low) = parts
        } else if family == AF_INET {
            isV6 = false
            high = 0
            low = UInt64(
                withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr } }
            )
        } else {
            isV6 = false
            high = 0
            low = 0
        }
    }

    public var description: String {
        if !isV6 {
            // Network byte order: the first octet is the lowest byte.
            let address = UInt32(truncatingIfNeeded: low)
            return "\(address & 0xFF).\(address >> 8 & 0xFF).\(address >> 16 & 0xFF).\(address >> 24)"
        }
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { raw in
            raw.storeBytes(of: high, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
