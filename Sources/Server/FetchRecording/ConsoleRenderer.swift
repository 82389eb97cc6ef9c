import AASA
import ConsolePages
import FetchRecords
import HTTP1
import Links
import TLS

/// The admin listener's console: gathers what the pure pages show from the generation in force and the
/// fetch log. Searching a million hosts compares bytes, allocates nothing per host, and stops once the
/// page is full.
enum ConsoleRenderer {
    struct Answer {
        var status: Int
        var contentType: String
        var body: [UInt8]
    }

    /// A page that could not be put together from the generation in force: that request gets a 500 and
    /// the server goes on.
    struct Failure: Error, Equatable {
        var reason: String
    }

    /// `shortLinks`: the server keeps short links (its console offers the form for a new one).
    static func answer(
        path: String,
        query: String,
        log: FetchLog,
        snapshot: Snapshot,
        now: Int,
        shortLinks: Bool = false
    ) throws(Failure) -> Answer? {
        let parameters = HTML.query(query)
        if path == ConsolePage.stylesheetPath {
            return Answer(status: 200, contentType: "text/css; charset=utf-8", body: Array(ConsolePage.stylesheet.utf8))
        }
        if path == ConsolePage.iconPath {
            return Answer(status: 200, contentType: "image/svg+xml", body: Array(ConsolePage.icon.utf8))
        }
        if path == "/console" || path == "/console/" {
            let page = max(1, min(Int(parameters["page"] ?? "1") ?? 1, 1_000_000))
            var listing = try hostListing(query: parameters["q"] ?? "", page: page, log: log, snapshot: snapshot, now: now)
            listing.summary.shortLinks = shortLinks
            return html(HostIndexPage.html(listing, now: now))
        }
        let prefix = "/console/host/"
        guard path.hasPrefix(prefix) else { return nil }
        let host = HostTable<Int>.normalize(HTML.formValue(path.dropFirst(prefix.count)))
        guard let position = snapshot.hosts.lookup(normalized: host) else { return nil }
        let site = try responses(at: position, for: host, in: snapshot)
        // Decoded from the pretty form the page shows, so "(line 12)" in an answer is line 12 of that.
        let document = site.servesApple ? pretty(Array(UnsafeRawBufferPointer(site.identity.bodyBytes))) : nil
        let assetLinks = site.assetLinks.map { Array(UnsafeRawBufferPointer($0.identity.bodyBytes)) }
        var findings: [(severity: String, text: String)] = []
        var matchAnswer: (url: String, answer: String)?
        if snapshot.tls?.isFromDevAuthority(forServerName: host) == true {
            findings.append(
                (
                    "error",
                    "the certificate for \(host) comes from the local CA of aasa-server dev: only devices in developer mode that "
                        + "trust it accept it; Apple's CDN rejects it, so every other install gets no file. Use a certificate from a "
                        + "public CA [tls.dev-certificate]"
                )
            )
        }
        if let document {
            let decoded = AASADecoder.decode(Array(document.utf8))
            var found = decoded.diagnostics
            if let model = decoded.document {
                found += AASAValidator.validate(model)
                if let given = parameters["url"], !given.isEmpty {
                    matchAnswer = (given, matchAnswerText(given, host: host, model: model, snapshot: snapshot))
                }
            }
            findings += found.sortedForDisplay().map { ($0.severity.rawValue, "\($0.message) [\($0.rule)]") }
        }
        var linkRules: [String] = []
        var linkFlow: (decidedBy: String, answers: [(visitor: String, answer: String)])?
        if let links = site.links?.links {
            linkRules = links.rules.map { LinkPrediction.summary($0, app: links.app) }
            if let given = parameters["url"], !given.isEmpty {
                let url = MatchURL(given.hasPrefix("/") ? "https://\(host)\(given)" : given)
                if url.host.map(HostTable<Int>.normalize) ?? host == host {
                    let prediction = LinkPrediction.predict(links, siteHosts: site.hosts, host: host, url: url)
                    linkFlow = (prediction.decidedBy, prediction.answers)
                }
            }
        }
        let content = HostPage.Content(
            status: log.status(host, snapshot: snapshot),
            document: document,
            assetLinks: assetLinks.map(pretty),
            findings: findings,
            match: matchAnswer,
            linkRules: linkRules,
            linkFlow: linkFlow
        )
        return html(HostPage.html(content, now: now))
    }

