import Support

/// The semantic rules Apple applies to an AASA document (docs/aasa-format.md §2–§6), run on the decoded model.
///
/// The same rules run on verbatim files and on documents generated from a config; in the latter case
/// model origins point into the config, so findings name the line the user wrote.
public enum AASAValidator {
    /// Where a rule reports a finding: severity, rule id, message and the value's provenance.
    public typealias Reporter = (Severity, String, String, Provenance) -> Void

    /// Apple's documented limit on the uncompressed file (docs/aasa-format.md §1, C6).
    public static let sizeLimit = 128 * 1024
    /// From here on we warn: a file this close to the limit breaks with the next few rules.
    public static let sizeWarningThreshold = 100 * 1024

    public static func validate(_ document: AASADocument) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        func report(_ severity: Severity, _ rule: String, _ message: String, _ origin: Provenance) {
            findings.append(Diagnostic(severity, rule, message, at: origin.location, path: origin.path.description))
        }

        var allAppIDs: [Located<String>] = []
        allAppIDs.reserveCapacity(4)
        if let applinks = document.applinks {
            validateAppLinks(applinks, report: report, appIDs: &allAppIDs)
        } else if document.appclips != nil {
            report(
                .warning,
                "applinks.missing",
                "the document has \"appclips\" but no \"applinks\"; some App Clip invocations are reported to "
                    + "need an applinks section too — add \"applinks\": {\"details\": []} to be safe",
                Provenance(SourceLocation(offset: 0, line: 1, column: 1), .root)
            )
        }
        func validateService(_ name: String, _ service: ServiceApps?) {
            guard let service else { return }
            if service.apps.isEmpty {
                report(.warning, "service.empty", "\"\(name)\".apps is empty, so the service is enabled for no app", service.origin)
            }
            for app in service.apps {
                validateAppID(app, report: report)
                allAppIDs.append(app)
            }
        }
        validateService("webcredentials", document.webcredentials)
        validateService("appclips", document.appclips)
        validateService("activitycontinuation", document.activitycontinuation)
        // A file that names no app anywhere does nothing at all: no link opens an app, no app gets
        // passwords. (The server's own answer for an unknown host is such a file, on purpose: docs/serving.md.)
        if allAppIDs.isEmpty && !(document.applinks?.details.contains { $0.namesAnApp } ?? false) {
            // It says everything "details is empty" would.
            findings.removeAll { $0.rule == "details.empty" }
            report(
                .error,
                "document.no-app",
                "this file associates no app: no URL on this host opens an app, and no app gets its passwords or "
                    + "App Clips. Add an app ID (TEAMID.bundle.id) to \"applinks\".details (\"appIDs\") or to a service's \"apps\"",
                Provenance(SourceLocation(offset: 0, line: 1, column: 1), .root)
            )
        }
        escalateWhenNothingOpens(document, &findings)
        // Bundle IDs are case-insensitive (spec C9): two IDs that differ only in case are one app
        // spelled two ways, which is a mistake somewhere.
        var firstSpelling = FirstSeen<String>()
        // Most documents name one app, or the same spelling several times: nothing to compare.
        let spellings = allAppIDs.first.map { first in allAppIDs.contains { $0.value != first.value } } ?? false
        for app in allAppIDs where spellings {
            let key = app.value.lowercased()
            if let first = firstSpelling[key], first != app.value {
                report(
                    .warning,
                    "appid.case-duplicate",
                    "\"\(app.value)\" and \"\(first)\" differ only in letter case; bundle IDs are case-insensitive, so "
                        + "use one spelling (the one in your app's entitlements)",
                    app.origin
                )
            } else {
                firstSpelling.insertIfAbsent(key, app.value)
            }
        }
        return findings
    }

    /// The findings that each say "this entry opens nothing" are warnings while something else in the file
    /// works; when no entry can open any URL and no other service names an app, the file does nothing a
    /// user wants, which is an error as a file naming no app is.
    static func escalateWhenNothingOpens(_ document: AASADocument, _ findings: inout [Diagnostic]) {
        func namesAnApp(_ service: ServiceApps?) -> Bool { !(service?.apps.isEmpty ?? true) }
        guard let applinks = document.applinks, !namesAnApp(document.webcredentials), !namesAnApp(document.appclips),
            !namesAnApp(document.activitycontinuation)
        else { return }
        guard !applinks.details.contains(where: canOpenSomeURL) else { return }
        guard !findings.contains(where: { $0.rule == "document.no-app" }) else { return }
        let opensNothing = [
            "details.empty", "details.no-rules", "components.empty", "paths.empty", "details.no-app", "pattern.fragment-in-path",
        ]
        var escalated = false
        for index in findings.indices where opensNothing.contains(findings[index].rule) && findings[index].severity == .warning {
            findings[index].severity = .error
            findings[index].message += " — and nothing else in this file opens a URL or serves an app, so the file does nothing"
            escalated = true
        }
        if !escalated {
            findings.append(
                Diagnostic(
                    .error,
                    "applinks.opens-nothing",
                    "no rule in this file can open a URL (every rule is an exclusion, or none can match) and no other service "
                        + "names an app, so the file does nothing; add a component that opens the app's URLs",
                    at: SourceLocation(offset: 0, line: 1, column: 1),
                    path: JSONPath.root.description
                )
            )
        }
    }

    /// An entry that names an app and has at least one rule that opens URLs and can match a path.
    static func canOpenSomeURL(_ details: AppLinksDetails) -> Bool {
        guard details.namesAnApp else { return false }
        if let components = details.components {
            // By position, fields read in place: iterating copies each component.
            return components.indices.contains {
                !components[$0].exclude && !(components[$0].path?.utf8.contains(UInt8(ascii: "#")) ?? false)
            }
        }
        return (details.paths ?? []).contains { !$0.value.hasPrefix("NOT ") && !$0.value.utf8.contains(UInt8(ascii: "#")) }
    }
}

extension AASAValidator {
    /// Everything we check on a hosted (verbatim) file: syntax, structure, meaning and size.
    public static func validateFile(_ bytes: [UInt8]) -> (document: AASADocument?, diagnostics: [Diagnostic]) {
        let decoded = AASADecoder.decode(bytes)
        var findings = decoded.diagnostics
        if let document = decoded.document {
            findings += validate(document)
        }
        findings += validateSize(bytes.count, of: decoded.document)
        return (decoded.document, findings.withoutCascades())
    }
}
