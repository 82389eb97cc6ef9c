import AASA
import HTTP1
import Support

/// The answer on the well-known path: status, redirects, framing, type, encoding and the document.
extension HostEvaluation {
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
                    target.scheme == .http
                        // An origin behind a TLS-terminating balancer: the balancer fetches it over http and must get the file.
                        ? "\(target.origin)\(wellKnownPath) redirects (\(response.status)) to \(location)\(redirectKind(location, target)); "
                            + "behind a load balancer that terminates TLS, the origin must answer 200 with the file over http itself — "
                            + "exempt \(wellKnownPath) from the redirect (the balancer forwards Apple's https request as this http one)"
                        : "\(wellKnownPath) redirects (\(response.status)) to \(location)\(redirectKind(location, target)); Apple's fetcher does "
                            + "not follow redirects — serve the file at https://\(target.host)\(wellKnownPath) itself, with status 200",
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
        // As fetched: an origin checked over http:// is named with http://.
        let subject = "\(target.origin)\(wellKnownPath)"
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
        let type = value.split(separator: ";").first.map { String($0).trimmingSpacesAndTabs().lowercased() } ?? ""
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
}
