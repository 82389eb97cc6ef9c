import AASA
import FetchRecords
import HTTP1
import Posix
import Support
import Synchronization

/// Counting and logging what a loop answered.
extension EventLoop {
    func record(_ connection: Connection, _ head: RequestHead, status: Int, bytes: Int, site: String, pathClass: PathClass) {
        connection.withRequestBytes { buffer in
            // Only document requests are looked at: a few byte comparisons for those, nothing for others.
            // A check run says it is one: its AASA-Bot User-Agent is a test of the server, not Apple.
            let fetcher =
                (pathClass == .aasa || pathClass == .assetLinks) && !head.isCheckProbe
                ? head.userAgentRange.flatMap { Fetcher.classify(UnsafeBufferPointer(rebasing: buffer[$0])) } : nil
            let wallTime = fetcher != nil || settings.accessLog ? Posix.unixTime() : 0
            pendingStats.count(site: site, pathClass: pathClass, status: status, bytes: bytes)
            if let fetcher {
                let (address, source) = fetchingClient(connection, head, buffer)
                let origin = settings.fetcherNetworks.origin(of: fetcher, from: address, source: source)
                let isBot = pathClass == .aasa && fetcher == .appleCDN
                let isGoogle = pathClass == .assetLinks && fetcher == .googleVerifier
                if isBot || isGoogle {
                    pendingStats.add { stats in
                        if origin != .verified {
                            if isBot { stats.unverifiedBotFetches += 1 } else { stats.unverifiedGoogleFetches += 1 }
                        } else if isBot {
                            stats.botFetches[site, default: 0] += 1
                            stats.botLastFetch[site] = wallTime
                        } else {
                            stats.googleFetches[site, default: 0] += 1
                            stats.googleLastFetch[site] = wallTime
                        }
                    }
                }
                if let fetch = fetchRecord(
                    fetcher,
                    origin: origin,
                    client: address,
                    head,
                    buffer,
                    status: status,
                    bytes: bytes,
                    time: wallTime
                ) {
                    pendingStats.add { $0.fetches.append(fetch) }
                    state.fetchesWaiting.add(1, ordering: .relaxed)
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

    /// A fetch by a known fetcher of a host the config serves (a Host header nobody serves is not kept:
    /// records must not grow with what clients make up), with the version it was answered.
    /// The address a fetch is checked against, and how it was learned: the PROXY header's, else the last
    /// X-Forwarded-For entry when forwarded headers are trusted (the one the trusted proxy wrote), else the peer.
    private func fetchingClient(
        _ connection: Connection,
        _ head: RequestHead,
        _ buffer: UnsafeBufferPointer<UInt8>
    ) -> (address: String, source: ClientAddressSource) {
        if let proxied = connection.machine.proxiedClient { return (proxied, .proxyProtocol) }
        if settings.trustForwardedHeaders, let forwarded = head.forwardedForRange,
            let last = String(decoding: UnsafeBufferPointer(rebasing: buffer[forwarded]), as: UTF8.self).split(separator: ",").last
        {
            return (last.trimmingSpacesAndTabs(), .forwardedFor)
        }
        return (connection.peer.description, .peer)
    }

    private func fetchRecord(
        _ fetcher: Fetcher,
        origin: FetchOrigin,
        client: String,
        _ head: RequestHead,
        _ buffer: UnsafeBufferPointer<UInt8>,
        status: Int,
        bytes: Int,
        time: Double
    ) -> FetchRecord? {
        guard let hostRange = head.hostRange else { return nil }
        let host = HostTable<Int>.normalize(bytes: UnsafeBufferPointer(rebasing: buffer[hostRange]))
        let path = String(decoding: UnsafeBufferPointer(rebasing: buffer[head.pathRange]), as: UTF8.self)
        let document: DocumentKind = path.hasSuffix("assetlinks.json") ? .assetLinks : .aasa
        guard snapshot.hosts.lookup(normalized: host) != nil else { return nil }
        let version = status == 200 ? snapshot.version(of: host, document)?.version ?? "" : ""
        return FetchRecord(
            time: Int(time * 1000),
            host: host,
            fetcher: fetcher,
            path: path,
            status: status,
            bytes: bytes,
            version: version,
            client: client,
            origin: origin
        )
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
