import AASA
import HTTP1

/// What a host is checked against, beyond Apple's rules.
public struct CheckExpectations: Sendable {
    /// `--app`: app IDs that must be in `applinks` (and are reported for the services).
    public var apps: [String] = []
    /// `--path`: URL paths to predict (which app opens them on this host).
    public var paths: [String] = []
    /// `--config`: the document the config generates for this host, and the config's path.
    public var expectedDocument: [UInt8]?
    public var configPath: String?
    /// `--insecure`: certificate problems are reported, but do not stop the check.
    public var insecure = false
    /// `--plain-http-ok`: an `http://` target is checked on purpose (an origin behind a TLS-terminating load
    /// balancer), so it is noted, not warned about.
    public var plainHTTPIntended = false
    /// `--android`, or a config site with Android apps: fetch and check `/.well-known/assetlinks.json`.
    public var android = false
    /// False for a config site with only Android apps: its AASA paths are not its business.
    public var apple = true
    /// `--app` values that are Android package names: each must be granted App Links on the host.
    public var packages: [String] = []
    /// `--config`: the statement list the config generates for this host (nil: none, so 404 is expected).
    public var expectedAssetLinks: [UInt8]?

    public init() {}
}

/// Turns what a probe saw into findings. Pure: the same observation always gives the same findings
/// (tested without a network in `CheckEvaluationTests`).
public enum HostEvaluation {
    static let wellKnownPath = "/.well-known/apple-app-site-association"

    public static func evaluate(_ observation: HostObservation, _ expectations: CheckExpectations) -> [CheckFinding] {
        var findings = evaluateApple(observation, expectations)
        // The connection and the certificate are shared: when they failed, that finding says it all.
        if let assetLinks = observation.assetLinks, observation.failure == nil,
            !findings.contains(where: { $0.rule.hasPrefix("check.tls") || $0.rule.hasPrefix("check.certificate") && $0.severity == .error })
        {
            findings += assetLinksFindings(assetLinks, target: observation.target, expectations)
        }
        return findings
    }

    static func evaluateApple(_ observation: HostObservation, _ expectations: CheckExpectations) -> [CheckFinding] {
        var findings: [CheckFinding] = []
        let target = observation.target
        if let failure = observation.failure {
            findings.append(connectionFinding(failure, observation))
            return findings
        }
        if target.scheme == .http {
            findings.append(
                CheckFinding(
                    expectations.plainHTTPIntended ? .info : .warning,
                    "check.plain-http",
                    "checked over plain HTTP: Apple fetches only https://\(target.host)/…; use this for an origin behind a load balancer "
                        + "that terminates TLS, and check the public host over HTTPS too",
                    evidence: target.origin
                )
            )
        }
        findings.append(
            CheckFinding(
                .pass,
                "check.connection",
                "connected to \(observation.address ?? target.host)" + (observation.tlsVersion.map { " (\($0))" } ?? "")
                    + (observation.route.map { ": \($0)" } ?? "")
            )
        )
        if target.scheme == .https {
            findings += certificateFindings(observation, expectations)
            if !expectations.insecure && findings.contains(where: { $0.severity == .error }) { return findings }
        }
        guard expectations.apple, let get = observation.wellKnown else { return findings }
        let (documentFindings, document) = wellKnownFindings(get, observation)
        findings += documentFindings
        // Whatever the bot got, a browser getting something else says why (a WAF refusing AASA-Bot).
        if let browser = observation.wellKnownBrowser { findings += agentParity(bot: get, browser: browser) }
        guard let body = document else { return findings }
        if let head = observation.wellKnownHead { findings += headParity(get: get, head: head) }
        if let root = observation.rootPath { findings += rootPathFindings(root, wellKnownBody: body) }
        let decoded = AASADecoder.decode(body).document
        if let decoded {
            findings += appFindings(decoded, expectations.apps)
            findings += pathFindings(decoded, target: target, expectations.paths)
        }
        if let expected = expectations.expectedDocument {
            if let difference = JSONDifference.first(expected: expected, found: body) {
                findings.append(
                    CheckFinding(
                        .error,
                        "check.config-mismatch",
                        "the live document is not what \(expectations.configPath ?? "the config") generates for \(target.host): a stale or "
                            + "wrong deployment. Deploy the current config (or `aasa-server generate --host \(target.host)`)",
                        evidence: difference
                    )
                )
            } else {
                findings.append(
                    CheckFinding(.pass, "check.config-mismatch", "the live document is what the config generates for \(target.host)")
                )
            }
        }
        if let cdn = observation.cdn { findings += cdnFindings(cdn, originBody: body) }
        return findings
    }

