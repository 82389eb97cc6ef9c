import AASA
import FetchRecords
import HTTP1
import Posix
import Server
import Support

/// `status`: has Apple (or Google) fetched the current version yet? Asks running servers' admin
/// listeners, or reads state directories (every replica's records), merges what they saw, and answers
/// per host in sentences or JSON.
enum StatusCommand {
    static let subcommand = CommandLineTool.Subcommand(
        name: "status",
        abstract: "Say per host which version Apple's CDN, devices and Google's verifier last fetched.",
        help: """
            OVERVIEW: Has Apple picked up my change yet? For each host: the version served now and since when,
            and for Apple's CDN (AASA-Bot), Apple devices in developer mode (swcd) and Google's verifier
            (GoogleAssociationService) the last fetch, the version it got and whether that is the current one;
            with the Cache-Control the server sends and how long ago the document changed. Behind a load
            balancer each replica sees part of the fetches: name every replica's admin listener, or the state
            directories, and their records are merged. Replicas sharing a PostgreSQL database
            (server.linkStore.postgres) keep their records there: any one replica's admin listener answers for all.

            USAGE: aasa-server status [HOST...] [--admin HOST:PORT]... [--token-file FILE] [--state DIR]... [--json]
                                      [--timeout SECONDS]

            ARGUMENTS:
              HOST                The hosts to report (default: every host a known fetcher fetched).

            OPTIONS:
              --admin HOST:PORT   A running server's admin listener (repeatable; default 127.0.0.1:9090 when no
                                  --state is given). Its /status answer carries the version served now.
              --token-file FILE   The admin token (the server's adminTokenFile), sent as Authorization: Bearer to
                                  every --admin listener.
              --state DIR         A state directory (server.stateDirectory; repeatable). Without a server, the
                                  current version is the last one recorded there.
              --json              One JSON object: {"hosts": [...]} with versions and fetches per host.
              --timeout SECONDS   Per admin listener (default 3).
              --help              Show this help.

            EXIT STATUS: 0 reported, 1 a source could not be read (the others are still reported), 2 usage error.

            """,
        spec: ArgumentSpec(
            options: ["--timeout", "--token-file"],
            repeatableOptions: ["--admin", "--state"],
            flags: ["--json"],
            positionalName: "HOST"
        ),
        run: run
    )

