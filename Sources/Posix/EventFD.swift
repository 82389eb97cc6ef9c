internal import CLinux
internal import Glibc

/// A counter other threads write to wake a thread blocked in epoll or poll.
public struct EventFD: ~Copyable, Sendable {
    public let fd: Int32

    public init() throws(SystemError) {
        fd = try Posix.check("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
    }

    deinit { Posix.close(fd) }

    /// Callable from any thread.
    public func signal() { _ = eventfd_write(fd, 1) }

    /// Resets the counter; true if it had been signalled.
    @discardableResult
    public func drain() -> Bool {
        var value: eventfd_t = 0
        return eventfd_read(fd, &value) == 0 && value > 0
    }
}
