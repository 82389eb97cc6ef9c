import AASA
import HTTP1
import Support

/// Turns what a probe saw into findings. Pure: the same observation always gives the same findings
/// (tested without a network in `CheckEvaluationTests`).
public enum HostEvaluation {
    static let wellKnownPath = "/.well-known/apple-app-site-association"

    public static func evaluate(_ observation: HostObservation, _ expectations: CheckExpectations) -> [CheckFinding] {
        var findings = evaluateApple(observation, expectations)
        if !observation.links.isEmpty {
            // Whether the live AASA opens a link path says what its 404 means.
            let document = observation.wellKnown?.decodedBody.flatMap { AASADecoder.decode($0).document }
            findings += LinkFindings.evaluate(observation, document: document, destinations: expectations.linkDestinations)
        }
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
        if let browser = observation.wellKnownBrowser {
            let parity = agentParity(bot: get, browser: browser)
            // One cause, one finding: a status only the bot gets (a browser gets 200) is the User-Agent rule's doing.
            if parity.contains(where: { $0.severity == .error }), browser.response?.status == 200, get.response?.status != 200 {
                findings.removeAll { $0.rule == "check.status" && $0.severity == .error }
            }
            findings += parity
        }
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
}
