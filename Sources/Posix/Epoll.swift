internal import CLinux
internal import Glibc

/// An epoll instance plus an eventfd for cross-thread wake-ups. Registrations carry a 64-bit token
/// chosen by the caller (the event loop uses connection slots).
public final class Epoll {
    public let fd: Int32
    private let wakeFD: Int32
    public static let wakeToken: UInt64 = .max
    private var events: [epoll_event]

    public struct Event {
        public var token: UInt64
        public var readable: Bool
        public var writable: Bool
        public var hangup: Bool
    }

    public init(capacity: Int = 256) throws(SystemError) {
        fd = try Posix.check("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        do throws(SystemError) {
            wakeFD = try Posix.check("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
        } catch {
            Glibc.close(fd)
            throw error
        }
        events = [epoll_event](repeating: epoll_event(), count: capacity)
        do throws(SystemError) {
            try add(wakeFD, token: Epoll.wakeToken, readable: true, writable: false)
        } catch {
            Glibc.close(wakeFD)
            Glibc.close(fd)
            throw error
        }
    }

    deinit {
        Glibc.close(wakeFD)
        Glibc.close(fd)
    }

    private func control(_ operation: Int32, _ target: Int32, token: UInt64, readable: Bool, writable: Bool, exclusive: Bool = false) throws(SystemError) {
        var event = epoll_event()
        var mask: UInt32 = exclusive ? EPOLLEXCLUSIVE.rawValue : EPOLLRDHUP.rawValue
        if readable { mask |= EPOLLIN.rawValue }
        if writable { mask |= EPOLLOUT.rawValue }
        event.events = mask
        event.data.u64 = token
        _ = try Posix.check("epoll_ctl") { epoll_ctl(fd, operation, target, &event) }
    }

    public func add(_ target: Int32, token: UInt64, readable: Bool, writable: Bool) throws(SystemError) {
        try control(EPOLL_CTL_ADD, target, token: token, readable: readable, writable: writable)
    }

    /// Registers a listening socket shared by several loops: EPOLLEXCLUSIVE wakes one waiting loop
    /// per new connection instead of all of them (no thundering herd).
    public func addShared(_ target: Int32, token: UInt64) throws(SystemError) {
        try control(EPOLL_CTL_ADD, target, token: token, readable: true, writable: false, exclusive: true)
    }

    public func modify(_ target: Int32, token: UInt64, readable: Bool, writable: Bool) throws(SystemError) {
        try control(EPOLL_CTL_MOD, target, token: token, readable: readable, writable: writable)
    }

    public func remove(_ target: Int32) {
        var event = epoll_event()
        _ = epoll_ctl(fd, EPOLL_CTL_DEL, target, &event)
    }

    /// Waits up to `timeoutMilliseconds` and calls `handle` for each event; wake-ups are drained here.
    public func wait(timeoutMilliseconds: Int32, _ handle: (Event) -> Void) throws(SystemError) {
        let capacity = Int32(events.count)
        let count = events.withUnsafeMutableBufferPointer { buffer -> Int32 in
            while true {
                let result = epoll_wait(fd, buffer.baseAddress, capacity, timeoutMilliseconds)
                if result >= 0 || errno != EINTR { return result }
            }
        }
        if count < 0 { throw SystemError(call: "epoll_wait", code: errno) }
        for index in 0..<Int(count) {
            let raw = events[index]
            if raw.data.u64 == Epoll.wakeToken {
                var value: eventfd_t = 0
                _ = eventfd_read(wakeFD, &value)
                handle(Event(token: Epoll.wakeToken, readable: true, writable: false, hangup: false))
                continue
            }
            handle(
                Event(
                    token: raw.data.u64,
                    readable: raw.events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0,
                    writable: raw.events & (EPOLLOUT.rawValue | EPOLLERR.rawValue) != 0,
                    hangup: raw.events & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
                )
            )
        }
    }

    /// Wakes a thread blocked in ``wait(timeoutMilliseconds:_:)`` (callable from any thread).
    public func wake() {
        _ = eventfd_write(wakeFD, 1)
    }
}

/// Signals delivered as a file descriptor, so the main thread waits for them without handlers.
///
/// The signals must be blocked in every thread, so ``block(_:)`` runs before any thread starts.
public enum SignalFD {
    public static func block(_ signals: [Int32]) -> Int32 {
        var set = sigset_t()
        _ = signals.withUnsafeBufferPointer { CLinux_block_signals($0.baseAddress, Int32($0.count), &set) }
        // SIGPIPE: a peer that closed must be an EPIPE error, never a dead server.
        signal(SIGPIPE, SIG_IGN)
        return signalfd(-1, &set, Int32(SFD_CLOEXEC))
    }

    /// Blocks until one of the signals arrives, or `timeoutMilliseconds` passes (then nil).
    public static func next(_ fd: Int32, timeoutMilliseconds: Int32) -> Int32? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, timeoutMilliseconds)
        guard ready > 0 else { return nil }
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        let count = withUnsafeMutableBytes(of: &info) { Glibc.read(fd, $0.baseAddress, size) }
        return count == size ? Int32(info.ssi_signo) : nil
    }
}
