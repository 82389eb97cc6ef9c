import AASA
import Links
import Server

enum MatchCommand {
    static let subcommand = CommandLineTool.Subcommand(
        name: "match",
        abstract: "Predict which app iOS opens for a URL, and which rule decided.",
        help: """
            OVERVIEW: Predict which app iOS opens for each URL, and explain which rule decided.

            Apple's rules (see docs/aasa-format.md): details entries and their rules are tried in order and the
            first matching rule decides for that entry's apps; an exclusion blocks them; "components" win over
            "paths" in the same entry; "appID" is ignored when "appIDs" is present; in a "?" dictionary every
            named item must match, every repeated occurrence must match, and an absent item counts as "".

            Where Apple is silent we take these readings: an empty path is "/"; non-ASCII characters are
            percent-encoded (UTF-8) before matching unless percentEncoded is false; query item names are
            compared percent-decoded, values as sent unless percentEncoded is false; '+' is not a space;
            an undefined $(variable) matches only its own text; user variables take precedence over
            predefined ones of the same name; $(region)/$(lang) use ISO 3166-1 / ISO 639-1 codes.

            Only http and https URLs can be universal links; anything else (or text without a scheme) is
            reported as never opening an app, with the reason.

            On a link domain (a site with "links", see docs/links.md) it also says what each kind of visitor
            gets when the app is not installed — iPhone, iPad, Android, desktop, a link preview, an in-app
            browser — and which link rule (or FDL long link) decided; with --json under "withoutApp".

            With --android it answers for Android instead: which packages the host's assetlinks.json lets open
            the URL (App Links verify per host — handle_all_urls for the package and a signing certificate —
            and then cover every URL of that host the app's intent filters declare).

            USAGE: aasa-server match (--config FILE [--host HOST] | --file AASA_FILE) URL... [--ios 12|13 | --legacy]
                                     [--expect APP|none] [--json]
                   aasa-server match --android (--config FILE [--host HOST] | --file ASSETLINKS_FILE) URL...
                                     [--expect PACKAGE|none] [--json]
                   aasa-server match (--config FILE | --file AASA_FILE) --cases CASES_FILE [--junit FILE]

            ARGUMENTS:
              URL                 One or more URLs, e.g. https://example.com/product/42?ref=mail#top

            OPTIONS:
              --config FILE       The server config; each URL's host picks the site (unless --host).
              --host HOST         Use HOST's document for every URL (a URL may then be just a path, /product/1).
              --file AASA_FILE    Use this apple-app-site-association file (- reads standard input).
              --ios VERSION       Evaluate as that iOS version reads the file: 9 to 12 read only "appID" + "paths"
                                  (the legacy entries), 13 and later "appIDs" + "components" (default).
              --legacy            The same as --ios 12.
              --android           Answer for Android App Links (see above); --expect then takes a package name.
              --expect APP|none   For CI: exit 1 unless every URL opens APP (a TEAMID.bundle ID, or an app name of
                                  the config) — one of the apps it opens counts — or, with none, unless every URL
                                  stays in the browser.
              --cases CASES_FILE  For CI: a JSON array of {"url", "expect": APP or "none", "ios"?: 12} — each URL
                                  checked against its own expectation (and iOS version); exit 1 when any differs.
              --junit FILE        With --cases: also write a JUnit report, a test suite per host, a test per URL.
              --json              One JSON object per URL and line: {"url", "app", "apps", "decidedBy": {"details",
                                  "rule", "kind", "pattern", "exclude"}}; "apps" lists every app that opens it;
                                  "blockedApps" and "blockedBy" (same order) each app an exclusion blocked, and which.
              --help              Show this help.

            EXIT STATUS: 0 every URL opens an app (with --expect: every prediction is the expected one),
            1 otherwise, 2 usage error or unusable input.

            EXAMPLES:
              aasa-server match --config config/example.json https://example.com/product/42
              aasa-server match --config config/example.json --expect none https://example.com/admin/users
              aasa-server match --config config/example.json --ios 12 https://example.com/product/42

            """,
        spec: ArgumentSpec(
            options: ["--config", "--host", "--file", "--ios", "--expect", "--cases", "--junit"],
            flags: ["--json", "--legacy", "--android"],
            positionalName: "URL"
        ),
        run: run
    )

