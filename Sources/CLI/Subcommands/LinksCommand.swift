import AASA
import Gzip
import LinkStore
import Links
import Posix
import QRCode
import Server
import Support

/// `links`: the short links stored for the config's link domains, in `<server.stateDirectory>/links.sqlite`
/// or the PostgreSQL database of `server.linkStore` — the store a running server with the same config
/// watches, so a link created here answers within a second, with no reload.
enum LinksCommand {
    static let subcommand = CommandLineTool.Subcommand(
        name: "links",
        abstract: "Create, list, change, count, export and import the short links of the config's link domains; draw their QR codes.",
        help: """
            OVERVIEW: Short links on your own link domains (a site with "links"), kept in links.sqlite in
            server.stateDirectory, or in the PostgreSQL database of server.linkStore that replicas share. A
            running server with the same config reads the changes within a second (no reload). A short link carries Firebase Dynamic Links' parameters and is routed exactly as
            a long link with them: its destinations must be on the site's links.allow (checked here, and again
            at every click), its app is the site's app.

            USAGE: aasa-server links create --domain HOST --link URL [--alias NAME | --short] [--ios-fallback URL]
                       [--ipad-fallback URL] [--android-fallback URL] [--web URL] [--title TEXT]
                       [--description TEXT] [--image URL] [--parameter NAME=VALUE]... [--config FILE] [--json]
                   aasa-server links list [HOST] [--config FILE] [--json]
                   aasa-server links show|disable|enable|delete SHORT_LINK [--config FILE] [--json]
                   aasa-server links update SHORT_LINK [--link URL] [--web URL] [--ios-fallback URL] [--title TEXT] …
                       [--parameter NAME=VALUE]... [--remove NAME]... [--config FILE] [--json]
                   aasa-server links stats SHORT_LINK [--days N] [--config FILE] [--json]
                   aasa-server links qr SHORT_LINK [--output FILE.svg|FILE.png] [--config FILE]
                   aasa-server links disable-domain|enable-domain HOST [--config FILE] [--json]
                   aasa-server links export [HOST] [--config FILE]
                   aasa-server links import (--takeout FILE.csv [--domain HOST] | FILE.jsonl) [--dry-run]
                       [--config FILE] [--json]

            Every action but import takes --server URL [--token-file FILE] in place of --config FILE.

            create stores a new link and prints it: https://HOST/SUFFIX, the suffix unguessable (96 random bits,
            17 characters) unless --alias names it or --short asks for the shortest free one (at least 4).
            update sets the values given and removes --remove's, checked as create checks them. disable makes the
            link answer 410 Gone; enable brings it back; delete frees its path. Every change is recorded; show
            prints the link and its history. SHORT_LINK is https://HOST/SUFFIX or HOST/SUFFIX.
            disable-domain is the kill switch of a whole link domain: every stored link on it answers 410 Gone
            (the links are kept) until enable-domain.

            stats prints a link's clicks per day and visitor class for the last N days (default 7), people
            apart from crawlers and HEAD requests; a running server writes them every 5 seconds.

            qr draws the link's QR code in the terminal, or writes it to a new --output file, SVG or PNG — the
            image a running server gives at https://HOST/_/qr/SUFFIX.svg and .png.

            With --server URL (a running server's admin listener, e.g. http://127.0.0.1:9090, and --token-file
            with its admin or API token) every action but import goes through the server's link API instead of
            the database, for a machine that reaches the server and not its store; the server checks what create
            and update check here, and the output is the same.

            export prints every live link as JSON lines; import reads them back, or Google Takeout's CSV of
            Firebase Dynamic Links (--takeout: each short link's path on --domain, or on its own host). An
            import checks every record as create does, never replaces a link that differs (it is reported),
            skips archived FDL links, and is idempotent: a second run changes nothing. It reports what was
            imported, unchanged and skipped, with the line and why; --dry-run writes nothing.

            OPTIONS:
              --config FILE       The config (default: the built-in example, which has no link domain).
              --server URL        A running server's admin listener (http:// or https://) instead of --config.
              --token-file FILE   With --server: the admin token or the API token (sent as Authorization: Bearer).
              --domain HOST       The link domain: a host of a site with "links".
              --link URL          The deep link the app receives (FDL's link).
              --alias NAME        The suffix: letters, digits, '-' and '_', at most 64, not starting with '_'.
              --short             The shortest free suffix instead of an unguessable one.
              --ios-fallback URL  Where an iPhone without the app goes instead of the App Store (ifl).
              --ipad-fallback URL
                                  Where an iPad without the app goes (ipfl).
              --android-fallback URL
                                  Where an Android phone without the app goes instead of Google Play (afl).
              --web URL           Where desktops go (ofl; default: the deep link).
              --title TEXT        The link preview's title (st).
              --description TEXT  The link preview's description (sd).
              --image URL         The link preview's image, an https URL (si).
              --parameter NAME=VALUE
                                  Any other FDL parameter (efr, amv, ct, pt, at, mt, ibi, isi, apn); repeatable.
              --remove NAME       With update: take the parameter NAME away (ifl, st …); repeatable.
              --takeout FILE.csv  With import: Google Takeout's export of Firebase Dynamic Links.
              --dry-run           With import: check and report, write nothing.
              --days N            With stats: how many days back, today included (default 7).
              --output FILE       With qr: a new .svg or .png file to write the code to (never overwritten).
              --json              Print JSON: {"shortLink", "domain", "suffix", "state", "parameters", "created",
                                  "updated"} (list: an array of them; import: {"imported", "unchanged",
                                  "skipped": [{"line", "link", "reason"}]}).
              --help              Show this help.

            EXIT STATUS: 0 done, 1 refused (a destination off links.allow, a path already taken, no such link; an
            import that skipped a record), 2 usage error, an unreadable config, file or link store.

            """,
        spec: ArgumentSpec(
            options: [
                "--config", "--domain", "--link", "--alias", "--ios-fallback", "--ipad-fallback", "--android-fallback", "--web",
                "--title", "--description", "--image", "--takeout", "--days", "--output", "--server", "--token-file",
            ],
            repeatableOptions: ["--parameter", "--remove"],
            flags: ["--short", "--json", "--dry-run"],
            positionalName: "ACTION"
        ),
        run: run
    )