    static func run(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        let usage = subcommand.help
        var timeout = 3.0
        if let text = arguments.value("--timeout") {
            guard let seconds = Double(text), seconds > 0, seconds <= 60 else {
                return CommandLineTool.usageError("--timeout takes seconds, from 0.1 to 60", console: console, usage: usage)
            }
            timeout = seconds
        }
        var admins: [ServerSettings.Listener] = []
        for text in arguments.all("--admin") {
            switch ServerSettings.parseListenAddress(text) {
            case .success(let listener): admins.append(listener)
            case .failure(let error): return CommandLineTool.usageError("--admin \(error.message)", console: console, usage: usage)
            }
        }
        let token: String?
        switch HealthcheckCommand.token(arguments) {
        case .success(let read): token = read
        case .failure(let error): return CommandLineTool.usageError(error.message, console: console, usage: usage)
        }
        let states = arguments.all("--state")
        if admins.isEmpty && states.isEmpty { admins = [ServerSettings.Listener(address: "127.0.0.1", port: 9090)] }

        func ask(_ admin: ServerSettings.Listener, _ path: String) -> Result<ParsedResponse, HealthcheckCommand.Problem> {
            HealthcheckCommand.get(
                address: HealthcheckCommand.reachable(admin),
                port: admin.port,
                path: path,
                timeout: timeout,
                bearerToken: token
            )
        }
        var merged: [String: HostStatus] = [:]
        var failed = false
        func fold(_ status: HostStatus) {
            guard var known = merged[status.host] else {
                merged[status.host] = status
                return
            }
            var ledger = FetchLedger(limit: Int.max)
            for history in [known.history, status.history] {
                for version in history.versions { ledger.add(version) }
                for fetch in history.fetches { ledger.add(fetch) }
            }
            known.history = ledger.hosts[status.host] ?? known.history
            // A server's view of what is served now beats a version read from records.
            for (document, version) in status.current where known.current[document].map({ version.since > $0.since }) ?? true {
                known.current[document] = version
            }
            known.cacheControl = known.cacheControl ?? status.cacheControl
            merged[status.host] = known
        }
        for admin in admins {
            switch ask(admin, "/status") {
            case .success(let response) where response.status == 200:
                let parsed = JSONParser.parse(response.body)
                for node in parsed.root?["hosts"]?.arrayValue ?? [] {
                    if let status = HostStatus.parse(node) { fold(status) }
                }
            case .success(let response):
                console.err(
                    "warning: the admin listener \(admin.description) answered /status with \(response.status) \(response.reason)\n"
                )
                failed = true
            case .failure(let problem):
                console.err("warning: the admin listener \(admin.description): \(problem)\n")
                failed = true
            }
        }
        for directory in states {
            guard Posix.isDirectory(directory) else {
                console.err("warning: the state directory \(directory) does not exist\n")
                failed = true
                continue
            }
            let read = RecordStore.read(directory: directory, limit: 10_000)
            for warning in read.warnings { console.err("warning: \(warning)\n") }
            for (host, history) in read.ledger.hosts { fold(HostStatus(host: host, history: history)) }
        }
        let requested = arguments.positionals.map { HostTable<Int>.normalize($0) }
        let hosts = requested.isEmpty ? merged.keys.sorted() : requested
        // A host no fetcher asked for is not in /status: its own page says whether the config serves it
        // (200 with the version served now) or not (404).
        var notServed: Set<String> = []
        var servedBy: Set<String> = []
        for host in requested where merged[host] == nil {
            for admin in admins {
                let address = admin.address == "0.0.0.0" ? "127.0.0.1" : admin.address == "::" ? "::1" : admin.address
                guard
                    case .success(let response) = HealthcheckCommand.get(
                        address: address,
                        port: admin.port,
                        path: "/status/\(host)",
                        timeout: timeout,
                        bearerToken: token
                    )
                else { continue }
                if response.status == 200, let node = JSONParser.parse(response.body).root?["host"], let status = HostStatus.parse(node) {
                    fold(status)
                    servedBy.insert(host)
                } else if response.status == 404 {
                    notServed.insert(host)
                }
            }
        }
        notServed.subtract(servedBy)
        let now = Int(Posix.unixTime() * 1000)
        if arguments.has("--json") {
            let items: [JSONOutput] = hosts.map { host in
                if notServed.contains(host) { return .object([("host", .string(host)), ("served", .bool(false))]) }
                return merged[host]?.json ?? HostStatus(host: host, history: HostHistory()).json
            }
            console.out(JSONWriter.string(.object([("hosts", .array(items))]), pretty: true) + "\n")
        } else if hosts.isEmpty {
            console.out("no fetch by Apple's CDN, an Apple device or Google's verifier recorded yet\n")
        } else {
            for host in hosts {
                console.out("\(host)\n")
                let status = merged[host] ?? HostStatus(host: host, history: HostHistory())
                if notServed.contains(host) {
                    console.out("  the config does not serve \(host): it gets the unknown-host answer, and no fetch of it is recorded\n")
                    continue
                }
                if admins.isEmpty && merged[host] == nil {
                    console.out(
                        "  nothing recorded for this host in the state directories (ask a running server with --admin to learn "
                            + "whether its config serves it)\n"
                    )
                } else if status.history.fetches.isEmpty {
                    console.out("  served, and no known fetcher has asked for it yet\n")
                }
                for sentence in status.sentences(now: now) { console.out("  \(sentence)\n") }
            }
        }
        return failed ? ExitStatus.failure : ExitStatus.success
    }
}
