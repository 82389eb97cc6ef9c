import AASA
import HTTP1
import Support

/// Android's statement list, as Google's verifier fetches it.
extension HostEvaluation {
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
        let subject = "\(target.origin)\(assetLinksPath)"
        let validation = AssetLinksDecoder.validateFile(body)
        findings += validation.diagnostics.sortedForDisplay().map { CheckFinding($0, subject: subject) }
        // What the verifier acts on: it skips a malformed statement and reads the others.
        let statements = validation.verifiable
        let skipped = (validation.statements?.count ?? 0) - statements.count
        if validation.diagnostics.hasErrors && !statements.isEmpty {
            findings.append(
                CheckFinding(
                    .info,
                    "check.assetlinks",
                    "Android's verifier skips the \(skipped) statement\(skipped == 1 ? "" : "s") with errors and still reads the other "
                        + "\(statements.count): the apps those name still verify"
                )
            )
        }
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
                let malformed = !listed && (validation.statements ?? []).contains { $0.package == package }
                findings.append(
                    CheckFinding(
                        .error,
                        "check.assetlinks-app",
                        listed
                            ? "\(package) is listed but not granted \(AssetRelation.handleAllURLs): its App Links will not verify"
                            : malformed
                                ? "\(package)'s statement has errors (above), so the verifier skips it: its App Links on \(target.host) will not verify"
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
}
