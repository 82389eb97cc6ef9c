import AASA
import HTTP1

/// What every connection of a server run is held to, in the units the state machine uses (µs).
struct ConnectionSettings: Sendable, Equatable {
    var limits: HTTPLimits
    /// From accept (or a request's first byte) to its complete head.
    var headerTimeout: Int64
    /// From a complete head to the end of its body.
    var bodyTimeout: Int64
    var keepAliveTimeout: Int64
    /// A response whose write makes no progress for this long is abandoned.
    var writeTimeout: Int64
    /// After the last response, how long unread request bytes are still read (so the client sees our
    /// answer, not a reset) before the connection is closed anyway.
    var lingerTimeout: Int64 = 2_000_000
    var maxRequests: Int
    /// Pending output beyond which a connection stops reading and parsing pipelined requests.
    var outputHighWater = 256 * 1024

    init(_ settings: ServerSettings) {
        limits = HTTPLimits(
            requestLineBytes: settings.maxRequestLineBytes,
            headerBytes: settings.maxHeaderBytes,
            headerCount: settings.maxHeaderCount,
            bodyBytes: settings.maxBodyBytes
        )
        headerTimeout = Self.microseconds(settings.headerTimeout)
        bodyTimeout = headerTimeout
        keepAliveTimeout = Self.microseconds(settings.keepAliveTimeout)
        writeTimeout = Self.microseconds(settings.writeTimeout)
        maxRequests = settings.maxRequestsPerConnection
    }

    static func microseconds(_ seconds: Double) -> Int64 { Int64((seconds * 1_000_000).rounded()) }
}

/// The time as the connections of one event loop see it: set by the loop (once per batch of events),
/// read by the state machines. Tests set it by hand.
final class LoopClock {
    /// Monotonic microseconds.
    var now: Int64
    /// `Date: …\r\n` for the current second.
    private(set) var dateLine: DateLine
    private var dateSecond: Int

    init(now: Int64, unixSeconds: Int) {
        self.now = now
        dateSecond = unixSeconds
        dateLine = DateLine(unixSeconds: unixSeconds)
    }

    func set(now: Int64, unixSeconds: Int) {
        self.now = now
        if unixSeconds != dateSecond {
            dateSecond = unixSeconds
            dateLine = DateLine(unixSeconds: unixSeconds)
        }
    }
}