    // MARK: - Android

    static let assetLinksPath = "/.well-known/assetlinks.json"

    /// The statement list as Android's verifier fetches it: 200, no redirect (it follows none),
    /// application/json, valid statements, the expected packages, and what the config generates.
    public static func assetLinksFindings(_ exchange: Exchange, target: CheckTarget, _ expectations: CheckExpectations) -> [CheckFinding] {
        guard let response = exchange.response else {
            return [
                CheckFinding(
                    .error,
                    "check.assetlinks-fetch",
                    "GET \(assetLinksPath) got no usable answer: \(exchange.failure ?? "unknown error")"
                )
            ]
        }
        let statusLine = "\(response.version) \(response.status) \(response.reason)"
        if (300..<400).contains(response.status) {
            let location = response.header("Location") ?? "(no Location header)"
            return [
                CheckFinding(
                    .error,
                    "check.assetlinks-redirect",
                    "\(assetLinksPath) redirects (\(response.status)) to \(location)\(redirectKind(location, target)); Android's verifier "
                        + "does not follow redirects, so App Links fail for this host — serve the file here with status 200",
                    evidence: "\(statusLine); Location: \(location)"
                )
            ]
        }
        guard response.status == 200 else {
            let expected = expectations.expectedAssetLinks != nil || !expectations.packages.isEmpty
            return [
                CheckFinding(
                    expected ? .error : .warning,
                    "check.assetlinks-status",
                    "\(assetLinksPath) answers \(response.status) \(response.reason)"
                        + (expected
                            ? "; Android apps are expected here, so App Links cannot verify" : "; no Android app is linked to this host"),
                    evidence: statusLine
                )
            ]
        }
        var findings = [
            CheckFinding(.pass, "check.assetlinks-status", "\(assetLinksPath) answers 200 without a redirect", evidence: statusLine)
        ]
        findings += contentTypeFindings(response).map { finding in
            var finding = finding
            finding.rule = "check.assetlinks-content-type"
            return finding
        }
        guard let body = exchange.decodedBody else {
            findings.append(CheckFinding(.error, "check.content-encoding", exchange.decodingError ?? "the body could not be decoded"))
            return findings
        }
        let subject = "https://\(target.host)\(assetLinksPath)"
        let validation = AssetLinksDecoder.validateFile(body)
        findings += validation.diagnostics.sortedForDisplay().map { CheckFinding($0, subject: subject) }
        let statements = validation.statements ?? []
        if !validation.diagnostics.hasErrors {
            let packages = Array(Set(statements.compactMap(\.package))).sorted()
            findings.append(
                CheckFinding(
                    .pass,
                    "check.assetlinks",
                    "a valid statement list: \(statements.count) statement\(statements.count == 1 ? "" : "s")"
                        + (packages.isEmpty ? "" : " for \(packages.joined(separator: ", "))")
                )
            )
        }
        for package in expectations.packages {
            if statements.contains(where: { $0.package == package && $0.relations.contains { $0.value == AssetRelation.handleAllURLs } }) {
                findings.append(
                    CheckFinding(.pass, "check.assetlinks-app", "\(package) is granted App Links (handle_all_urls) on \(target.host)")
                )
            } else {
                let listed = statements.contains { $0.package == package }
                findings.append(
                    CheckFinding(
                        .error,
                        "check.assetlinks-app",
                        listed
                            ? "\(package) is listed but not granted \(AssetRelation.handleAllURLs): its App Links will not verify"
                            : "\(package) is not in the statement list: its App Links on \(target.host) will not verify"
                    )
                )
            }
        }
        if let expected = expectations.expectedAssetLinks {
            if let difference = JSONDifference.first(expected: expected, found: body) {
                findings.append(
                    CheckFinding(
                        .error,
                        "check.assetlinks-config-mismatch",
                        "the live assetlinks.json is not what \(expectations.configPath ?? "the config") generates for \(target.host)",
                        evidence: difference
                    )
                )
            } else {
                findings.append(
                    CheckFinding(.pass, "check.assetlinks-config-mismatch", "the live assetlinks.json is what the config generates")
                )
            }
        }
        return findings
    }