    static func run(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        let usage = subcommand.help
        let configPath = arguments.value("--config")
        let filePath = arguments.value("--file")
        if (configPath == nil) == (filePath == nil) {
            return CommandLineTool.usageError("give either --config FILE or --file AASA_FILE", console: console, usage: usage)
        }
        if filePath != nil && arguments.value("--host") != nil {
            return CommandLineTool.usageError("--host is used with --config", console: console, usage: usage)
        }
        let casesPath = arguments.value("--cases")
        guard !arguments.positionals.isEmpty || casesPath != nil else {
            return CommandLineTool.usageError("give at least one URL, or --cases FILE", console: console, usage: usage)
        }
        if arguments.value("--junit") != nil && casesPath == nil {
            return CommandLineTool.usageError("--junit reports --cases: give --cases FILE", console: console, usage: usage)
        }
        if casesPath != nil && (arguments.has("--android") || arguments.has("--json")) {
            return CommandLineTool.usageError("--cases is for iOS predictions, in words (and --junit)", console: console, usage: usage)
        }
        let json = arguments.has("--json")
        if arguments.has("--android") {
            if arguments.value("--ios") != nil || arguments.has("--legacy") {
                return CommandLineTool.usageError(
                    "--ios and --legacy are about iOS; --android answers for Android",
                    console: console,
                    usage: usage
                )
            }
            return AndroidMatch.run(arguments, console: console, usage: usage)
        }
        var reading = Matcher.Reading.modern
        var legacyVersion = 12
        if let version = arguments.value("--ios") {
            guard let number = Int(version), (9...40).contains(number) else {
                return CommandLineTool.usageError(
                    "--ios takes a major iOS version from 9 (the first with universal links), e.g. 12 or 17",
                    console: console,
                    usage: usage
                )
            }
            if number <= 12 {
                reading = .legacy
                legacyVersion = number
            }
        }
        if arguments.has("--legacy") {
            if let version = arguments.value("--ios"), Int(version).map({ $0 > 12 }) ?? false {
                return CommandLineTool.usageError("--legacy is --ios 12; give one of them", console: console, usage: usage)
            }
            reading = .legacy
        }
        // A document source per URL: the file, or the site the URL's host (or --host) selects.
        var fileMatcher: Matcher?
        var fileDocument: AASADocument?
        var loadedConfig: LoadedConfig?
        if let filePath {
            guard let bytes = Files.readArgument(filePath, console: console) else { return ExitStatus.usage }
            let (document, findings) = AASAValidator.validateFile(bytes)
            guard let document else {
                let printer = DiagnosticPrinter(colour: console.stderrIsTerminal, sources: [Files.displayName(filePath): bytes])
                for finding in findings.inFile(Files.displayName(filePath)) where finding.severity == .error {
                    console.err(printer.human(finding) + "\n")
                }
                return ExitStatus.usage
            }
            fileMatcher = Matcher(document, reading: reading)
            fileDocument = document
        } else if let configPath {
            guard let candidate = CommandLineTool.loadConfig(configPath, certificates: .notRead, console: console) else {
                return ExitStatus.usage
            }
            let (loaded, sources) = (candidate.config, candidate.sources)
            if loaded.config == nil {
                let printer = DiagnosticPrinter(colour: console.stderrIsTerminal, sources: sources)
                for finding in loaded.diagnostics where finding.severity == .error { console.err(printer.human(finding) + "\n") }
                return ExitStatus.usage
            }
            if loaded.hasErrors {
                console.err("warning: \(configPath) has errors (see 'aasa-server validate'); predictions use what could be built\n")
            }
            loadedConfig = loaded
        }
        // --expect takes an app ID, or a name from the config's apps table.
        var expected = arguments.value("--expect")
        if let given = expected, given != "none" {
            switch AppArgument.resolve(given, option: "--expect", config: loadedConfig) {
            case .success(let id): expected = id
            case .failure(let error): return CommandLineTool.usageError(error.message + ", and not none", console: console, usage: usage)
            }
        }

        // The URLs on the command line share --expect and --ios; each case of --cases has its own.
        struct Job {
            var url: String
            var expected: String?
            var reading: Matcher.Reading
            var legacyVersion: Int
            var fromCases: MatchCase?
        }
        var jobs = arguments.positionals.map { Job(url: $0, expected: expected, reading: reading, legacyVersion: legacyVersion) }
        if let casesPath {
            guard let bytes = Files.readArgument(casesPath, console: console) else { return ExitStatus.usage }
            switch MatchCase.parse(bytes, file: Files.displayName(casesPath)) {
            case .failure(let error): return CommandLineTool.usageError(error.message, console: console, usage: usage)
            case .success(let cases):
                for matchCase in cases {
                    var expect = matchCase.expect
                    if expect != "none" {
                        switch AppArgument.resolve(
                            expect,
                            option: "--cases \(Files.displayName(casesPath)):\(matchCase.line): expect",
                            config: loadedConfig
                        ) {
                        case .success(let id): expect = id
                        case .failure(let error):
                            return CommandLineTool.usageError(error.message + ", and not none", console: console, usage: usage)
                        }
                    }
                    let version = matchCase.ios ?? 17
                    jobs.append(
                        Job(
                            url: matchCase.url,
                            expected: expect,
                            reading: version <= 12 ? .legacy : .modern,
                            legacyVersion: version,
                            fromCases: matchCase
                        )
                    )
                }
            }
        }
        var caseResults: [MatchCase.Outcome] = []
        var fileMatchers: [Matcher.Reading: Matcher] = [:]
        if let fileMatcher { fileMatchers[reading] = fileMatcher }
        func fileMatcherFor(_ reading: Matcher.Reading) -> Matcher? {
            guard let fileDocument else { return nil }
            if let known = fileMatchers[reading] { return known }
            let made = Matcher(fileDocument, reading: reading)
            fileMatchers[reading] = made
            return made
        }
        var matchers: [String: Matcher] = [:]
        var allOpen = true
        var allAsExpected = true
        for job in jobs {
            let (urlText, expected, reading, legacyVersion) = (job.url, job.expected, job.reading, job.legacyVersion)
            // With --host, a bare path is that host's URL: `--host example.com /product/1`.
            let forcedHost = arguments.value("--host")
            let url = forcedHost != nil && urlText.hasPrefix("/") ? MatchURL("https://\(forcedHost!)\(urlText)") : MatchURL(urlText)
            var outcome: MatchOutcome
            var note: String?
            var legacyAbsent: String?
            var withoutApp: LinkPrediction.Prediction?
            if let reason = Matcher.whyNotALink(url) {
                outcome = MatchOutcome(url: urlText, app: nil, decidedBy: nil, blockedApps: [], notALink: reason)
            } else if let fileMatcher = fileMatcherFor(reading) {
                outcome = fileMatcher.match(url)
                if reading == .legacy && fileMatcher.hasNoEntries {
                    legacyAbsent =
                        "the file has no legacy entries (appID + paths), so iOS 9 to 12 open no app for any URL; "
                        + "add a details entry with \"appID\" and \"paths\" for them"
                }
            } else if let loaded = loadedConfig {
                let host = arguments.value("--host") ?? url.host ?? ""
                if host.isEmpty {
                    return CommandLineTool.usageError(
                        "\"\(urlText)\" has no host; give a full URL or --host",
                        console: console,
                        usage: usage
                    )
                }
                // By identity: sites in two included files can have the same position and path ($[0], line 1).
                let found = loaded.site(forHost: host)
                if let found, let links = found.site.links {
                    withoutApp = LinkPrediction.predict(
                        links,
                        siteHosts: found.site.hosts.map(\.value),
                        host: HostTable<Int>.normalize(host),
                        url: url
                    )
                }
                if let found, let index = loaded.sites.firstIndex(where: { $0 === found }),
                    let document = loaded.sites[index].document
                {
                    let key = "\(index) \(reading)"
                    let matcher = matchers[key] ?? Matcher(document, reading: reading)
                    matchers[key] = matcher
                    outcome = matcher.match(url)
                    note = "site \(loaded.sites[index].site.name)"
                    if reading == .legacy && matcher.hasNoEntries {
                        legacyAbsent =
                            "the site's document has no legacy entries (appID + paths), so iOS 9 to 12 open no app for any URL; "
                            + "to serve them too, add \"formats\": [\"modern\", \"legacy\"] to the site's applinks"
                    }
                } else {
                    outcome = MatchOutcome(url: urlText, app: nil, decidedBy: nil, blockedApps: [], closest: nil)
                    note =
                        loaded.site(forHost: host).map { _ in
                            "\(HostTable<Int>.normalize(host)) has only Android apps (see --android); its AASA is the unknownHost answer, which opens no app"
                        } ?? "no site serves \(HostTable<Int>.normalize(host)); it gets the unknownHost answer, which opens no app"
                }
            } else {
                return ExitStatus.usage
            }
            if outcome.app == nil && job.fromCases == nil { allOpen = false }
            if reading == .legacy {
                let how = legacyVersion == 12 ? "as iOS 12 reads it" : "as iOS \(legacyVersion) reads it, like every iOS from 9 to 12"
                note = [note, "\(how) (appID + paths only)"].compactMap { $0 }.joined(separator: "; ")
                if let legacyAbsent { note = [note, legacyAbsent].compactMap { $0 }.joined(separator: "\n  ") }
            }
            var expectation: String?
            if let expected {
                // Bundle IDs are case-insensitive; Team IDs are upper case by construction.
                let matches =
                    expected == "none" ? outcome.apps.isEmpty : outcome.apps.contains { $0.lowercased() == expected.lowercased() }
                if !matches {
                    allAsExpected = false
                    expectation = "expected \(expected), got \(outcome.apps.isEmpty ? "none" : outcome.apps.joined(separator: ", "))"
                }
            }
            if let matchCase = job.fromCases {
                let host = arguments.value("--host") ?? url.host ?? "-"
                caseResults.append(MatchCase.Outcome(matchCase: matchCase, host: host, mismatch: expectation, reason: outcome.reason))
            }
            if json {
                var object = jsonOutcome(outcome)
                if let expected, case .object(var members) = object {
                    members.append(("expected", .string(expected)))
                    members.append(("asExpected", .bool(expectation == nil)))
                    object = .object(members)
                }
                if let withoutApp, case .object(var members) = object {
                    members.append(("withoutApp", LinkPrediction.json(withoutApp)))
                    object = .object(members)
                }
                console.outBytes(JSONWriter.bytes(object) + [0x0A])
            } else {
                console.out(
                    humanOutcome(outcome, note: note) + (withoutApp.map(LinkPrediction.human) ?? "")
                        + (expectation.map { "  MISMATCH: \($0)\n" } ?? "")
                )
            }
        }
        if casesPath != nil {
            let failed = caseResults.count { $0.mismatch != nil }
            console.out(
                "\(caseResults.count) case\(caseResults.count == 1 ? "" : "s"): \(caseResults.count - failed) as expected, \(failed) not\n"
            )
            if let junit = arguments.value("--junit") {
                do {
                    try Files.writeAtomically(Array(MatchCase.junit(caseResults).utf8), to: junit)
                } catch {
                    console.err("error: cannot write \(junit): \(error)\n")
                    return ExitStatus.usage
                }
            }
        }
        if expected != nil || casesPath != nil {
            return allAsExpected && (expected != nil || allOpen) ? ExitStatus.success : ExitStatus.failure
        }
        return allOpen ? ExitStatus.success : ExitStatus.failure
    }

