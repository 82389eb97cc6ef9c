public import FetchRecords

/// The hosts table: version, last change, the last Apple and Google fetch and whether it got the current
/// version, findings, certificate expiry; a search box and pages.
public enum HostIndexPage {
    public struct Row: Sendable {
        public var host: String
        public var status: HostStatus
        public var findings: Int
        public var certificateExpiry: Int?
        /// The certificate comes from the local CA of `aasa-server dev`: Apple's CDN rejects it.
        public var devCertificate: Bool

        public init(host: String, status: HostStatus, findings: Int, certificateExpiry: Int?, devCertificate: Bool = false) {
            self.host = host
            self.status = status
            self.findings = findings + (devCertificate ? 1 : 0)
            self.certificateExpiry = certificateExpiry
            self.devCertificate = devCertificate
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
        public var summary: Summary

        public init(rows: [Row], query: String, page: Int, hasMore: Bool, hostCount: Int, generation: Int, summary: Summary = Summary()) {
            self.rows = rows
            self.query = query
            self.page = page
            self.hasMore = hasMore
            self.hostCount = hostCount
            self.generation = generation
            self.summary = summary
        }
    }

    /// What an operator looks for first: has Apple the current version, and is a certificate about to fail.
    public struct Summary: Sendable {
        /// Hosts whose last fetch by Apple's CDN got the version served now, or an earlier one.
        public var appleCurrent = 0
        public var appleEarlier = 0
        /// Certificate files expiring within 21 days (or expired), and those from the dev CA.
        public var certificatesExpiring = 0
        public var devCertificates = 0
        /// The server keeps short links (a link store and a site with links): the form is offered.
        public var shortLinks = false

        public init(
            appleCurrent: Int = 0,
            appleEarlier: Int = 0,
            certificatesExpiring: Int = 0,
            devCertificates: Int = 0,
            shortLinks: Bool = false
        ) {
            self.appleCurrent = appleCurrent
            self.appleEarlier = appleEarlier
            self.certificatesExpiring = certificatesExpiring
            self.devCertificates = devCertificates
            self.shortLinks = shortLinks
        }
    }

    public static let pageSize = 50

    public static func html(_ listing: Listing, now: Int) -> String {
        var body = """
            <h1>Hosts</h1>
            \(summaryHTML(listing))
            <form class="search" method="get" action="/console">
            <input type="search" name="q" value="\(HTML.escape(listing.query))" placeholder="part of a host name" aria-label="search hosts">
            <button type="submit">Search</button></form>

            """
        if listing.rows.isEmpty {
            body += "<p class=\"none\">No host matches \"\(HTML.escape(listing.query))\".</p>\n"
        } else {
            body += """
                <div class="table"><table><thead><tr><th>Host</th><th class="optional wide">Version</th><th class="optional wide">Changed</th>
                <th>Apple</th><th>Google</th><th class="optional">Findings</th><th class="optional">Certificate</th></tr></thead><tbody>

                """
            for row in listing.rows {
                let aasa = row.status.current[.aasa] ?? row.status.current[.assetLinks]
                body += "<tr><td class=\"host\"><a href=\"/console/host/\(HTML.component(row.host))\">\(breakableHost(row.host))</a></td>"
                body += "<td class=\"optional wide\"><code>\(HTML.escape(aasa.map { String($0.version.prefix(8)) } ?? "—"))</code></td>"
                body += "<td class=\"optional wide\">\(aasa.map { HTML.escape(HostStatus.ago(now - $0.since)) } ?? "—")</td>"
                body += "<td>\(fetchCell(row.status, [.appleCDN, .appleDevice], now: now))</td>"
                body += "<td>\(fetchCell(row.status, [.googleVerifier], now: now))</td>"
                body += "<td class=\"optional\">\(row.findings == 0 ? "<span class=\"ok\">none</span>" : "\(row.findings)")</td>"
                let certificate =
                    row.devCertificate
                    ? "<span class=\"stale\">dev CA: Apple's CDN rejects it</span>"
                    : row.certificateExpiry.map { expiry(now: now, $0) } ?? "—"
                body += "<td class=\"optional\">\(certificate)</td></tr>\n"
            }
            body += "</tbody></table></div>\n"
        }
        let query = listing.query.isEmpty ? "" : "q=\(HTML.component(listing.query))&amp;"
        body += "<nav class=\"pages\">"
        body += listing.page > 1 ? "<a rel=\"prev\" href=\"/console?\(query)page=\(listing.page - 1)\">← previous</a>" : "<span></span>"
        body += "<span>page \(listing.page)</span>"
        body += listing.hasMore ? "<a rel=\"next\" href=\"/console?\(query)page=\(listing.page + 1)\">next →</a>" : "<span></span>"
        body += "</nav>\n"
        return ConsolePage.frame(title: "Hosts", body: body)
    }

    /// A host name that a narrow column breaks after a dot, never inside a label.
    static func breakableHost(_ host: String) -> String {
        HTML.escape(host).split(separator: ".", omittingEmptySubsequences: false).joined(separator: ".<wbr>")
    }

    static func summaryHTML(_ listing: Listing) -> String {
        let summary = listing.summary
        let fetched = summary.appleCurrent + summary.appleEarlier
        var items = [
            "<li><strong>\(listing.hostCount)</strong> host\(listing.hostCount == 1 ? "" : "s") served (config generation \(listing.generation))</li>",
            "<li>Apple's CDN has the current version for <strong class=\"ok\">\(summary.appleCurrent)</strong>, an earlier one for "
                + "<strong class=\"\(summary.appleEarlier > 0 ? "stale" : "ok")\">\(summary.appleEarlier)</strong>; "
                + "\(max(0, listing.hostCount - fetched)) not fetched by it yet</li>",
        ]
        if summary.certificatesExpiring > 0 || summary.devCertificates > 0 {
            var parts: [String] = []
            if summary.certificatesExpiring > 0 { parts.append("\(summary.certificatesExpiring) expiring within 21 days or expired") }
            if summary.devCertificates > 0 { parts.append("\(summary.devCertificates) from the dev CA, which Apple's CDN rejects") }
            items.append("<li class=\"stale\">Certificate files: \(parts.joined(separator: "; "))</li>")
        } else {
            items.append("<li>Certificate files: none expiring within 21 days</li>")
        }
        if summary.shortLinks {
            items.append(
                "<li>Short links: <a href=\"\(LinkFormPage.path)\">create one</a>; a link's numbers are at /console/link/HOST/SUFFIX</li>"
            )
        }
        return "<ul class=\"summary\">" + items.joined() + "</ul>"
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