    // MARK: - Connection and certificate

    static func connectionFinding(_ failure: ConnectionFailure, _ observation: HostObservation) -> CheckFinding {
        let target = observation.target
        switch failure {
        case .dns(let name, let message, let notFound):
            let given = name != target.host
            return CheckFinding(
                .error,
                "check.dns",
                !notFound
                    ? "\(name) could not be resolved: the resolver failed (\(message)); try again or check the resolver"
                    : given
                        ? "\(name), given with --connect or --resolve, does not resolve: check the name (an address works too)"
                        : "\(name) does not resolve: create its DNS record (every host in the entitlement needs one), or use --resolve/--connect to check a server before DNS points at it",
                evidence: message
            )
        case .refused(let address):
            return CheckFinding(
                .error,
                "check.refused",
                "nothing accepts connections on \(address): the server is down, or listens on another port",
                evidence: observation.route ?? "connect: connection refused"
            )
        case .timedOut(let awaiting):
            return timeoutFinding(awaiting: awaiting, observation)
        case .unreachable(let message):
            return CheckFinding(
                .error,
                "check.unreachable",
                "\(observation.address ?? target.host) cannot be reached: \(message)",
                evidence: observation.route ?? message
            )
        case .tls(let kind, let message):
            switch kind {
            case .notTLS:
                return CheckFinding(
                    .error,
                    "check.tls-not-tls",
                    "\(observation.address ?? target.host) does not speak TLS: it answered the handshake with something else (plain HTTP "
                        + "on the HTTPS port?). Apple fetches https://\(target.host)/ on port 443",
                    evidence: message
                )
            case .protocolVersion:
                return CheckFinding(
                    .error,
                    "check.tls-version",
                    "no TLS version in common: Apple's fetcher uses TLS 1.2 or 1.3; enable them on the server",
                    evidence: message
                )
            case .alert(let alert):
                return CheckFinding(
                    .error,
                    "check.tls-alert",
                    "the server refused the TLS handshake with the alert \"\(alert)\" (an SNI name it has no certificate for, or no "
                        + "cipher in common)",
                    evidence: message
                )
            case .other:
                return CheckFinding(.error, "check.tls-handshake", "the TLS handshake failed", evidence: message)
            }
        }
    }

    /// The one finding for a time limit that ran out, whichever phase it ran out in.
    static func timeoutFinding(awaiting: String, _ observation: HostObservation) -> CheckFinding {
        let hint: String
        if awaiting.hasPrefix("the TCP connection") {
            hint = "a firewall drops the packets, or nothing listens at that address"
        } else if awaiting.hasPrefix("the TLS handshake") {
            hint = "the port accepts connections but its TLS does not answer (an overloaded server or a proxy that holds the connection)"
        } else if awaiting.hasPrefix("the resolver") {
            hint = "the DNS resolver is slow or unreachable"
        } else {
            hint =
                "the connection\(observation.target.scheme == .https ? " and TLS handshake" : "") succeeded, then the server sent nothing in time (a stalled backend or application)"
        }
        return CheckFinding(
            .error,
            "check.timeout",
            "the \(HostProbe.seconds(observation.timeLimit)) s limit ran out waiting for \(awaiting): \(hint)",
            evidence: observation.address
        )
    }