    static func run(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        let usage = subcommand.help
        guard let action = arguments.positionals.first else {
            return CommandLineTool.usageError(
                "name an action: create, list, show, update, disable, enable, delete, stats, qr, export, import, disable-domain or enable-domain",
                console: console,
                usage: usage
            )
        }
        if let server = arguments.value("--server") {
            guard arguments.value("--config") == nil else {
                return CommandLineTool.usageError(
                    "--server and --config each name where the links are: give one",
                    console: console,
                    usage: usage
                )
            }
            return LinksOverAPI.run(action, arguments, serverURL: server, console: console)
        }
        guard arguments.value("--token-file") == nil else {
            return CommandLineTool.usageError("--token-file goes with --server", console: console, usage: usage)
        }
        let configPath = arguments.value("--config") ?? BuiltInConfig.name
        guard let loaded = CommandLineTool.loadConfig(configPath, certificates: .notRead, console: console) else { return ExitStatus.usage }
        guard let config = loaded.config.config else {
            for finding in loaded.diagnostics.sortedForDisplay() where finding.severity == .error { console.err("\(finding)\n") }
            return ExitStatus.usage
        }
        let database: LinkDatabase
        do {
            guard let location = try LinkStoreLocation.configured(config.server, configPath: loaded.configPath) else {
                console.err(
                    "error: short links are kept in server.stateDirectory or server.linkStore.postgres, which \(configPath) sets neither of\n"
                )
                return ExitStatus.usage
            }
            database = try LinkDatabase(location)
        } catch {
            console.err("error: \(error)\n")
            return ExitStatus.usage
        }
        let now = Int64(Posix.unixTime())
        let json = arguments.has("--json")
        do throws(LinkStoreError) {
            switch action {
            case "create":
                return try create(Action(arguments: arguments, config: loaded.config, database: database, now: now, console: console))
            case "list":
                let domain = arguments.positionals.dropFirst().first?.lowercased()
                let links = try database.list(domain: domain)
                let switchedOff = try database.disabledDomains().filter { domain == nil || $0.key == domain }
                printList(links, disabledDomains: switchedOff, domain: domain, json: json, console: console)
                return ExitStatus.success
            case "stats":
                guard let (domain, suffix) = namedLink(arguments, "stats", console: console) else { return ExitStatus.usage }
                guard let days = statsDays(arguments, console: console) else { return ExitStatus.usage }
                let link = try liveLink(database, domain, suffix)
                let first = String(CivilTime(unixSeconds: Int(now) - (days - 1) * 86_400).isoSecond.prefix(10))
                let rows = try database.clicks(domain: domain, suffix: suffix, from: first).map {
                    ShortLinkAPI.ClickRow(day: $0.day, visitor: $0.visitor, outcome: $0.outcome, head: $0.head, count: $0.count)
                }
                console.out(json ? ShortLinkAPI.clicksJSON(link, rows, pretty: true) + "\n" : statsText(link, rows, days: days))
                return ExitStatus.success
            case "export":
                let domain = arguments.positionals.dropFirst().first?.lowercased()
                for link in try database.list(domain: domain) { console.out(JSONWriter.string(ShortLinkAPI.linkJSON(link)) + "\n") }
                return ExitStatus.success
            case "import":
                return try importLinks(Action(arguments: arguments, config: loaded.config, database: database, now: now, console: console))
            case "disable-domain", "enable-domain":
                guard arguments.positionals.count == 2 else {
                    return CommandLineTool.usageError("write: links \(action) HOST", console: console, usage: usage)
                }
                let domain = arguments.positionals[1].lowercased()
                guard linkDomain(domain, loaded.config, console: console) != nil else { return ExitStatus.failure }
                let disabled = action == "disable-domain"
                try database.setDomain(domain, disabled: disabled, now: now)
                printDomain(domain, disabledSince: try database.disabledDomains()[domain], json: json, console: console)
                return ExitStatus.success
            case "update":
                return try update(Action(arguments: arguments, config: loaded.config, database: database, now: now, console: console))
            case "qr":
                guard let (domain, suffix) = namedLink(arguments, "qr", console: console) else { return ExitStatus.usage }
                return qrCode(try liveLink(database, domain, suffix), output: arguments.value("--output"), console: console)
            case "show", "disable", "enable", "delete":
                guard let (domain, suffix) = namedLink(arguments, action, console: console) else { return ExitStatus.usage }
                let link: StoredLink
                switch action {
                case "show": link = try liveLink(database, domain, suffix)
                case "disable": link = try database.setState(domain: domain, suffix: suffix, .disabled, now: now)
                case "enable": link = try database.setState(domain: domain, suffix: suffix, .active, now: now)
                default: link = try database.setState(domain: domain, suffix: suffix, .deleted, now: now)
                }
                if action == "show" && !json {
                    console.out(text(link, history: try database.history(domain: domain, suffix: suffix)))
                } else {
                    printChanged(link, json: json, console: console)
                }
                return ExitStatus.success
            default:
                return CommandLineTool.usageError(
                    "unknown action '\(action)'; the actions are create, list, show, update, disable, enable, delete, stats, qr, export, import, disable-domain and enable-domain",
                    console: console,
                    usage: usage
                )
            }
        } catch {
            console.err("error: \(error)\n")
            return ExitStatus.failure
        }
    }

