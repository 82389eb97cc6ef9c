public import FetchRecords

/// The hosts table: version, last change, the last Apple and Google fetch and whether it got the current
/// version, findings, certificate expiry; a search box and pages.
public enum HostIndexPage {
    public struct Row: Sendable {
        public var host: String
        public var status: HostStatus
        public var findings: Int
        public var certificateExpiry: Int?

        public init(host: String, status: HostStatus, findings: Int, certificateExpiry: Int?) {
            self.host = host
            self.status = status
            self.findings = findings
            self.certificateExpiry = certificateExpiry
        }
    }

    public struct Listing: Sendable {
        public var rows: [Row]
        public var query: String
        public var page: Int
        public var hasMore: Bool
        /// Every host served (not only those matching).
        public var hostCount: Int
        public var generation: Int

        public init(rows: [Row], query: String, page: Int, hasMore: Bool, hostCount: Int, generation: Int) {
            self.rows = rows
            self.query = query
            self.page = page
            self.hasMore = hasMore
            self.hostCount = hostCount
            self.generation = generation
        }
    }

    public static let pageSize = 50

    public static func html(_ listing: Listing, now: Int) -> String {
        var body = """
            <h1>Hosts</h1>
            <p>\(listing.hostCount) host\(listing.hostCount == 1 ? "" : "s") served, config generation \(listing.generation).</p>
            <form class="search" method="get" action="/console">
            <input type="search" name="q" value="\(HTML.escape(listing.query))" placeholder="part of a host name" aria-label="search hosts">
            <button type="submit">Search</button></form>

            """
        if listing.rows.isEmpty {
            body += "<p class=\"none\">No host matches \"\(HTML.escape(listing.query))\".</p>\n"
        } else {
            body += """
                <table><thead><tr><th>Host</th><th class="optional">Version</th><th class="optional">Changed</th>
                <th>Apple</th><th>Google</th><th class="optional">Findings</th><th class="optional">Certificate</th></tr></thead><tbody>

                """
            for row in listing.rows {
                let aasa = row.status.current[.aasa] ?? row.status.current[.assetLinks]
                body += "<tr><td class=\"host\"><a href=\"/console/host/\(HTML.component(row.host))\">\(HTML.escape(row.host))</a></td>"
                body += "<td class=\"optional\"><code>\(HTML.escape(aasa.map { String($0.version.prefix(8)) } ?? "—"))</code></td>"
                body += "<td class=\"optional\">\(aasa.map { HTML.escape(HostStatus.ago(now - $0.since)) } ?? "—")</td>"
                body += "<td>\(fetchCell(row.status, [.appleCDN, .appleDevice], now: now))</td>"
                body += "<td>\(fetchCell(row.status, [.googleVerifier], now: now))</td>"
                body += "<td class=\"optional\">\(row.findings == 0 ? "<span class=\"ok\">none</span>" : "\(row.findings)")</td>"
                body += "<td class=\"optional\">\(row.certificateExpiry.map { expiry(now: now, $0) } ?? "—")</td></tr>\n"
            }
            body += "</tbody></table>\n"
        }
        let query = listing.query.isEmpty ? "" : "q=\(HTML.component(listing.query))&amp;"
        body += "<nav class=\"pages\">"
        body += listing.page > 1 ? "<a rel=\"prev\" href=\"/console?\(query)page=\(listing.page - 1)\">← previous</a>" : "<span></span>"
        body += "<span>page \(listing.page)</span>"
        body += listing.hasMore ? "<a rel=\"next\" href=\"/console?\(query)page=\(listing.page + 1)\">next →</a>" : "<span></span>"
        body += "</nav>\n"
        return ConsolePage.frame(title: "Hosts", body: body)
    }

    /// The most recent fetch by any of `fetchers`, and whether it got the current version.
    static func fetchCell(_ status: HostStatus, _ fetchers: [Fetcher], now: Int) -> String {
        let states = status.fetchers.filter { fetchers.contains($0.fetcher) && $0.last != nil }
        guard let latest = states.max(by: { ($0.last?.time ?? 0) < ($1.last?.time ?? 0) }), let fetch = latest.last else {
            return "<span class=\"none\">not fetched</span>"
        }
        let verdict = latest.gotCurrent == true ? "<span class=\"ok\">current</span>" : "<span class=\"stale\">earlier version</span>"
        return "\(HTML.escape(HostStatus.ago(now - fetch.time))) · \(verdict)"
    }

    static func expiry(now: Int, _ notAfter: Int) -> String {
        let days = (notAfter * 1000 - now) / 86_400_000
        let text = days < 0 ? "expired" : "\(days) days"
        return days < 21 ? "<span class=\"stale\">\(text)</span>" : text
    }
}