    static func certificateFindings(_ observation: HostObservation, _ expectations: CheckExpectations) -> [CheckFinding] {
        guard let certificate = observation.certificate else {
            return [CheckFinding(.error, "check.certificate-untrusted", "the server sent no certificate")]
        }
        var findings: [CheckFinding] = []
        let host = observation.target.host
        let evidence =
            "subject \(certificate.subject), issuer \(certificate.issuer), names \(certificate.names.joined(separator: " ")), "
            + "valid \(day(certificate.notBefore)) to \(day(certificate.notAfter))"
        // Each problem on its own: --insecure waives trust only, never the names or the dates, which a device
        // in developer mode still requires.
        var problems: [(rule: String, message: String, waivable: Bool)] = []
        if certificate.expired {
            problems.append(
                (
                    "check.certificate-expired",
                    "the certificate expired on \(day(certificate.notAfter)); renew it (Apple's CDN and devices refuse expired certificates)",
                    false
                )
            )
        }
        if certificate.notYetValid {
            problems.append(
                (
                    "check.certificate-not-yet-valid",
                    "the certificate is not valid before \(day(certificate.notBefore)); check the clocks, or wait", false
                )
            )
        }
        if certificate.hostnameMismatch {
            problems.append(
                (
                    "check.certificate-name",
                    "the certificate's names (\(certificate.names.joined(separator: ", "))) do not include \(host); issue one that covers it",
                    false
                )
            )
        }
        if let error = certificate.verificationError, !certificate.expired, !certificate.notYetValid,
            !(certificate.hostnameMismatch && error.contains("mismatch"))
        {
            problems.append(
                (
                    "check.certificate-untrusted",
                    "the certificate chain is not trusted (\(error))"
                        + (certificate.selfSigned || certificate.issuedByDevAuthority
                            ? "; a certificate no public CA issued works only for devices in developer mode (applinks:\(host)?mode=developer)"
                            : "; send the intermediate certificates, and use a CA that Apple's devices trust"),
                    true
                )
            )
        }
        for problem in problems {
            if expectations.insecure && problem.waivable {
                findings.append(
                    CheckFinding(
                        .warning,
                        problem.rule,
                        "ignored with --insecure, but Apple's CDN would refuse it: " + problem.message,
                        evidence: evidence
                    )
                )
            } else {
                findings.append(CheckFinding(.error, problem.rule, problem.message, evidence: evidence))
            }
        }
        if certificate.issuedByDevAuthority {
            findings.append(
                CheckFinding(
                    .warning,
                    "tls.dev-certificate",
                    "this certificate was issued by the local CA of `aasa-server dev`/`dev-cert`: only devices in developer mode "
                        + "(applinks:\(host)?mode=developer) that trust that CA accept it; Apple's CDN, which fetches the file for every "
                        + "other install, rejects it. Use a certificate from a public CA for this host",
                    evidence: evidence
                )
            )
        }
        if !expectations.insecure && findings.contains(where: { $0.severity == .error }) { return findings }
        let daysLeft = (certificate.notAfter - observation.checkedAt) / 86_400
        if certificate.verificationError == nil && daysLeft < 14 {
            findings.append(
                CheckFinding(
                    .warning,
                    "check.certificate-expiring",
                    "the certificate expires on \(day(certificate.notAfter)), in \(max(0, daysLeft)) days; renew it before it does",
                    evidence: evidence
                )
            )
        } else if certificate.verificationError == nil {
            findings.append(
                CheckFinding(
                    .pass,
                    "check.certificate",
                    "trusted certificate for \(host), valid until \(day(certificate.notAfter)) (\(daysLeft) days)",
                    evidence: evidence
                )
            )
        }
        return findings
    }