    static func reference(_ rule: RuleReference) -> JSONOutput {
        .object([
            ("details", .int(rule.detailsIndex)),
            ("rule", .int(rule.ruleIndex)),
            ("kind", .string(rule.kind.rawValue)),
            ("pattern", .string(rule.pattern)),
            ("exclude", .bool(rule.exclude)),
        ])
    }

    static func jsonOutcome(_ outcome: MatchOutcome) -> JSONOutput {
        var members: [(String, JSONOutput)] = [
            ("url", .string(outcome.url)),
            ("app", outcome.app.map(JSONOutput.string) ?? .null),
            ("apps", .array(outcome.apps.map(JSONOutput.string))),
            ("decidedBy", outcome.decidedBy.map(reference) ?? .null),
        ]
        if !outcome.blockedApps.isEmpty {
            members.append(("blockedApps", .array(outcome.blockedApps.map(JSONOutput.string))))
            members.append(("blockedBy", .array(outcome.blockedBy.map(reference))))
        }
        if let reason = outcome.notALink { members.append(("notALink", .string(reason))) }
        if let closest = outcome.closest {
            var near = reference(closest.rule)
            if case .object(var fields) = near {
                fields.append(("reason", .string(closest.reason)))
                near = .object(fields)
            }
            members.append(("closest", near))
        }
        return .object(members)
    }