    /// `list`'s output: the domains switched off, then one line per link (or a JSON array of them).
    static func printList(_ links: [StoredLink], disabledDomains: [String: Int64], domain: String?, json: Bool, console: any Console) {
        if json {
            console.out(JSONWriter.string(.array(links.map(ShortLinkAPI.linkJSON)), pretty: true) + "\n")
            return
        }
        for (host, since) in disabledDomains.sorted(by: { $0.key < $1.key }) {
            console.out("\(host) is disabled since \(CivilTime(unixSeconds: Int(since)).isoSecond)Z: its links answer 410 Gone\n")
        }
        if links.isEmpty { console.out("no short links\(domain.map { " on \($0)" } ?? "")\n") }
        for link in links { console.out("\(link.shortLink)  \(link.state.rawValue)  \(link.parameters["link"] ?? "")\n") }
    }

    /// A link after `disable`, `enable` or `delete` (or `show --json`).
    static func printChanged(_ link: StoredLink, json: Bool, console: any Console) {
        if json {
            console.out(JSONWriter.string(ShortLinkAPI.linkJSON(link), pretty: true) + "\n")
        } else {
            console.out(
                "\(link.shortLink) \(link.state == .active ? "enabled" : link.state == .disabled ? "disabled (410 Gone)" : "deleted")\n"
            )
        }
    }

