/// Which failed TLS handshakes are worth a log line: the first per name (SNI) and reason in each
/// interval, with a count of those left out since. Scanners and clients retrying a name with no
/// certificate yet fail hundreds of handshakes a minute; the operator needs one line per name.
struct HandshakeFailureLog {
    struct Key: Hashable {
        var serverName: String?
        var reason: String
    }

    let intervalMilliseconds: Int64
    /// Past this many names, the oldest interval's entries are forgotten (a flood of made-up names).
    let capacity: Int
    private var entries: [Key: (since: Int64, suppressed: Int)] = [:]

    init(intervalMilliseconds: Int64 = 60_000, capacity: Int = 1_000) {
        self.intervalMilliseconds = intervalMilliseconds
        self.capacity = capacity
    }

    /// The line to log for this failure, or nil when one was logged for the name and reason within the interval.
    mutating func line(serverName: String?, client: String, reason: String, now: Int64) -> String? {
        let key = Key(serverName: serverName, reason: reason)
        if let entry = entries[key], now - entry.since < intervalMilliseconds {
            entries[key] = (entry.since, entry.suppressed + 1)
            return nil
        }
        let suppressed = entries[key]?.suppressed ?? 0
        if entries.count >= capacity { entries = entries.filter { now - $0.value.since < intervalMilliseconds } }
        if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
        entries[key] = (now, 0)
        let name = serverName.map { "for \($0)" } ?? "without a server name (SNI)"
        var line = "TLS handshake \(name) from \(client) failed: \(reason)"
        if suppressed > 0 { line += " (and \(suppressed) more like it in the last \(intervalMilliseconds / 1000) s)" }
        return line
    }
}
