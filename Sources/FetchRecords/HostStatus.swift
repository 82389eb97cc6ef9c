public import AASA
import Support

/// What is known about one host: the version served now (from the server, or the last one recorded),
/// what the server sends as Cache-Control, and its history.
public struct HostStatus: Sendable {
    public var host: String
    /// The version served now, per document, with when it started being served.
    public var current: [DocumentKind: VersionRecord]
    public var cacheControl: String?
    public var history: HostHistory

    public init(host: String, current: [DocumentKind: VersionRecord], cacheControl: String?, history: HostHistory) {
        self.host = host
        self.current = current
        self.cacheControl = cacheControl
        self.history = history
    }

    /// From records alone (a state directory): the current version is the last one recorded.
    public init(host: String, history: HostHistory) {
        var current: [DocumentKind: VersionRecord] = [:]
        for document in DocumentKind.allCases { current[document] = history.currentVersion(document) }
        self.init(host: host, current: current, cacheControl: nil, history: history)
    }

    /// Per fetcher of a document this host serves: its last fetch, and whether it got the current version.
    public struct FetcherState: Sendable {
        public var fetcher: Fetcher
        public var last: FetchRecord?
        /// Nil when it has not fetched, or no version is known.
        public var gotCurrent: Bool?
    }

    public var fetchers: [FetcherState] {
        Fetcher.allCases.compactMap { fetcher in
            let last = history.lastFetch(by: fetcher)
            let current = self.current[fetcher.document]
            // Only documents the host serves (or fetchers that came anyway) are worth a line.
            guard last != nil || current != nil else { return nil }
            let gotCurrent = last.flatMap { fetch in current.map { $0.version == fetch.version } }
            return FetcherState(fetcher: fetcher, last: last, gotCurrent: gotCurrent)
        }
    }

    /// The answer in sentences, as `status` prints it.
    public func sentences(now: Int) -> [String] {
        var lines: [String] = []
        for document in DocumentKind.allCases {
            guard let current = current[document] else { continue }
            lines.append(
                "\(document.fileName): version \(current.version), served since \(Self.time(current.since)) (\(Self.ago(now - current.since)))"
            )
        }
        if current.isEmpty { lines.append("no document version known for \(host)") }
        for state in fetchers {
            let current = self.current[state.fetcher.document]
            guard let last = state.last else {
                let since = current.map { ", served since \(Self.time($0.since))," } ?? ""
                lines.append(
                    "\(state.fetcher.displayName) has not fetched \(state.fetcher.document.fileName) yet; the current version\(since) is waiting for it"
                )
                continue
            }
            var line = "\(state.fetcher.displayName) last fetched at \(Self.time(last.time)) and got "
            if last.status != 200 {
                line += "status \(last.status), no document"
            } else if state.gotCurrent == true {
                line += "the current version"
            } else if let current {
                let known = history.versions.contains { $0.document == current.document && $0.version == last.version }
                line += known ? "an earlier version (\(last.version))" : "version \(last.version)"
                line += "; the current one, served since \(Self.time(current.since)), has not been fetched by it yet"
            } else {
                line += "version \(last.version)"
            }
            lines.append(line)
        }
        for fetcher in Fetcher.allCases {
            guard let claim = history.lastClaim(by: fetcher) else { continue }
            // Only a claim newer than the last real fetch is news; older ones are history (in --json).
            if let real = history.lastFetch(by: fetcher), real.time >= claim.time { continue }
            lines.append(Self.claimSentence(claim))
        }
        if let cacheControl, let aasa = current[.aasa] {
            lines.append(
                "the server sends Cache-Control: \(cacheControl); the document changed \(Self.ago(now - aasa.since)). Apple's CDN "
                    + "refetches on its own schedule (typically within a day or two, then about weekly) and cannot be told to refresh"
            )
        }
        return lines
    }

