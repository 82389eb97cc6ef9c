import AASA
import HTTP1
import Support

/// What the user expects of the live document (`--app`, `--path`) and Apple's CDN copy (`--cdn`).
extension HostEvaluation {
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
                    "Apple's CDN serves a different document than the origin (which of the two is newer cannot be told from here); "
                        + "the CDN refreshes on its own schedule (usually within a day) — devices outside developer mode see the CDN copy",
                    evidence: difference
                )
            ]
        }
        return [CheckFinding(.pass, "check.cdn", "Apple's CDN serves the same document as the origin")]
    }
}
