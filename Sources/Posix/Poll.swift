internal import Glibc

extension Posix {
    /// Waits until one of `fds` is readable or the timeout passes; returns the readable ones.
    public static func waitReadable(_ fds: [Int32], timeoutMilliseconds: Int32) -> [Int32] {
        var pollers = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let (ready, _) = retrying { poll(&pollers, nfds_t(pollers.count), timeoutMilliseconds) }
        guard ready > 0 else { return [] }
        return pollers.filter { $0.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 }.map(\.fd)
    }

    /// Waits until `fd` has `readiness` (or an error or hang-up), up to the timeout; false on timeout.
    public static func wait(_ fd: Int32, for readiness: Readiness, timeoutMilliseconds: Int32) -> Bool {
        let events = Int16(readiness == .readable ? POLLIN : POLLOUT)
        var poller = pollfd(fd: fd, events: events, revents: 0)
        let (ready, _) = retrying { poll(&poller, 1, timeoutMilliseconds) }
        return ready > 0
    }
}