    /// What a fetch that did not come from its fetcher's network says, and what would make it checkable.
    public static func claimSentence(_ claim: FetchRecord) -> String {
        let who = claim.fetcher.displayName
        let start = "a client claiming to be \(who) fetched \(claim.document.fileName) at \(time(claim.time)) from \(claim.client)"
        switch claim.origin {
        case .unverifiable:
            return start
                + ", an address of this machine or a private network, so a proxy's: not counted as \(who)'s. To check the "
                + "real address, set \"proxyProtocol\": true on the listener (TCP load balancers) or \"trustForwardedHeaders\": "
                + "true (HTTP proxies that set X-Forwarded-For)"
        case .claimed, .verified, .device:
            let networks =
                claim.fetcher == .googleVerifier
                ? "Google's network (server.fetcherNetworks.google, or a reverse DNS name in google.com or googlebot.com)"
                : "Apple's network (server.fetcherNetworks.apple, 17.0.0.0/8 by default)"
            return start + ", outside \(networks): not counted as \(who)'s"
        }
    }

    public var json: JSONOutput {
        var members: [(String, JSONOutput)] = [("host", .string(host))]
        members.append(
            (
                "current",
                .object(
                    DocumentKind.allCases.compactMap { document in current[document].map { (document.rawValue, Self.versionJSON($0)) } }
                )
            )
        )
        if let cacheControl { members.append(("cacheControl", .string(cacheControl))) }
        members.append(
            (
                "fetchers",
                .object(
                    fetchers.map { state in
                        var fields: [(String, JSONOutput)] = []
                        if let last = state.last { fields.append(("last", RecordLine.json(last))) }
                        if let current = state.gotCurrent { fields.append(("gotCurrent", .bool(current))) }
                        return (state.fetcher.rawValue, .object(fields))
                    }
                )
            )
        )
        members.append(("versions", .array(history.versions.map(RecordLine.json))))
        members.append(("fetches", .array(history.fetches.map(RecordLine.json))))
        return .object(members)
    }

    static func versionJSON(_ version: VersionRecord) -> JSONOutput {
        .object([("version", .string(version.version)), ("since", .int(version.since))])
    }

    /// Reads what ``json`` wrote (the admin listener's `/status` as `status --admin` reads it).
    public static func parse(_ node: JSONNode) -> HostStatus? {
        guard let host = node["host"]?.stringValue else { return nil }
        var history = HostHistory()
        let limit = Int.max
        for item in node["versions"]?.arrayValue ?? [] {
            if case .version(let version)? = RecordLine.entry(item) { history.add(version, limit: limit) }
        }
        for item in node["fetches"]?.arrayValue ?? [] {
            if case .fetch(let fetch)? = RecordLine.entry(item) { history.add(fetch, limit: limit) }
        }
        var current: [DocumentKind: VersionRecord] = [:]
        for member in node["current"]?.objectValue ?? [] {
            guard let document = DocumentKind(rawValue: member.key), let version = member.value["version"]?.stringValue,
                case .number(let since)? = member.value["since"]?.value, let sinceValue = Int(since)
            else { continue }
            current[document] = VersionRecord(host: host, document: document, version: version, since: sinceValue)
        }
        return HostStatus(host: host, current: current, cacheControl: node["cacheControl"]?.stringValue, history: history)
    }

    /// `2026-12-01 09:40:12 UTC`
    public static func time(_ milliseconds: Int) -> String {
        let civil = CivilTime(unixSeconds: milliseconds / 1000)
        return "\(civil.isoDay) \(civil.isoTimeOfDay) UTC"
    }

    /// `3 min ago`, `2 h ago`, `4 days ago`.
    public static func ago(_ milliseconds: Int) -> String {
        let seconds = max(0, milliseconds / 1000)
        if seconds < 90 { return "\(seconds) s ago" }
        if seconds < 90 * 60 { return "\(seconds / 60) min ago" }
        if seconds < 48 * 3600 { return "\(seconds / 3600) h ago" }
        return "\(seconds / 86_400) days ago"
    }
}
