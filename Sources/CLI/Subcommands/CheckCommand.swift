import AASA
import Check
import Posix
import Server

enum CheckCommand {
    static let subcommand = CommandLineTool.Subcommand(
        name: "check",
        abstract: "Check live hosts the way Apple's fetcher sees them (and against the config).",
        help: """
            OVERVIEW: Check a live host the way Apple's fetcher sees it — one command that fails CI for the right reason.

            aasa-server uses its own HTTP/1.1 and TLS client: it sees the raw status line, every header and the
            certificate, and never follows a redirect. Per host it checks: DNS, connection and TLS (what kind
            of failure); the certificate (trusted chain, name, expiry; under 14 days left is a warning);
            GET /.well-known/apple-app-site-association answers 200 — a redirect is an error that prints its
            Location; Content-Type application/json (text/html, the web app catch-all, is an error; other types
            a warning); Content-Length matches what arrived; chunked and gzip bodies are decoded and the
            uncompressed size held to 128 KB; then every rule `validate` applies. HEAD must give GET's status
            and headers, and User-Agent AASA-Bot/1.0.0 and a browser must get the same answer (a difference
            means a WAF or bot rule blocks Apple). /apple-app-site-association may be 404; a redirect or a
            different document there is an error.

            With --android (or a --config whose site has Android apps), /.well-known/assetlinks.json is fetched as
            Google's verifier fetches it and checked too: 200 without a redirect (Android follows none),
            application/json, every statement valid (one bad statement makes Android ignore the whole file),
            the --app packages granted App Links, and what the config generates.

            USAGE: aasa-server check TARGET... [--config FILE] [--connect HOST[:PORT]] [--app ID]... [--path URL_PATH]...
                                     [--link PATH]... [--android] [--cdn] [--cdn-base URL] [--resolve HOST:PORT:ADDR]... [--cacert FILE | --insecure]
                                     [--plain-http] [--plain-http-ok] [--timeout SECONDS] [--json] [--junit FILE] [--strict]

            ARGUMENTS:
              TARGET                A host (staging.example.com), host:port, or a URL (https://host[:port]/…; only
                                    the scheme, host and port count). http:// checks an origin behind a load
                                    balancer (Apple fetches only https). Default port 443.

            OPTIONS:
              --config FILE         Compare each host's live document with what the config generates (as JSON; a
                                    stale or wrong deployment is an error naming the first difference). With no
                                    TARGET, check every exact host of the config; wildcard hosts are listed as not
                                    checked (give a name under one as TARGET to check it).
              --connect HOST[:PORT]
                                    Connect every host to this address or name (SNI and Host stay the host's name):
                                    a staging load balancer, or a new deployment before DNS points at it. A name is
                                    resolved within --timeout and each of its addresses tried; the report says
                                    which one answered.
              --resolve HOST:PORT:ADDR  Like curl: connect HOST:PORT to ADDR, an address or a name (repeatable).
              --plain-http          With --config and no TARGET: check the config's hosts over http:// (port 80, or
                                    the --connect port), as an origin behind a TLS-terminating load balancer.
              --plain-http-ok       Checking over http:// is intended: a note, not a warning (so --strict can pass);
                                    --plain-http implies it.
              --app ID              An Apple app ID (TEAMID.bundle), or an app name of --config, must be in applinks (reported for
                                    webcredentials and appclips too); an Android package name
                                    (com.example.app) must be granted App Links in assetlinks.json. Repeatable.
              --android             Also check /.well-known/assetlinks.json (implied by an --app package name).
              --path URL_PATH       Say which app opens this path on each host, with match's reasoning; repeatable.
              --link PATH           Click this link path as an iPhone, Android, a desktop, a link preview and an in-app browser
                                    would without the app: a 404, a redirected preview fetcher, a store link naming no app,
                                    a page without the Smart App Banner are findings; repeatable (see docs/links.md).
              --cdn                 Also fetch Apple's CDN copy (https://app-site-association.cdn-apple.com/a/v1/HOST)
                                    and compare it with the origin: a difference is a warning (the CDN refreshes on
                                    its own schedule); Apple-Failure-Reason/-Details headers are an error.
              --cdn-base URL        Replace the CDN's scheme, host and port (for testing); the path stays /a/v1/HOST.
              --cacert FILE         Trust this CA too (e.g. the dev CA of `aasa-server dev`); repeatable.
              --insecure            Do not stop at certificate problems; they are still reported (as warnings).
              --timeout SECONDS     Bound each host's whole check: DNS, connect, TLS, every request and the CDN fetch
                                    (default 10). A limit that runs out is one check.timeout error naming what was
                                    awaited.
              --json                {"hosts":[{"host","address","ok","findings":[{"rule","severity","message","evidence"}]}],
                                     "ok","strict","errors":N,"warnings":N}; "ok" is what the exit status says.
              --junit FILE          Also write a JUnit XML report (one test suite per host, one test case per check,
                                    named by its rule id so its history carries over from run to run).
              --strict              Warnings fail the check too (the summary, "ok" and JUnit say so).
              --help                Show this help.

            Hosts are checked concurrently and reported in the order given.

            EXIT STATUS: 0 no errors (warnings allowed unless --strict), 1 errors (a host that cannot be reached
            is an error), 2 usage error.

            """,
        spec: ArgumentSpec(
            options: ["--config", "--connect", "--cdn-base", "--timeout", "--junit"],
            repeatableOptions: ["--app", "--path", "--link", "--resolve", "--cacert"],
            flags: ["--cdn", "--insecure", "--json", "--strict", "--android", "--plain-http", "--plain-http-ok"],
            positionalName: "TARGET"
        ),
        run: run
    )