    static func printDomain(_ domain: String, disabledSince: Int64?, json: Bool, console: any Console) {
        if json {
            console.out(ShortLinkAPI.domainJSON(domain, disabledSince: disabledSince) + "\n")
        } else {
            console.out(disabledSince != nil ? "\(domain) disabled: every stored link on it answers 410 Gone\n" : "\(domain) enabled\n")
        }
    }

    /// `--days` of `stats` (default 7); nil once the usage error is said.
    static func statsDays(_ arguments: ParsedArguments, console: any Console) -> Int? {
        let days = arguments.value("--days").map { Int($0) ?? 0 } ?? 7
        guard days >= 1, days <= ShortLinkAPI.statsDayLimit else {
            _ = CommandLineTool.usageError(
                "--days takes a number of days from 1 to \(ShortLinkAPI.statsDayLimit)",
                console: console,
                usage: subcommand.help
            )
            return nil
        }
        return days
    }

    /// The SHORT_LINK an action names; nil once the usage error is said.
    static func namedLink(_ arguments: ParsedArguments, _ action: String, console: any Console) -> (String, String)? {
        guard arguments.positionals.count == 2, let named = StoredLink.locate(arguments.positionals[1]) else {
            _ = CommandLineTool.usageError("write: links \(action) https://HOST/SUFFIX", console: console, usage: subcommand.help)
            return nil
        }
        return named
    }

    /// The link, unless it does not exist or was deleted.
    private static func liveLink(_ database: LinkDatabase, _ domain: String, _ suffix: String) throws(LinkStoreError) -> StoredLink {
        guard let link = try database.link(domain: domain, suffix: suffix), link.state != .deleted else {
            throw LinkStoreError.notFound(domain: domain, suffix: suffix)
        }
        return link
    }

    /// The link's QR code: drawn in the terminal, or written to a new SVG or PNG file (never over one that
    /// exists) — the same image the server gives at /_/qr/SUFFIX.svg and .png.
    static func qrCode(_ link: StoredLink, output: String?, console: any Console) -> Int32 {
        guard let code = QRCode(link.shortLink) else {
            console.err("error: \(link.shortLink) is too long for a QR code\n")
            return ExitStatus.failure
        }
        guard let output else {
            console.out(code.text(ansi: console.stdoutIsTerminal))
            return ExitStatus.success
        }
        let bytes: [UInt8]
        if output.hasSuffix(".svg") {
            bytes = Array(code.svg().utf8)
        } else if output.hasSuffix(".png") {
            do throws(ZlibError) {
                bytes = try code.png(zlib: { input throws(ZlibError) in try Gzip.zlibStream(input) })
            } catch {
                console.err("error: \(error)\n")
                return ExitStatus.failure
            }
        } else {
            return CommandLineTool.usageError(
                "--output names a .svg or a .png file, not '\(output)'",
                console: console,
                usage: subcommand.help
            )
        }
        do throws(SystemError) {
            guard try Posix.createExclusively(bytes, at: output) else {
                console.err("error: \(output) exists; the QR code is written only to a new file\n")
                return ExitStatus.failure
            }
        } catch {
            console.err("error: \(error)\n")
            return ExitStatus.usage
        }
        console.out("\(output): the QR code of \(link.shortLink)\n")
        return ExitStatus.success
    }

