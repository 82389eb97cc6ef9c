import HTTP1
import Posix
import Support
import Synchronization

/// Counting and logging what a loop answered.
extension EventLoop {
    static let botPrefix = Array("AASA-Bot/".utf8)
    /// Google's Digital Asset Links fetcher, which verifies App Links for Android devices (observed in
    /// server logs; Google does not document it).
    static let googlePrefix = Array("GoogleAssociationService".utf8)

    func record(_ connection: Connection, _ head: RequestHead, status: Int, bytes: Int, site: String, pathClass: PathClass) {
        connection.machine.input.withUnsafeBufferPointer { buffer in
            func userAgentStarts(with prefix: [UInt8]) -> Bool {
                head.userAgentRange.map { range in
                    range.count >= prefix.count
                        && Router.equal(UnsafeBufferPointer(rebasing: buffer[range.lowerBound..<(range.lowerBound + prefix.count)]), prefix)
                } ?? false
            }
            let isBot = pathClass == .aasa && userAgentStarts(with: EventLoop.botPrefix)
            let isGoogle = pathClass == .assetLinks && userAgentStarts(with: EventLoop.googlePrefix)
            let wallTime = isBot || isGoogle || settings.accessLog ? Posix.unixTime() : 0
            pendingStats.count(LoopStats.RequestKey(site: site, pathClass: pathClass, status: status), bytes: bytes)
            if isBot {
                pendingStats.add { stats in
                    stats.botFetches[site, default: 0] += 1
                    stats.botLastFetch[site] = wallTime
                }
            } else if isGoogle {
                pendingStats.add { stats in
                    stats.googleFetches[site, default: 0] += 1
                    stats.googleLastFetch[site] = wallTime
                }
            }
            guard settings.accessLog else { return }
            func text(_ range: Range<Int>?) -> String {
                range.map { String(decoding: UnsafeBufferPointer(rebasing: buffer[$0]), as: UTF8.self) } ?? "-"
            }
            var client = connection.clientAddress
            if settings.trustForwardedHeaders, let forwarded = head.forwardedForRange,
                let first = text(forwarded).split(separator: ",").first
            {
                client = first.trimmingSpacesAndTabs()
            }
            accessLog.append(
                AccessLog.Entry(
                    client: client,
                    host: text(head.hostRange),
                    method: head.method == .unknown ? text(head.methodRange) : head.method.name,
                    target: text(head.targetRange),
                    status: status,
                    bytes: bytes,
                    userAgent: text(head.userAgentRange),
                    durationMicros: duration(connection)
                ),
                unixTime: wallTime
            )
        }
    }

    /// A request refused before it could be routed (malformed, too large, too slow).
    func recordRejected(_ connection: Connection, status: Int, bytes: Int) {
        pendingStats.count(LoopStats.RequestKey(site: "-", pathClass: .other, status: status), bytes: bytes)
        guard settings.accessLog else { return }
        accessLog.append(
            AccessLog.Entry(
                client: connection.clientAddress,
                host: "-",
                method: "-",
                target: "-",
                status: status,
                bytes: bytes,
                userAgent: "-",
                durationMicros: duration(connection)
            ),
            unixTime: Posix.unixTime()
        )
    }

    /// Adds what this batch counted to the loop's shared counters (read by `/metrics`).
    func publishStats() {
        if pendingStats.publish(into: stats.stats) { state.activity.add(1, ordering: .relaxed) }
    }

    private func duration(_ connection: Connection) -> Int64 {
        connection.machine.requestStartedAt.map { max(0, Posix.monotonicMicroseconds() - $0) } ?? 0
    }
}