    static func run(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        let usage = subcommand.help
        func usageError(_ message: String) -> Int32 { CommandLineTool.usageError(message, console: console, usage: usage) }
        if !arguments.all("--cacert").isEmpty && arguments.has("--insecure") {
            return usageError("--cacert and --insecure contradict each other; give one")
        }
        var options = ProbeOptions()
        if let text = arguments.value("--timeout") {
            guard let seconds = Double(text), seconds > 0, seconds <= 600 else {
                return usageError("--timeout takes seconds, from 0.1 to 600")
            }
            options.timeout = seconds
        }
        if let text = arguments.value("--connect") {
            switch AddressOverride.parseConnect(text) {
            case .success(let override): options.connect = override
            case .failure(let error): return usageError(error.message)
            }
        }
        for text in arguments.all("--resolve") {
            switch AddressOverride.parseResolve(text) {
            case .success(let override): options.resolve.append(override)
            case .failure(let error): return usageError(error.message)
            }
        }
        options.cdn = arguments.has("--cdn") || arguments.value("--cdn-base") != nil
        if let base = arguments.value("--cdn-base") {
            switch CheckTarget.parse(base) {
            case .success(let target): options.cdnBase = target
            case .failure(let error): return usageError("--cdn-base " + error.message)
            }
        }
        var loaded: LoadedConfig?
        let configPath = arguments.value("--config")
        if let configPath {
            guard let config = CommandLineTool.loadConfig(configPath, certificates: .notRead, console: console)?.config else {
                return ExitStatus.usage
            }
            if config.hasErrors {
                console.err(
                    "error: \(configPath) has errors (run `aasa-server validate --config \(configPath)`); not checking against it\n"
                )
                return ExitStatus.failure
            }
            loaded = config
        }
        // An Apple app ID starts with a 10-character Team ID; anything else that is a package name is Android's.
        var apps: [String] = []
        var packages: [String] = []
        for given in arguments.all("--app") {
            // A name from the config's apps table stands for its Apple ID, its Android package, or both.
            if let table = loaded?.config?.appTable, table.apple[given] != nil || table.android[given] != nil {
                if let id = table.apple[given] { apps.append(id) }
                if let android = table.android[given] { packages.append(android.package.value) }
                continue
            }
            let app = given
            var problems: [Diagnostic] = []
            AASAValidator.validateAppID(Located(app)) { severity, rule, message, _ in problems.append(Diagnostic(severity, rule, message)) }
            if !problems.hasErrors {
                apps.append(app)
            } else if AndroidIdentity.packageNameProblem(app) == nil {
                packages.append(app)
            } else {
                return usageError("--app \(app): neither an Apple app ID (\(problems[0].message)) nor an Android package name")
            }
        }

        var targets: [CheckTarget] = []
        for text in arguments.positionals {
            switch CheckTarget.parse(text) {
            case .success(let target): targets.append(target)
            case .failure(let error): return usageError(error.message)
            }
        }
        if arguments.has("--plain-http") && !(targets.isEmpty && loaded != nil) {
            return usageError("--plain-http applies to the hosts of --config when no TARGET is given; for a TARGET write http://HOST")
        }
        if targets.isEmpty {
            guard let loaded else { return usageError("give a TARGET (a host or URL), or --config FILE to check every host in it") }
            let scheme: CheckTarget.Scheme = arguments.has("--plain-http") ? .http : .https
            var wildcards: [String] = []
            for site in loaded.sites {
                for host in site.site.hosts {
                    switch host.value {
                    case .exact(let name): targets.append(CheckTarget(scheme: scheme, host: name))
                    case .wildcard: wildcards.append(host.value.description)
                    }
                }
            }
            if !wildcards.isEmpty {
                let shown = wildcards.prefix(5).joined(separator: ", ") + (wildcards.count > 5 ? " and \(wildcards.count - 5) more" : "")
                let example = "any-name." + wildcards[0].dropFirst(2)
                console.err(
                    "note: not checked: \(shown) — a wildcard has no single host to fetch; give a name under it as TARGET "
                        + "(`aasa-server check \(example) --config \(configPath ?? "")`)\n"
                )
            }
            guard !targets.isEmpty else { return usageError("the config has no exact host to check (wildcards need a TARGET)") }
        }

        let android = arguments.has("--android") || !packages.isEmpty
        let paths = arguments.all("--path")
        let insecure = arguments.has("--insecure")
        let plainHTTPIntended = arguments.has("--plain-http-ok") || arguments.has("--plain-http")
        let config = loaded
        let reports: [HostReport]
        do {
            var common = CheckExpectations()
            common.apps = apps
            common.packages = packages
            common.android = android
            common.paths = paths
            common.linkPaths = arguments.all("--link").map { $0.hasPrefix("/") ? $0 : "/" + $0 }
            common.insecure = insecure
            common.plainHTTPIntended = plainHTTPIntended
            common.configPath = configPath
            let expected = common
            reports = try Checker.run(targets, options: options, trustAnchors: arguments.all("--cacert")) { target in
                expected.forHost(target.host, config: config)
            }
        } catch {
            console.err("error: \(error)\n")
            return ExitStatus.usage
        }
        let strict = arguments.has("--strict")
        if arguments.has("--json") {
            console.outBytes(CheckReport.json(reports, strict: strict))
        } else {
            console.out(CheckReport.human(reports, colour: console.stdoutIsTerminal, strict: strict))
        }
        if let junit = arguments.value("--junit") {
            do {
                try Files.writeAtomically(Array(CheckReport.junit(reports, strict: arguments.has("--strict")).utf8), to: junit)
            } catch {
                console.err("error: cannot write \(junit): \(error)\n")
                return ExitStatus.usage
            }
        }
        return reports.allSatisfy { $0.passed(strict: strict) } ? ExitStatus.success : ExitStatus.failure
    }
}