    /// What an action works with: the command line, the config, the store and the time it started.
    struct Action {
        var arguments: ParsedArguments
        var config: LoadedConfig
        var database: LinkDatabase
        var now: Int64
        var console: any Console
    }

    /// The site serving `domain` and its links; nil once it is said that `domain` is not a link domain.
    private static func linkDomain(_ domain: String, _ config: LoadedConfig, console: any Console) -> (Site, SiteLinks)? {
        guard let site = config.site(forHost: domain), let links = site.site.links else {
            console.err("error: \(domain) is not a link domain of the config: no site with \"links\" serves it\n")
            return nil
        }
        return (site.site, links)
    }

    /// The parameters the options give (`--link`, `--web` … and `--parameter NAME=VALUE`), set in
    /// `parameters`; false once a usage error is said.
    static func given(_ arguments: ParsedArguments, into parameters: inout [String: String], console: any Console) -> Bool {
        for given in arguments.all("--parameter") {
            guard let equals = given.firstIndex(of: "="), equals != given.startIndex else {
                _ = CommandLineTool.usageError("--parameter takes NAME=VALUE, not '\(given)'", console: console, usage: subcommand.help)
                return false
            }
            parameters[String(given[..<equals])] = String(given[given.index(after: equals)...])
        }
        for (option, name) in parameterOptions { if let value = arguments.value(option) { parameters[name] = value } }
        return true
    }

    /// Whether `parameters` make a link the site accepts (its allowlist, its app); the refusal said with the
    /// option that set the value.
    private static func accepted(
        _ parameters: [String: String],
        domain: String,
        site: Site,
        links: SiteLinks,
        console: any Console
    ) -> Bool {
        let ownHosts = Set(site.hosts.map(\.value.description)).union([domain])
        guard case .failure(let refusal) = FirebaseLongLink.rule(parameters, links: links, ownHosts: ownHosts) else { return true }
        let option = parameterOptions.first { $0.1 == refusal.parameter }.map { "\($0.0) (\(refusal.parameter))" } ?? refusal.parameter
        console.err("error: \(option) \(refusal.reason)\n")
        return false
    }

    /// `update`: the options' parameters set, `--remove NAME`'s taken away, checked as create checks them,
    /// and recorded in the link's history.
    private static func update(_ action: Action) throws(LinkStoreError) -> Int32 {
        let (arguments, config, database, now, console) = (action.arguments, action.config, action.database, action.now, action.console)
        guard let (domain, suffix) = namedLink(arguments, "update", console: console) else { return ExitStatus.usage }
        let existing = try liveLink(database, domain, suffix)
        guard let (site, links) = linkDomain(domain, config, console: console) else { return ExitStatus.failure }
        var parameters = existing.parameters
        guard given(arguments, into: &parameters, console: console) else { return ExitStatus.usage }
        for name in arguments.all("--remove") { parameters[name] = nil }
        guard parameters != existing.parameters else {
            return CommandLineTool.usageError(
                "update changes nothing: give the values to set (--link, --web, --parameter NAME=VALUE …) or --remove NAME",
                console: console,
                usage: subcommand.help
            )
        }
        guard parameters["link"] != nil else {
            console.err("error: --remove link would leave the link without its deep link\n")
            return ExitStatus.failure
        }
        guard accepted(parameters, domain: domain, site: site, links: links, console: console) else { return ExitStatus.failure }
        let link = try database.update(domain: domain, suffix: suffix, parameters: parameters, now: now)
        if arguments.has("--json") {
            console.out(JSONWriter.string(ShortLinkAPI.linkJSON(link), pretty: true) + "\n")
        } else {
            console.out("\(link.shortLink) updated\n")
        }
        return ExitStatus.success
    }

