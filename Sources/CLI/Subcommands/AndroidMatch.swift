import AASA
import Server

/// `match --android`: which packages a host's statement list verifies for App Links, per URL.
enum AndroidMatch {
    static func run(_ arguments: ParsedArguments, console: any Console, usage: String) -> Int32 {
        let expected = arguments.value("--expect")
        if let expected, expected != "none", let problem = AndroidIdentity.packageNameProblem(expected) {
            return CommandLineTool.usageError("--expect takes a package name or none: \(problem)", console: console, usage: usage)
        }
        // Statements per URL: from the file, or from the site the URL's host (or --host) selects.
        var fileStatements: [AssetStatement]?
        var loadedConfig: LoadedConfig?
        if let filePath = arguments.value("--file") {
            guard let bytes = Files.readArgument(filePath, console: console) else { return ExitStatus.usage }
            let result = AssetLinksDecoder.validateFile(bytes)
            let verifiable = result.verifiable
            if result.diagnostics.hasErrors {
                let printer = DiagnosticPrinter(colour: console.stderrIsTerminal, sources: [Files.displayName(filePath): bytes])
                for finding in result.diagnostics.inFile(Files.displayName(filePath)) where finding.severity == .error {
                    console.err(printer.human(finding) + "\n")
                }
                let total = result.statements?.count ?? 0
                if verifiable.isEmpty {
                    console.err(
                        "error: no statement Android can use: every one has an error (or the list itself is broken), so no app verifies\n"
                    )
                    return ExitStatus.failure
                }
                // Google's parser skips a malformed statement and uses the others (validate still fails the file).
                console.err(
                    "note: Android skips the \(total - verifiable.count) statement\(total - verifiable.count == 1 ? "" : "s") with errors "
                        + "above and still verifies with the other \(verifiable.count)\n"
                )
            }
            fileStatements = verifiable
        } else if let configPath = arguments.value("--config") {
            guard let loaded = CommandLineTool.loadConfig(configPath, certificates: .notRead, console: console)?.config else {
                return ExitStatus.usage
            }
            if loaded.hasErrors {
                console.err("warning: \(configPath) has errors (see 'aasa-server validate'); predictions use what could be built\n")
            }
            loadedConfig = loaded
        }
        var allAsWanted = true
        for urlText in arguments.positionals {
            let forcedHost = arguments.value("--host")
            let url = forcedHost != nil && urlText.hasPrefix("/") ? MatchURL("https://\(forcedHost!)\(urlText)") : MatchURL(urlText)
            var text = urlText + "\n"
            var grants: [AppLinkVerification.Grant] = []
            var reason: String?
            if let problem = AppLinkVerification.whyNotALink(url) {
                reason = problem
            } else if let fileStatements {
                grants = AppLinkVerification.grants(fileStatements)
            } else if let loaded = loadedConfig {
                let host = forcedHost ?? url.host ?? ""
                if let site = loaded.site(forHost: host) {
                    text += "  site \(site.site.name)\n"
                    if let statements = site.assetLinks?.statements {
                        grants = AppLinkVerification.grants(statements)
                    } else {
                        reason = "\(HostTable<Int>.normalize(host)) has no Android apps: /.well-known/assetlinks.json answers 404"
                    }
                } else {
                    reason = "no site serves \(HostTable<Int>.normalize(host)): /.well-known/assetlinks.json answers 404"
                }
            }
            if let reason {
                text += "  verifies no app: \(reason)\n"
            } else if grants.isEmpty {
                text += "  verifies no app: no statement grants \(AssetRelation.handleAllURLs) to an android_app target\n"
            }
            for grant in grants {
                text +=
                    "  verifies \(grant.package) (statement \(grant.statement); \(grant.fingerprints.count) certificate"
                    + "\(grant.fingerprints.count == 1 ? "" : "s"): \(grant.fingerprints.map { String($0.prefix(11)) + "…" }.joined(separator: ", ")))\n"
            }
            let packages = grants.map(\.package)
            if let expected {
                let asExpected = expected == "none" ? packages.isEmpty : packages.contains(expected)
                if !asExpected {
                    allAsWanted = false
                    text += "  MISMATCH: expected \(expected), got \(packages.isEmpty ? "none" : packages.joined(separator: ", "))\n"
                }
            } else if packages.isEmpty {
                allAsWanted = false
            }
            if arguments.has("--json") {
                var members: [(String, JSONOutput)] = [
                    ("url", .string(urlText)),
                    ("packages", .array(packages.map(JSONOutput.string))),
                ]
                if let reason { members.append(("reason", .string(reason))) }
                if let expected { members.append(("expected", .string(expected))) }
                console.outBytes(JSONWriter.bytes(.object(members)) + [0x0A])
            } else {
                console.out(text)
            }
        }
        return allAsWanted ? ExitStatus.success : ExitStatus.failure
    }
}
