internal import CLinux
internal import Glibc
import Synchronization

/// A failed system call: which call and why, printed as "bind: Address already in use (errno 98)".
public struct SystemError: Error, Sendable, CustomStringConvertible, Equatable {
    public var call: String
    public var code: Int32

    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    public var description: String { "\(call): \(String(cString: strerror(code))) (errno \(code))" }
    public var reason: String { String(cString: strerror(code)) }
}

/// The one place that makes system calls. Each call retries on EINTR and turns -1/errno into a
/// ``SystemError``; errno is read immediately, before anything else can change it.
public enum Posix {
    @inline(__always)
    static func check(_ call: String, _ body: () -> Int32) throws(SystemError) -> Int32 {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw SystemError(call: call, code: code)
        }
    }

    // MARK: Sockets

    /// A bound, listening, non-blocking TCP socket. `reusePort` lets every event loop own a listener on
    /// the same address, so the kernel spreads connections across threads.
    public static func listen(address: String, port: Int, backlog: Int32 = 4096, reusePort: Bool) throws(SystemError) -> (fd: Int32, port: Int) {
        let isV6 = address.contains(":")
        let family = isV6 ? AF_INET6 : AF_INET
        let fd = try check("socket") { socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        do throws(SystemError) {
            try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            if reusePort { try setOption(fd, SOL_SOCKET, SO_REUSEPORT, 1) }
            // "::" must not also claim IPv4, so "0.0.0.0" and "::" can be listed side by side.
            if isV6 { try setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1) }
            if isV6 {
                var address6 = sockaddr_in6()
                address6.sin6_family = sa_family_t(AF_INET6)
                address6.sin6_port = in_port_t(UInt16(port).bigEndian)
                guard inet_pton(AF_INET6, address, &address6.sin6_addr) == 1 else {
                    throw SystemError(call: "inet_pton(\(address))", code: EINVAL)
                }
                try bindAddress(fd, &address6)
            } else {
                var address4 = sockaddr_in()
                address4.sin_family = sa_family_t(AF_INET)
                address4.sin_port = in_port_t(UInt16(port).bigEndian)
                guard inet_pton(AF_INET, address, &address4.sin_addr) == 1 else {
                    throw SystemError(call: "inet_pton(\(address))", code: EINVAL)
                }
                try bindAddress(fd, &address4)
            }
            _ = try check("listen") { Glibc.listen(fd, backlog) }
            return (fd, try localPort(fd))
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// `bind` for a `sockaddr_in` or `sockaddr_in6`.
    private static func bindAddress<Address>(_ fd: Int32, _ address: inout Address) throws(SystemError) {
        _ = try check("bind") {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
            }
        }
    }

    public static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws(SystemError) {
        var value = value
        _ = try check("setsockopt") { setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }

    public static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    public static func localPort(_ fd: Int32) throws(SystemError) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try check("getsockname") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
        }
        return portOf(&storage)
    }

    private static func portOf(_ storage: inout sockaddr_storage) -> Int {
        withUnsafePointer(to: &storage) { pointer in
            if Int32(pointer.pointee.ss_family) == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    public enum AcceptResult {
        case accepted(fd: Int32, peer: String)
        case wouldBlock
    }

    /// Accepts one connection, non-blocking and close-on-exec, with the peer's address as text.
    public static func accept(_ listener: Int32) throws(SystemError) -> AcceptResult {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        while true {
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    CLinux_accept4(listener, $0, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
                }
            }
            if fd >= 0 { return .accepted(fd: fd, peer: addressText(&storage)) }
            let code = errno
            switch code {
            case EINTR: continue
            // ECONNABORTED: the client gave up while queued; nothing to accept, not an error.
            case EAGAIN, EWOULDBLOCK, ECONNABORTED: return .wouldBlock
            default: throw SystemError(call: "accept4", code: code)
            }
        }
    }

    static func addressText(_ storage: inout sockaddr_storage) -> String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        func decoded() -> String { String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return withUnsafePointer(to: &storage) { pointer -> String in
            if Int32(pointer.pointee.ss_family) == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                    return decoded()
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                var raw = address.pointee.sin_addr
                inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                return decoded()
            }
        }
    }

    public enum IOResult: Equatable {
        case bytes(Int)
        case wouldBlock
        case closed
    }

    /// Reads into `buffer`; `.closed` on end of stream.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult {
        while true {
            let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if count > 0 { return .bytes(count) }
            if count == 0 { return .closed }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SystemError(call: "read", code: code)
            }
        }
    }

    /// Writes without raising SIGPIPE on a closed peer.
    public static func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemError) -> IOResult {
        while true {
            let count = send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return .bytes(count) }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw SystemError(call: "send", code: code)
            }
        }
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

    // MARK: Time

    /// Monotonic milliseconds, for deadlines.
    public static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Wall-clock Unix time with sub-second precision, for logs and `Date`.
    public static func unixTime() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        bytes.withUnsafeBytes { raw in
            while offset < raw.count {
                let count = Glibc.write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset)
                if count > 0 {
                    offset += count
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}

extension Posix {
    /// Online CPU cores (the default number of event loops).
    public static func cpuCount() -> Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// The CPUs this process may run on (fewer than `cpuCount()` under taskset or a cgroup cpuset).
    public static func availableCPUs() -> Int { Int(CLinux_available_cpus()) }

    /// Runs `body` for each index in `0..<count` on up to `availableCPUs()` threads (the caller's
    /// among them) and returns when every index is done. Indices are handed out in small batches
    /// from a shared counter, so uneven work still spreads evenly.
    public static func parallelFor(_ count: Int, _ body: @Sendable (Int) -> Void) {
        let workers = min(availableCPUs(), 8, max(1, count / 32))
        guard workers > 1 else {
            for index in 0..<count { body(index) }
            return
        }
        let next = Atomic<Int>(0)
        withoutActuallyEscaping(body) { body in
            let work = UncheckedSendable {
                let batch = 16
                while true {
                    let start = next.wrappingAdd(batch, ordering: .relaxed).oldValue
                    if start >= count { return }
                    for index in start..<min(start + batch, count) { body(index) }
                }
            }
            var threads: [Thread] = []
            for _ in 1..<workers {
                // Without a thread the caller does the work alone: slower, never wrong.
                if let thread = try? Thread({ work.value() }) { threads.append(thread) }
            }
            work.value()
            for thread in threads { thread.join() }
        }
    }

    /// `transform` applied to each index in `0..<count`, computed as `parallelFor` does, in index order.
    public static func parallelMap<Element: Sendable>(_ count: Int, _ transform: @Sendable (Int) -> Element) -> [Element] {
        guard count > 0 else { return [] }
        return Array(unsafeUninitializedCapacity: count) { buffer, initialized in
            let slots = UncheckedSendable(buffer.baseAddress!)
            // Each index is written exactly once, by one thread, before parallelFor returns.
            parallelFor(count) { index in (slots.value + index).initialize(to: transform(index)) }
            initialized = count
        }
    }

    /// A joinable OS thread running `body`: event loops must not live on Swift's cooperative pool,
    /// since they block in epoll_wait.
    public final class Thread: @unchecked Sendable {
        private var handle = pthread_t()
        private let body: @Sendable () -> Void

        public init(_ body: @escaping @Sendable () -> Void) throws(SystemError) {
            self.body = body
            let context = Unmanaged.passRetained(self).toOpaque()
            let result = pthread_create(&handle, nil, { raw in
                let thread = Unmanaged<Thread>.fromOpaque(raw!).takeRetainedValue()
                thread.body()
                return nil
            }, context)
            if result != 0 {
                Unmanaged<Thread>.fromOpaque(context).release()
                throw SystemError(call: "pthread_create", code: result)
            }
        }

        public func join() {
            pthread_join(handle, nil)
        }
    }
}

/// Carries a closure that is only ever run while its owner waits (`Posix.parallelFor` joins every thread).
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