    /// The FDL parameter each option sets.
    static let parameterOptions = [
        ("--link", "link"), ("--ios-fallback", "ifl"), ("--ipad-fallback", "ipfl"), ("--android-fallback", "afl"), ("--web", "ofl"),
        ("--title", "st"), ("--description", "sd"), ("--image", "si"),
    ]

    private static func create(_ action: Action) throws(LinkStoreError) -> Int32 {
        let (arguments, config, database, now, console) = (action.arguments, action.config, action.database, action.now, action.console)
        let usage = subcommand.help
        guard let domain = arguments.value("--domain")?.lowercased() else {
            return CommandLineTool.usageError(
                "create needs --domain HOST (a host of a site with \"links\")",
                console: console,
                usage: usage
            )
        }
        guard let (site, links) = linkDomain(domain, config, console: console) else { return ExitStatus.failure }
        var parameters: [String: String] = [:]
        guard given(arguments, into: &parameters, console: console) else { return ExitStatus.usage }
        guard parameters["link"] != nil else {
            return CommandLineTool.usageError("create needs --link URL (the deep link)", console: console, usage: usage)
        }
        guard accepted(parameters, domain: domain, site: site, links: links, console: console) else { return ExitStatus.failure }
        let suffix: String
        if let alias = arguments.value("--alias") {
            if arguments.has("--short") {
                return CommandLineTool.usageError("--alias and --short both name the suffix; give one", console: console, usage: usage)
            }
            if let problem = ShortLinkSuffix.aliasProblem(alias) {
                console.err("error: --alias \(alias) \(problem)\n")
                return ExitStatus.failure
            }
            suffix = alias
        } else {
            suffix = try database.newSuffix(domain: domain, short: arguments.has("--short"))
        }
        let link = try database.create(StoredLink(domain: domain, suffix: suffix, parameters: parameters), now: now)
        console.out(arguments.has("--json") ? JSONWriter.string(ShortLinkAPI.linkJSON(link), pretty: true) + "\n" : link.shortLink + "\n")
        return ExitStatus.success
    }

    private static func importLinks(_ action: Action) throws(LinkStoreError) -> Int32 {
        let (arguments, config, database, now, console) = (action.arguments, action.config, action.database, action.now, action.console)
        let usage = subcommand.help
        let plan: ShortLinkImport.Plan
        if let takeout = arguments.value("--takeout") {
            guard arguments.positionals.count == 1 else {
                return CommandLineTool.usageError("import --takeout FILE.csv takes no other file", console: console, usage: usage)
            }
            guard let bytes = Files.readArgument(takeout, console: console, limit: 256 * 1024 * 1024) else { return ExitStatus.usage }
            switch TakeoutCSV.read(bytes) {
            case .failure(let problem):
                console.err("error: \(takeout)\(problem.line > 0 ? ":\(problem.line)" : ""): \(problem.reason)\n")
                return ExitStatus.usage
            case .success(let result):
                plan = ShortLinkImport.takeout(result, domain: arguments.value("--domain")?.lowercased(), config: config, now: now)
            }
        } else {
            guard arguments.positionals.count == 2 else {
                return CommandLineTool.usageError(
                    "write: links import FILE.jsonl, or links import --takeout FILE.csv",
                    console: console,
                    usage: usage
                )
            }
            guard let bytes = Files.readArgument(arguments.positionals[1], console: console, limit: 256 * 1024 * 1024) else {
                return ExitStatus.usage
            }
            plan = ShortLinkImport.jsonLines(bytes, config: config)
        }
        let dryRun = arguments.has("--dry-run")
        var imported = 0
        var unchanged = 0
        var skipped = plan.skipped
        try database.batch { () throws(LinkStoreError) in
            for candidate in plan.candidates {
                let link = candidate.link
                if let existing = try database.link(domain: link.domain, suffix: link.suffix), existing.state != .deleted {
                    if existing.parameters == link.parameters {
                        unchanged += 1
                    } else {
                        skipped.append(
                            ShortLinkImport.Skip(
                                line: candidate.line,
                                what: link.shortLink,
                                reason: "already exists with other parameters; not replaced (links show \(link.shortLink))"
                            )
                        )
                    }
                    continue
                }
                imported += 1
                if dryRun { continue }
                try database.create(link, now: link.created > 0 ? link.created : now)
                if link.state == .disabled { try database.setState(domain: link.domain, suffix: link.suffix, .disabled, now: now) }
            }
        }
        skipped.sort { $0.line < $1.line }
        if arguments.has("--json") {
            let rows: [JSONOutput] = skipped.map {
                .object([("line", .int($0.line)), ("link", .string($0.what)), ("reason", .string($0.reason))])
            }
            console.out(
                JSONWriter.string(
                    .object([
                        ("imported", .int(imported)), ("unchanged", .int(unchanged)), ("skipped", .array(rows)), ("dryRun", .bool(dryRun)),
                    ]),
                    pretty: true
                ) + "\n"
            )
        } else {
            for skip in skipped { console.out("line \(skip.line): skipped\(skip.what.isEmpty ? "" : " " + skip.what): \(skip.reason)\n") }
            console.out(
                "\(dryRun ? "would import" : "imported") \(imported), unchanged \(unchanged), skipped \(skipped.count)"
                    + (dryRun ? " (dry run: nothing written)" : "") + "\n"
            )
        }
        return skipped.isEmpty ? ExitStatus.success : ExitStatus.failure
    }

