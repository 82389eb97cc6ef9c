import AASA
import HTTP1
import Support

/// Whether other requests get what Apple's fetcher gets: HEAD, a browser, the root path.
extension HostEvaluation {
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
}