    /// The match form's answer on `host`'s page: a bare path is this host's; a URL of another host is
    /// answered for that host's own file, never this one's.
    static func matchAnswerText(_ given: String, host: String, model: AASADocument, snapshot: Snapshot) -> String {
        let url = MatchURL(given.hasPrefix("/") ? "https://\(host)\(given)" : given)
        if Matcher.whyNotALink(url) == nil, let other = url.host.map(HostTable<Int>.normalize), other != host {
            guard let position = snapshot.hosts.lookup(normalized: other) else {
                return "\(given): no site serves \(other), so it opens no app (this page is \(host)'s)"
            }
            if position != snapshot.hosts.lookup(normalized: host) {
                return "\(given) is a URL of \(other), which has its own file: see /console/host/\(other) (this page is \(host)'s)"
            }
        }
        let outcome = Matcher(model).match(url)
        let opens = outcome.apps.isEmpty ? "opens no app" : "opens \(outcome.apps.joined(separator: ", "))"
        return "\(url.text) \(opens): \(outcome.reason)"
    }

    static func html(_ text: String) -> Answer { Answer(status: 200, contentType: "text/html; charset=utf-8", body: Array(text.utf8)) }

    static func pretty(_ bytes: [UInt8]) -> String {
        guard let root = JSONParser.parse(bytes, duplicateKeys: .warning).root else { return String(decoding: bytes, as: UTF8.self) }
        return JSONWriter.string(JSONOutput(root), pretty: true)
    }

    /// The hosts on `page` of those whose name contains `query`, in config order.
    static func hostListing(query: String, page: Int, log: FetchLog, snapshot: Snapshot, now: Int) throws(Failure) -> HostIndexPage.Listing
    {
        let needle = Array(query.lowercased().utf8)
        let skip = (page - 1) * HostIndexPage.pageSize
        var matched = 0
        var hosts: [(host: String, position: Int)] = []
        var hasMore = false
        search: for (position, loaded) in snapshot.layout.positioned {
            for pattern in loaded.site.hosts.patterns {
                let name: String
                switch pattern {
                case .exact(let exact): name = exact
                case .wildcard(let suffix): name = suffix
                }
                if needle.isEmpty || contains(name, needle) || (pattern.isWildcard && contains("*.", needle)) {
                    if matched >= skip + HostIndexPage.pageSize {
                        hasMore = true
                        break search
                    }
                    if matched >= skip { hosts.append((pattern.description, position)) }
                    matched += 1
                }
            }
        }
        var rows: [HostIndexPage.Row] = []
        for entry in hosts {
            let responses = try responses(at: entry.position, for: entry.host, in: snapshot)
            var findings = 0
            if responses.servesApple,
                let document = AASADecoder.decode(Array(UnsafeRawBufferPointer(responses.identity.bodyBytes))).document
            {
                findings = AASAValidator.validate(document).count
            }
            rows.append(
                HostIndexPage.Row(
                    host: entry.host,
                    status: log.status(entry.host, snapshot: snapshot),
                    findings: findings,
                    certificateExpiry: snapshot.tls?.expiry(forServerName: entry.host),
                    devCertificate: snapshot.tls?.isFromDevAuthority(forServerName: entry.host) ?? false
                )
            )
        }
        return HostIndexPage.Listing(
            rows: rows,
            query: query,
            page: page,
            hasMore: hasMore,
            hostCount: snapshot.layout.hostCount,
            generation: snapshot.generation,
            summary: summary(log: log, snapshot: snapshot, now: now)
        )
    }

    /// `now`: Unix milliseconds.
    static func summary(log: FetchLog, snapshot: Snapshot, now: Int) -> HostIndexPage.Summary {
        let apple = log.appleSummary(snapshot: snapshot)
        let nowSeconds = now / 1000
        let files = snapshot.tls?.fileCertificateExpiries ?? []
        return HostIndexPage.Summary(
            appleCurrent: apple.current,
            appleEarlier: apple.earlier,
            certificatesExpiring: files.count { ($0.notAfter ?? Int.max) < nowSeconds + 21 * 86_400 },
            devCertificates: snapshot.tls?.devAuthorityCertificateCount ?? 0
        )
    }

    private static func responses(at position: Int, for host: String, in snapshot: Snapshot) throws(Failure) -> SiteResponses {
        guard let responses = snapshot.siteIfPresent(at: position) else {
            throw Failure(reason: "no site at position \(position) for \(host) in generation \(snapshot.generation)")
        }
        return responses
    }

    /// Byte search in a host name, without copying it.
    static func contains(_ name: String, _ needle: [UInt8]) -> Bool {
        var name = name
        return name.withUTF8 { haystack in
            guard haystack.count >= needle.count else { return false }
            outer: for start in 0...(haystack.count - needle.count) {
                for offset in 0..<needle.count where haystack[start + offset] != needle[offset] { continue outer }
                return true
            }
            return false
        }
    }
}