    static let statsColumns = ["iphone", "ipad", "android", "desktop", "in-app", "crawler"]

    /// Clicks per day and class, HEAD requests in a column of their own.
    static func statsText(_ link: StoredLink, _ rows: [ShortLinkAPI.ClickRow], days: Int) -> String {
        var text = "\(link.shortLink): clicks in the last \(days) day\(days == 1 ? "" : "s") (UTC)\n"
        let appOutcomes = Set(ShortLinkAPI.appEvents.map(\.0))
        let events = rows.filter { appOutcomes.contains($0.outcome) }
        let rows = rows.filter { !appOutcomes.contains($0.outcome) }
        // What the app said happened after the click: below the clicks, by event and platform.
        var appText = ""
        for (outcome, _) in ShortLinkAPI.appEvents {
            let counted = events.filter { $0.outcome == outcome }
            guard !counted.isEmpty else { continue }
            var byPlatform: [String: Int] = [:]
            for row in counted { byPlatform[row.visitor, default: 0] += row.count }
            let parts = byPlatform.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            let name = ["install": "installs (claims)", "first-open": "first opens", "re-open": "re-opens"][outcome] ?? outcome
            appText += "\(name): \(counted.reduce(0) { $0 + $1.count }) (\(parts))\n"
        }
        guard !rows.isEmpty else { return text + "no clicks\n" + appText }
        let header = ["day"] + statsColumns + ["HEAD"]
        func line(_ cells: [String]) -> String { (cells.dropLast().map { $0.padding(11) } + [cells.last ?? ""]).joined() + "\n" }
        text += line(header)
        var byDay: [String: [String: Int]] = [:]
        for row in rows { byDay[row.day, default: [:]][row.head ? "HEAD" : row.visitor, default: 0] += row.count }
        var total: [String: Int] = [:]
        for day in byDay.keys.sorted() {
            let counts = byDay[day] ?? [:]
            text += line([day] + (statsColumns + ["HEAD"]).map { String(counts[$0] ?? 0) })
            total.merge(counts, uniquingKeysWith: +)
        }
        text += line(["total"] + (statsColumns + ["HEAD"]).map { String(total[$0] ?? 0) })
        return text + appText
    }

    static func text(_ link: StoredLink, history: [(at: Int64, change: String, parameters: [String: String])]) -> String {
        var text = "\(link.shortLink)  \(link.state.rawValue)\n"
        for (name, value) in link.parameters.sorted(by: { $0.key < $1.key }) { text += "  \(name) = \(value)\n" }
        text += "history:\n"
        for entry in history { text += "  \(CivilTime(unixSeconds: Int(entry.at)).isoSecond)Z  \(entry.change)\n" }
        return text
    }
}
