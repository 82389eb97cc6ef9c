internal import CLinux
internal import Glibc

/// An epoll instance plus an eventfd for cross-thread wake-ups. Registrations carry a 64-bit token
/// chosen by the caller (the event loop uses connection slots).
public final class Epoll {
    public let fd: Int32
    private let wakeup: EventFD
    public static let wakeToken: UInt64 = .max
    /// Where `epoll_wait` writes, allocated once: an array in a `var` of this class was two dynamic
    /// exclusivity checks per wait, 130 instructions of every keep-alive request.
    private let events: UnsafeMutableBufferPointer<epoll_event>

    public struct Event {
        public var token: UInt64
        public var readable: Bool
        public var writable: Bool
    }

    public init(capacity: Int = 256) throws(SystemError) {
        fd = try Posix.check("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        do throws(SystemError) {
            wakeup = try EventFD()
        } catch {
            Posix.close(fd)
            throw error
        }
        events = .allocate(capacity: capacity)
        events.initialize(repeating: epoll_event())
        do throws(SystemError) {
            try add(wakeup.fd, token: Epoll.wakeToken, readable: true, writable: false)
        } catch {
            Posix.close(fd)
            throw error
        }
    }

    deinit {
        Posix.close(fd)
        events.deallocate()
    }

    private func control(
        _ operation: Int32,
        _ target: Int32,
        token: UInt64,
        readable: Bool,
        writable: Bool,
        exclusive: Bool = false
    ) throws(SystemError) {
        var event = epoll_event()
        var mask: UInt32 = exclusive ? EPOLLEXCLUSIVE.rawValue : EPOLLRDHUP.rawValue
        if readable { mask |= EPOLLIN.rawValue }
        if writable { mask |= EPOLLOUT.rawValue }
        event.events = mask
        event.data.u64 = token
        try Posix.check("epoll_ctl") { epoll_ctl(fd, operation, target, &event) }
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

    /// Waits up to `timeoutMilliseconds` and calls `handle` for each event; wake-ups are drained here
    /// and reported with ``wakeToken``.
    public func wait(timeoutMilliseconds: Int32, _ handle: (Event) -> Void) throws(SystemError) {
        let events = events
        let count = try Posix.check("epoll_wait") { CLinux_epoll_wait(fd, events.baseAddress, Int32(events.count), timeoutMilliseconds) }
        for index in 0..<Int(count) {
            let raw = events[index]
            if raw.data.u64 == Epoll.wakeToken {
                wakeup.drain()
                handle(Event(token: Epoll.wakeToken, readable: true, writable: false))
                continue
            }
            handle(
                Event(
                    token: raw.data.u64,
                    readable: raw.events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0,
                    writable: raw.events & (EPOLLOUT.rawValue | EPOLLERR.rawValue) != 0
                )
            )
        }
    }

    /// Wakes a thread blocked in ``wait(timeoutMilliseconds:_:)`` (callable from any thread).
    public func wake() { wakeup.signal() }
}
