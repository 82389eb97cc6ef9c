import AASA
import FetchRecords

/// The admin listener's `/status` answers.
enum StatusRenderer {
    /// Every recorded host (`host` nil), or one host the config serves (recorded or not); nil for a
    /// host the config does not serve.
    static func json(host: String?, log: FetchLog, snapshot: Snapshot) -> [UInt8]? {
        if let host {
            guard snapshot.hosts.lookup(normalized: host) != nil else { return nil }
            return JSONWriter.bytes(
                .object([("generation", .int(snapshot.generation)), ("host", log.status(host, snapshot: snapshot).json)])
            )
        }
        let ledger = log.current
        let hosts = ledger.sortedHosts.map { log.status($0, snapshot: snapshot).json }
        return JSONWriter.bytes(
            .object([
                ("generation", .int(snapshot.generation)),
                (
                    "fetchers",
                    .array(
                        Fetcher.allCases.map { .object([("id", .string($0.rawValue)), ("userAgentPrefix", .string($0.userAgentPrefix))]) }
                    )
                ),
                ("hosts", .array(hosts)),
            ])
        )
    }
}