    static func describe(_ rule: RuleReference) -> String { rule.description }

    /// One line per blocked app, naming the exclusion of its own entry (two apps may be blocked by two rules).
    static func blockLines(_ outcome: MatchOutcome, verb: String) -> String {
        zip(outcome.blockedApps, outcome.blockedBy).map { "  \($0) \(verb) \(describe($1))\n" }.joined()
    }

    static func humanOutcome(_ outcome: MatchOutcome, note: String?) -> String {
        var text = outcome.url + "\n"
        if let note { text += "  \(note)\n" }
        if let app = outcome.app, let rule = outcome.decidedBy {
            let others = outcome.apps.dropFirst()
            text +=
                "  opens \(app)" + (others.isEmpty ? "" : " (or, where it is not installed, \(others.joined(separator: ", then ")))") + "\n"
            text += "  decided by \(describe(rule))\n"
            text += blockLines(outcome, verb: "excluded earlier by")
        } else if let rule = outcome.decidedBy {
            text += "  opens no app (stays in the browser)\n  excluded by \(describe(rule))\n"
            text += blockLines(outcome, verb: "blocked by")
        } else if let reason = outcome.notALink {
            text += "  opens no app: \(reason)\n"
        } else {
            text += "  opens no app (stays in the browser): no rule matches\n"
            if let closest = outcome.closest {
                text += "  closest rule: \(describe(closest.rule))\n    \(closest.reason)\n"
            }
        }
        return text
    }
}