    /// `2026-11-30` for a Unix time (UTC).
    static func day(_ seconds: Int) -> String {
        let text = HTTPDate.format(unixSeconds: seconds)  // "Mon, 30 Nov 2026 20:42:15 GMT"
        let parts = text.split(separator: " ")
        guard parts.count >= 4 else { return text }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let month = (months.firstIndex(of: String(parts[2])) ?? 0) + 1
        return "\(parts[3])-\(month < 10 ? "0" : "")\(month)-\(parts[1])"
    }

    // MARK: - The document

    /// Status, redirects, framing, type, encoding and the document itself; returns the decoded body when
    /// there is a document to look at.
    static func wellKnownFindings(_ get: Exchange, _ observation: HostObservation) -> ([CheckFinding], [UInt8]?) {
        let target = observation.target
        guard let response = get.response else {
            if let awaiting = get.awaiting { return ([timeoutFinding(awaiting: awaiting, observation)], nil) }
            return (
                [CheckFinding(.error, "check.fetch", "GET \(wellKnownPath) got no usable answer: \(get.failure ?? "unknown error")")], nil
            )
        }
        var findings: [CheckFinding] = []
        let statusLine = "\(response.version) \(response.status) \(response.reason)"
        if (300..<400).contains(response.status) {
            let location = response.header("Location") ?? "(no Location header)"
            findings.append(
                CheckFinding(
                    .error,
                    "check.redirect",
                    "\(wellKnownPath) redirects (\(response.status)) to \(location)\(redirectKind(location, target)); Apple's fetcher does not "
                        + "follow redirects — serve the file at https://\(target.host)\(wellKnownPath) itself, with status 200",
                    evidence: "\(statusLine); Location: \(location)"
                )
            )
            return (findings, nil)
        }
        guard response.status == 200 else {
            findings.append(
                CheckFinding(
                    .error,
                    "check.status",
                    "\(wellKnownPath) answers \(response.status) \(response.reason); it must answer 200 with the file"
                        + (response.status == 404 ? " (is the file deployed for this host? each host needs its own)" : ""),
                    evidence: statusLine
                )
            )
            return (findings, nil)
        }
        findings.append(CheckFinding(.pass, "check.status", "\(wellKnownPath) answers 200 without a redirect", evidence: statusLine))
        let typeFindings = contentTypeFindings(response)
        findings += typeFindings
        if case .contentLength(let declared) = response.framing, response.receivedBodyBytes < declared {
            findings.append(
                CheckFinding(
                    .error,
                    "check.content-length",
                    "the body was cut short: Content-Length says \(declared) bytes, \(response.receivedBodyBytes) arrived before the "
                        + "connection closed",
                    evidence: "Content-Length: \(declared)"
                )
            )
            return (findings, nil)
        }
        guard let body = get.decodedBody else {
            findings.append(
                CheckFinding(
                    .error,
                    "check.content-encoding",
                    get.decodingError ?? "the body could not be decoded",
                    evidence: response.header("Content-Encoding")
                )
            )
            return (findings, nil)
        }
        // A body that is not a document at all gets one finding saying what it is, not a JSON syntax error.
        if let what = notADocument(body, contentType: response.header("Content-Type")) {
            if typeFindings.contains(where: { $0.severity == .error }) { return (findings, nil) }
            findings.append(what)
            return (findings, nil)
        }
        let subject = "https://\(target.host)\(wellKnownPath)"
        let validation = AASAValidator.validateFile(body)
        findings += validation.diagnostics.sortedForDisplay().map { CheckFinding($0, subject: subject) }
        if !validation.diagnostics.hasErrors {
            let encoding = response.header("Content-Encoding").map { ", \($0) on the wire (\(response.body.count) bytes)" } ?? ""
            findings.append(CheckFinding(.pass, "check.document", "a valid AASA document, \(body.count) bytes\(encoding)"))
        }
        return (findings, body)
    }

