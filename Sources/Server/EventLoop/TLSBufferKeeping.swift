/// Which of a loop's TLS connections keep OpenSSL's record buffers between requests.
///
/// A session that lets them go after every call (SSL_MODE_RELEASE_BUFFERS, how every session starts) holds
/// nothing while idle, but allocates and frees a read and a write buffer of about 17 KB for every request:
/// about 1,250 instructions of malloc and free, 5–6 % of an HTTPS keep-alive request. One that keeps them
/// holds about 34 KB while idle. So a connection that comes back — a second request on it, as a load
/// balancer's or a busy client's connections do — keeps them, up to ``limit`` connections a loop (about
/// 4.4 MB), and lets them go once it has been idle for ``idleRelease`` (checked at the loop's sweeps). A
/// connection that asks once and leaves, or waits long between requests, never holds them idle for long.
struct TLSBufferKeeping {
    static let limit = 128
    /// Monotonic microseconds without a request before a keeping connection lets its buffers go.
    static let idleRelease: Int64 = 1_000_000

    let limit: Int
    let idleRelease: Int64
    /// Connections keeping their buffers now.
    private(set) var keepers = 0

    init(limit: Int = TLSBufferKeeping.limit, idleRelease: Int64 = TLSBufferKeeping.idleRelease) {
        self.limit = limit
        self.idleRelease = idleRelease
    }

    /// A connection not keeping its buffers is about to answer a request, `answered` requests answered on it
    /// before: true when it starts keeping them now (it is counted until ``stopsKeeping(idleSince:now:)`` or
    /// ``keeperClosed()``).
    mutating func startsKeeping(answered: Int) -> Bool {
        guard answered >= 1, keepers < limit else { return false }
        keepers += 1
        return true
    }

    /// At a sweep, for a connection keeping its buffers, idle since `idleSince` (nil: not idle): true when
    /// it lets them go now.
    mutating func stopsKeeping(idleSince: Int64?, now: Int64) -> Bool {
        guard let idleSince, now - idleSince >= idleRelease else { return false }
        keepers -= 1
        return true
    }

    /// A connection keeping its buffers closed (OpenSSL frees them with the session).
    mutating func keeperClosed() {
        keepers -= 1
    }
}
