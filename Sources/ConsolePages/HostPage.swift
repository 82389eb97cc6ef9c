public import FetchRecords

/// One host: the document served, its findings, a timeline of versions and fetches (SVG drawn here), and
/// a `match` form.
public enum HostPage {
    public struct Content: Sendable {
        public var status: HostStatus
        /// The AASA as served, pretty-printed (nil when the host serves none).
        public var document: String?
        public var assetLinks: String?
        /// `severity: message [rule]` lines.
        public var findings: [(severity: String, text: String)]
        /// The URL the match form was given, and the answer.
        public var match: (url: String, answer: String)?
        /// A link site's rules, one line each (empty: the host has no link paths).
        public var linkRules: [String]
        /// For the URL of the match form on a link site: which rule decided, and each visitor's answer.
        public var linkFlow: (decidedBy: String, answers: [(visitor: String, answer: String)])?

        public init(
            status: HostStatus,
            document: String?,
            assetLinks: String?,
            findings: [(severity: String, text: String)],
            match: (url: String, answer: String)?,
            linkRules: [String] = [],
            linkFlow: (decidedBy: String, answers: [(visitor: String, answer: String)])? = nil
        ) {
            self.status = status
            self.document = document
            self.assetLinks = assetLinks
            self.findings = findings
            self.match = match
            self.linkRules = linkRules
            self.linkFlow = linkFlow
        }
    }

    public static func html(_ content: Content, now: Int) -> String {
        let host = content.status.host
        var body = "<h1>\(HTML.escape(host))</h1>\n<ul>\n"
        for sentence in content.status.sentences(now: now) { body += "<li>\(HTML.escape(sentence))</li>\n" }
        body += "</ul>\n<h2>Timeline</h2>\n<div class=\"timeline\">" + Timeline.svg(content.status, now: now) + "</div>\n"
        body += Timeline.legend(content.status)
        body += """
            <h2>Which app opens a URL</h2>
            <form class="search" method="get" action="/console/host/\(HTML.component(host))">
            <input type="search" name="url" value="\(HTML.escape(content.match?.url ?? "https://\(host)/"))" aria-label="URL to match">
            <button type="submit">Match</button></form>

            """
        if let match = content.match { body += "<p class=\"match\">\(HTML.escape(match.answer))</p>\n" }
        if let flow = content.linkFlow {
            body += "<p class=\"match\">Without the app, decided by \(HTML.escape(flow.decidedBy)):</p>\n<ul class=\"flow\">\n"
            for answer in flow.answers { body += "<li>\(HTML.escape(answer.visitor)): \(HTML.escape(answer.answer))</li>\n" }
            body += "</ul>\n"
        }
        if !content.linkRules.isEmpty {
            body += "<h2>Link rules</h2>\n<ol class=\"rules\">\n"
            for rule in content.linkRules { body += "<li>\(HTML.escape(rule))</li>\n" }
            body += "</ol>\n"
        }
        body += "<h2>Findings</h2>\n"
        if content.findings.isEmpty {
            body += "<p class=\"ok\">No findings.</p>\n"
        } else {
            body += "<ul class=\"findings\">\n"
            for finding in content.findings {
                body +=
                    "<li class=\"\(HTML.escape(finding.severity))\">\(HTML.escape(finding.severity)): \(HTML.escape(finding.text))</li>\n"
            }
            body += "</ul>\n"
        }
        if let document = content.document {
            body += "<h2>apple-app-site-association</h2>\n<pre>\(HTML.escape(document))</pre>\n"
        }
        if let assetLinks = content.assetLinks {
            body += "<h2>assetlinks.json</h2>\n<pre>\(HTML.escape(assetLinks))</pre>\n"
        }
        return ConsolePage.frame(title: host, body: body)
    }
}

/// Versions and fetches on one time axis: a band per AASA version, a row of dots per fetcher — green when
/// the fetch got the version served now, orange for an earlier one, red when no document was served.
enum Timeline {
    static let width = 720
    static let rowHeight = 26