    /// A gzip stream sent without `Content-Encoding`, or an HTML page: what the body is, in one finding.
    static func notADocument(_ body: [UInt8], contentType: String?) -> CheckFinding? {
        if body.starts(with: [0x1F, 0x8B]) {
            return CheckFinding(
                .error,
                "check.content-encoding",
                "the body is gzip-compressed but sent without Content-Encoding: gzip, so a fetcher reads the compressed bytes as the "
                    + "file. Send the header with the compressed body (or serve the file uncompressed); a file stored pre-compressed "
                    + "under the AASA name is the usual cause",
                evidence: "body starts with 1f 8b (gzip); Content-Encoding: none"
            )
        }
        let start = body.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }
        let opening = String(decoding: start.prefix(15), as: UTF8.self).lowercased()
        if opening.hasPrefix("<!doctype html") || opening.hasPrefix("<html") || opening.hasPrefix("<head") || opening.hasPrefix("<body") {
            return CheckFinding(
                .error,
                "check.document",
                "the body is an HTML page, not the file: a web app's catch-all or an error page answers this path. Serve the file itself",
                evidence: "Content-Type: \(contentType ?? "none"); body starts with \(String(decoding: start.prefix(40), as: UTF8.self))"
            )
        }
        return nil
    }

    /// "www ↔ apex", "http → https", "a trailing slash": the classic causes, named.
    static func redirectKind(_ location: String, _ target: CheckTarget) -> String {
        var rest = Substring(location)
        var scheme: String?
        if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") {
            scheme = rest[..<colon].lowercased()
            rest = rest[rest.index(colon, offsetBy: 3)...]
        } else if rest.hasPrefix("/") {
            return rest.hasPrefix(wellKnownPath + "/") || rest == wellKnownPath + "/" ? " (a trailing slash added)" : ""
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let path = rest.dropFirst(authority.count)
        let host = authority.split(separator: ":").first.map { $0.lowercased() } ?? ""
        if host == "www." + target.host || "www." + host == target.host {
            return " (the \(host.hasPrefix("www.") ? "apex to www" : "www to the apex") redirect)"
        }
        if scheme == "https" && target.scheme == .http && host == target.host { return " (http to https)" }
        if host == target.host && path.hasPrefix(wellKnownPath + "/") { return " (a trailing slash added)" }
        if host != target.host { return " (another host)" }
        return ""
    }

    static func contentTypeFindings(_ response: ParsedResponse) -> [CheckFinding] {
        guard let value = response.header("Content-Type") else {
            return [
                CheckFinding(
                    .warning,
                    "check.content-type",
                    "no Content-Type header; serve the file as application/json (Apple's documented type)"
                )
            ]
        }
        let type = value.split(separator: ";").first.map { String($0).trimmingSpaces().lowercased() } ?? ""
        switch type {
        case "application/json":
            return [CheckFinding(.pass, "check.content-type", "served as \(value)", evidence: "Content-Type: \(value)")]
        case "text/html":
            return [
                CheckFinding(
                    .error,
                    "check.content-type",
                    "served as text/html: usually a web app's catch-all page answering every path, not the file. Serve the file itself "
                        + "as application/json (exclude the path from the SPA fallback)",
                    evidence: "Content-Type: \(value)"
                )
            ]
        default:
            return [
                CheckFinding(
                    .warning,
                    "check.content-type",
                    "served as \(type); Apple documents application/json, and fetchers have been reported to refuse other types. "
                        + "Set Content-Type: application/json for this path",
                    evidence: "Content-Type: \(value)"
                )
            ]
        }
    }

    static func headParity(get: Exchange, head: Exchange) -> [CheckFinding] {
        guard let getResponse = get.response else { return [] }
        guard let headResponse = head.response else {
            return [CheckFinding(.warning, "check.head", "HEAD \(wellKnownPath) got no usable answer: \(head.failure ?? "unknown error")")]
        }
        if headResponse.status != getResponse.status {
            return [
                CheckFinding(
                    .error,
                    "check.head",
                    "HEAD answers \(headResponse.status) where GET answers \(getResponse.status): HEAD must give GET's status and headers "
                        + "(some fetchers and CDNs check with HEAD)",
                    evidence: "HEAD: \(headResponse.status) \(headResponse.reason); GET: \(getResponse.status) \(getResponse.reason)"
                )
            ]
        }
        var differences: [String] = []
        for name in ["Content-Type", "Content-Length", "Content-Encoding"] {
            let a = getResponse.header(name)
            let b = headResponse.header(name)
            // A HEAD answer may leave out Content-Length; a different one is a mistake.
            if a != b && !(name == "Content-Length" && b == nil) { differences.append("\(name): GET \(a ?? "none"), HEAD \(b ?? "none")") }
        }
        if !differences.isEmpty {
            return [
                CheckFinding(
                    .warning,
                    "check.head",
                    "HEAD's headers differ from GET's; HEAD must describe exactly what GET sends",
                    evidence: differences.joined(separator: "; ")
                )
            ]
        }
        return [CheckFinding(.pass, "check.head", "HEAD gives GET's status and headers")]
    }

    static func agentParity(bot: Exchange, browser: Exchange) -> [CheckFinding] {
        guard let botResponse = bot.response, let browserResponse = browser.response else { return [] }
        if botResponse.status != browserResponse.status || bot.decodedBody != browser.decodedBody {
            let what =
                botResponse.status != browserResponse.status
                ? "AASA-Bot/1.0.0 gets \(botResponse.status), a browser gets \(browserResponse.status)"
                : "AASA-Bot/1.0.0 and a browser get different bodies"
            return [
                CheckFinding(
                    .error,
                    "check.user-agent",
                    "the server treats Apple's fetcher differently from a browser (\(what)): a WAF, bot rule or CDN setting singles out "
                        + "User-Agent AASA-Bot; exempt \(wellKnownPath) from it",
                    evidence:
                        "AASA-Bot: \(botResponse.status) \(botResponse.reason); browser: \(browserResponse.status) \(browserResponse.reason)"
                )
            ]
        }
        return [CheckFinding(.pass, "check.user-agent", "Apple's fetcher and a browser get the same answer")]
    }

    static func rootPathFindings(_ root: Exchange, wellKnownBody: [UInt8]) -> [CheckFinding] {
        let path = "/apple-app-site-association"
        guard let response = root.response else {
            return [CheckFinding(.info, "check.root-path", "GET \(path) got no usable answer: \(root.failure ?? "unknown error")")]
        }
        if response.status == 404 || response.status == 410 {
            return [CheckFinding(.info, "check.root-path", "\(path) is not served (fine: iOS 9.3 and later fetch only \(wellKnownPath))")]
        }
        if (300..<400).contains(response.status) {
            let location = response.header("Location") ?? "(no Location header)"
            return [
                CheckFinding(
                    .error,
                    "check.root-path",
                    "\(path) redirects (\(response.status)) to \(location); serve the same file there with 200, or 404 — never a redirect",
                    evidence: "\(response.status) \(response.reason); Location: \(location)"
                )
            ]
        }
        guard response.status == 200 else {
            return [
                CheckFinding(
                    .warning,
                    "check.root-path",
                    "\(path) answers \(response.status) \(response.reason); serve the file there or answer 404"
                )
            ]
        }
        guard let body = root.decodedBody else {
            return [CheckFinding(.error, "check.root-path", "\(path): \(root.decodingError ?? "the body could not be decoded")")]
        }
        if let difference = JSONDifference.first(expected: wellKnownBody, found: body) {
            return [
                CheckFinding(
                    .error,
                    "check.root-path",
                    "\(path) serves a different document than \(wellKnownPath); older iOS versions read it, so serve the same file (or 404)",
                    evidence: difference
                )
            ]
        }
        return [CheckFinding(.pass, "check.root-path", "\(path) serves the same document")]
    }

    // MARK: - Apps, paths, CDN

    static func appFindings(_ document: AASADocument, _ apps: [String]) -> [CheckFinding] {
        var findings: [CheckFinding] = []
        let linked = Set((document.applinks?.details ?? []).flatMap(\.effectiveAppIDs))
        for app in apps {
            if linked.contains(app) {
                findings.append(CheckFinding(.pass, "check.app", "\(app) is in applinks"))
            } else {
                let caseOnly = linked.first { $0.lowercased() == app.lowercased() }
                findings.append(
                    CheckFinding(
                        .error,
                        "check.app-missing",
                        "\(app) is not in applinks, so no link on this host opens it"
                            + (caseOnly.map { " (the file lists \($0), which differs only in letter case)" }
                                ?? "; add it to details[].appIDs"),
                        evidence: "applinks apps: " + (linked.isEmpty ? "none" : linked.sorted().joined(separator: ", "))
                    )
                )
            }
            let services = [
                ("check.app-webcredentials", "webcredentials", document.webcredentials),
                ("check.app-appclips", "appclips", document.appclips),
            ]
            for (rule, name, service) in services {
                let listed = service?.apps.contains { $0.value == app } ?? false
                findings.append(CheckFinding(.info, rule, "\(app) is \(listed ? "" : "not ")in \(name)"))
            }
        }
        return findings
    }

    static func pathFindings(_ document: AASADocument, target: CheckTarget, _ paths: [String]) -> [CheckFinding] {
        guard !paths.isEmpty else { return [] }
        let matcher = Matcher(document)
        return paths.map { path in
            let url = "https://\(target.host)" + (path.hasPrefix("/") ? path : "/" + path)
            let outcome = matcher.match(url)
            let explanation = outcome.reason
            if let app = outcome.app {
                let others = outcome.apps.dropFirst()
                let alternatives = others.isEmpty ? "" : " (or, where it is not installed, \(others.joined(separator: ", then ")))"
                return CheckFinding(.info, "check.path", "\(path) opens \(app)\(alternatives)", evidence: explanation)
            }
            return CheckFinding(.info, "check.path", "\(path) opens no app (stays in the browser)", evidence: explanation)
        }
    }

    static func cdnFindings(_ cdn: Exchange, originBody: [UInt8]) -> [CheckFinding] {
        guard let response = cdn.response else {
            return [CheckFinding(.warning, "check.cdn", "Apple's CDN copy could not be fetched: \(cdn.failure ?? "unknown error")")]
        }
        let reason = response.header("Apple-Failure-Reason")
        let details = response.header("Apple-Failure-Details")
        if reason != nil || details != nil {
            return [
                CheckFinding(
                    .error,
                    "check.cdn-failure",
                    "Apple's CDN reports that it could not fetch the file: \(reason ?? "(no reason)")"
                        + (details.map { " — \($0)" } ?? "") + "; fix that, then wait for the CDN to fetch again",
                    evidence: [reason.map { "Apple-Failure-Reason: \($0)" }, details.map { "Apple-Failure-Details: \($0)" }].compactMap {
                        $0
                    }
                    .joined(separator: "; ")
                )
            ]
        }
        guard response.status == 200, let body = cdn.decodedBody else {
            return [
                CheckFinding(
                    .warning,
                    "check.cdn",
                    "Apple's CDN answers \(response.status) \(response.reason) for this host (a new host is fetched within a day or so)",
                    evidence: "\(response.status) \(response.reason)"
                )
            ]
        }
        if let difference = JSONDifference.first(expected: originBody, found: body) {
            return [
                CheckFinding(
                    .warning,
                    "check.cdn-stale",
                    "Apple's CDN still serves an older document than the origin; it refreshes on its own schedule (usually within a day) — "
                        + "devices outside developer mode see the CDN copy",
                    evidence: difference
                )
            ]
        }
        return [CheckFinding(.pass, "check.cdn", "Apple's CDN serves the same document as the origin")]
    }
}