    /// What the colours mean and which version each band is, as text a phone shows (an SVG tooltip it cannot).
    static func legend(_ status: HostStatus) -> String {
        var html = "<ul class=\"legend\"><li><span class=\"dot current\"></span>a fetch that got the version served now</li>"
        html += "<li><span class=\"dot earlier\"></span>an earlier version</li>"
        html += "<li><span class=\"dot failed\"></span>no document (not a 200)</li></ul>\n"
        let versions = status.history.versions.filter { $0.document == .aasa }
        if !versions.isEmpty {
            html += "<ol class=\"versions\">"
            for (index, version) in versions.enumerated() {
                let band = index % 2 == 0 ? "band-a" : "band-b"
                html += "<li><span class=\"band \(band)\"></span>version <code>\(HTML.escape(String(version.version.prefix(8))))</code> "
                html += "from \(HTML.escape(HostStatus.time(version.since)))</li>"
            }
            html += "</ol>\n"
        }
        return html
    }

    static func svg(_ status: HostStatus, now: Int) -> String {
        let versions =
            status.history.versions.filter { $0.document == .aasa } + status.history.versions.filter { $0.document == .assetLinks }
        let fetches = status.history.fetches
        let times = versions.map(\.since) + fetches.map(\.time) + [now]
        let start = times.min() ?? now
        let span = max(1, now - start)
        let left = 150
        let plot = width - left - 10
        func x(_ time: Int) -> Int { left + Int(Double(max(0, time - start)) / Double(span) * Double(plot)) }
        let rows = Fetcher.allCases
        let height = 30 + rowHeight * (rows.count + 1)
        var svg = "<svg class=\"timeline\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"versions and fetches over time\">\n"
        // Version bands on the first row: each lasts until the next of the same document.
        for (index, version) in versions.enumerated() where version.document == .aasa {
            let next = versions[(index + 1)...].first { $0.document == .aasa }?.since ?? now
            let shade = index % 2 == 0 ? "#0a58ca" : "#6f42c1"
            svg +=
                "<rect x=\"\(x(version.since))\" y=\"8\" width=\"\(max(2, x(next) - x(version.since)))\" height=\"14\" fill=\"\(shade)\" opacity=\".35\">"
            svg += "<title>version \(HTML.escape(version.version)) from \(HTML.escape(HostStatus.time(version.since)))</title></rect>\n"
        }
        svg += "<text x=\"0\" y=\"20\" font-size=\"12\" fill=\"currentColor\">AASA versions</text>\n"
        for (row, fetcher) in rows.enumerated() {
            let y = 30 + rowHeight * (row + 1) - 8
            svg += "<text x=\"0\" y=\"\(y + 4)\" font-size=\"12\" fill=\"currentColor\">\(HTML.escape(fetcher.shortName))</text>\n"
            svg += "<line x1=\"\(left)\" x2=\"\(width - 10)\" y1=\"\(y)\" y2=\"\(y)\" stroke=\"#d0d7de\"/>\n"
            for fetch in fetches where fetch.fetcher == fetcher {
                let current = status.current[fetch.document]?.version == fetch.version
                let fill = fetch.status != 200 ? "#cf222e" : current ? "#1a7f37" : "#b35900"
                svg += "<circle cx=\"\(x(fetch.time))\" cy=\"\(y)\" r=\"5\" fill=\"\(fill)\"><title>"
                svg += HTML.escape("\(HostStatus.time(fetch.time)): \(fetch.status), version \(fetch.version), from \(fetch.client)")
                svg += "</title></circle>\n"
            }
        }
        svg +=
            "<text x=\"\(left)\" y=\"\(height - 4)\" font-size=\"11\" fill=\"currentColor\">\(HTML.escape(HostStatus.time(start)))</text>\n"
        svg += "<text x=\"\(width - 10)\" y=\"\(height - 4)\" font-size=\"11\" text-anchor=\"end\" fill=\"currentColor\">now</text>\n"
        return svg + "</svg>\n"
    }
}
