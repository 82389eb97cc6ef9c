import AASA
import FetchRecords
import Posix
import Server
import TLS

enum DevCommand {
    static let subcommand = CommandLineTool.Subcommand(
        name: "dev",
        abstract: "Serve HTTPS for ?mode=developer hosts with a local CA, in one command.",
        help: """
            OVERVIEW: A local HTTPS host for associated domains in developer mode (applinks:HOST?mode=developer).

            Creates once (and reuses) a local CA and a certificate for the hosts in the state directory,
            writes a starter config when none is given (never overwriting one that exists; --app later
            changes only its app ID), and a .mobileconfig profile for installing the CA on a device. Once
            listening it prints the entitlement lines, the addresses a phone on the same network can use,
            the device steps, a curl command for the address and port actually bound, and warnings for
            set-ups a phone cannot use (loopback only, a port other than 443). It serves the documents over
            HTTPS, and over plain HTTP (--http-port) a page with the steps at / and the CA profile at
            /ca.mobileconfig, whose address it prints as a QR code for the phone's camera. When the device
            fetches the file it prints a line saying so, with the status and whether that is the current version.

            On the device: Developer Mode on (Settings → Privacy & Security), Settings → Developer →
            Associated Domains Development on, install the Debug build, then test a URL in Settings →
            Developer → Universal Links → Diagnostics. Developer mode accepts a certificate the device does
            not trust, but not an invalid one (names and dates must fit; the dev certificate's do); the CA
            profile (installed in Settings → General → VPN & Device Management, trusted in Settings →
            General → About → Certificate Trust Settings) is only for Safari and curl. The host name must
            resolve to this machine on the phone's network, on port 443: entitlements carry no port.

            USAGE: aasa-server dev --host HOST [--host HOST]... [--app TEAMID.BUNDLE] [--config FILE]
                                   [--port 443] [--http-port 80] [--listen ADDR] [--public-address ADDR]...
                                   [--state-dir DIR]

            OPTIONS:
              --host HOST            A development host (repeatable), e.g. dev.example.com.
              --app TEAMID.BUNDLE    The app the starter config names; on a later run it replaces the app ID
                                     in the starter config (never in a config given with --config).
              --config FILE          Serve this config's sites instead (its listeners and certificates are
                                     replaced by dev's; the file is never modified).
              --port PORT            HTTPS port (default 443; 0 picks a free one).
              --http-port PORT       Plain-HTTP port for the steps page and the CA profile (default 80 with
                                     --port 443, else 0: a free one).
              --listen ADDR          Address to listen on (default: all interfaces, IPv4 and IPv6).
              --public-address ADDR  The address a phone uses to reach this server when it is not one of this
                                     machine's (in a container, behind NAT); repeatable.
              --state-dir DIR        Where the CA, certificate, starter config and profile live (default ./.aasa-dev).
              --help                 Show this help.

            EXAMPLES:
              sudo aasa-server dev --host dev.example.com --app ABCDE12345.com.example.app
              aasa-server dev --host dev.example.com --port 8443 --listen 127.0.0.1   # curl only

            """,
        spec: ArgumentSpec(
            options: ["--config", "--app", "--port", "--http-port", "--listen", "--state-dir"],
            repeatableOptions: ["--host", "--public-address"]
        ),
        run: run
    )

    static func run(_ arguments: ParsedArguments, _ console: any Console) -> Int32 {
        let usage = subcommand.help
        let hosts = arguments.all("--host").map { $0.lowercased() }
        if let problem = DevState.validateHosts(hosts) { return CommandLineTool.usageError(problem, console: console, usage: usage) }
        if let wildcard = hosts.first(where: { $0.hasPrefix("*.") }) {
            return CommandLineTool.usageError("\(wildcard): developer-mode hosts are exact names", console: console, usage: usage)
        }
        guard let port = Int(arguments.value("--port") ?? "443"), (0...65535).contains(port) else {
            return CommandLineTool.usageError("--port must be a number from 0 to 65535", console: console, usage: usage)
        }
        guard let httpPort = Int(arguments.value("--http-port") ?? (port == 443 ? "80" : "0")), (0...65535).contains(httpPort) else {
            return CommandLineTool.usageError("--http-port must be a number from 0 to 65535", console: console, usage: usage)
        }
        let requestedApp = arguments.value("--app")
        if let requestedApp {
            var appFindings: [Diagnostic] = []
            AASAValidator.validateAppID(Located(requestedApp)) { severity, rule, message, _ in
                appFindings.append(Diagnostic(severity, rule, message))
            }
            if appFindings.hasErrors {
                return CommandLineTool.usageError("--app \(appFindings[0].message)", console: console, usage: usage)
            }
        }
        var addresses = ["0.0.0.0", "::"]
        if let listen = arguments.value("--listen") {
            guard ServerSettings.isIPLiteral(listen) else {
                return CommandLineTool.usageError("--listen takes an IP address such as 127.0.0.1 or ::", console: console, usage: usage)
            }
            addresses = [listen]
        }
        let publicAddresses = arguments.all("--public-address")
        if let bad = publicAddresses.first(where: { !ServerSettings.isIPLiteral($0) }) {
            return CommandLineTool.usageError(
                "--public-address \(bad): give the IP address the phone connects to, e.g. 192.168.1.20",
                console: console,
                usage: usage
            )
        }
        let stateDirectory = arguments.value("--state-dir") ?? ".aasa-dev"
        let now = Int(Posix.unixTime())

        // Certificates, created once and reused.
        let files: DevState.Files
        do {
            let (made, createdAuthority, createdLeaf) = try DevState.ensure(hosts: hosts, directory: stateDirectory, now: now)
            files = made
            console.err(
                createdAuthority ? "created a local CA: \(files.caCertificate)\n" : "reusing the local CA: \(files.caCertificate)\n"
            )
            if createdLeaf { console.err("created a certificate for \(hosts.joined(separator: ", "))\n") }
        } catch {
            console.err("error: cannot create certificates in \(stateDirectory): \(error)\n")
            return ExitStatus.failure
        }

        guard
            let configPath = prepareConfig(
                arguments.value("--config"),
                hosts: hosts,
                app: requestedApp,
                stateDirectory: stateDirectory,
                console: console
            )
        else { return ExitStatus.failure }

        // The CA profile: written for AirDrop or mail, and published for Safari on the phone.
        let profilePath = stateDirectory + "/aasa-dev-ca.mobileconfig"
        guard let caPEM = try? Posix.readFile(files.caCertificate, limit: Posix.ReadLimit.certificate) else {
            console.err("error: cannot read \(files.caCertificate)\n")
            return ExitStatus.failure
        }
        let profile = Array(MobileConfig.profile(caPEM: caPEM).utf8)
        do {
            try Posix.writeFileAtomically(profile, to: profilePath)
        } catch {
            console.err("error: cannot write \(profilePath): \(error)\n")
            return ExitStatus.failure
        }

        // Serving settings: HTTPS only, with the dev certificate; the rest of the user's server settings
        // (cache control, limits) apply, and keep applying across reloads.
        let certificate = ServerSettings.CertificateEntry(
            hosts: hosts,
            // Absolute paths: certificate paths are resolved against the config's directory otherwise.
            certificate: Posix.canonicalPath(files.certificate),
            key: Posix.canonicalPath(files.key)
        )
        let published = [
            ServerSettings.PublishedFile(path: MobileConfig.path, contentType: MobileConfig.contentType, body: profile),
            ServerSettings.PublishedFile(path: "/", contentType: LandingPage.contentType, body: Array(LandingPage.html(hosts: hosts).utf8)),
        ]
        let options = GenerationOptions(forDevelopment: true) { [addresses] configured in
            var settings = configured
            settings.listeners =
                addresses.map { ServerSettings.Listener(address: $0, port: port, tls: true) }
                + addresses.map { ServerSettings.Listener(address: $0, port: httpPort) }
            settings.listenersConfigured = true
            settings.admin = nil
            // The terminal is for people here: fetches are told in words (fetchLine), not as JSON log lines.
            settings.accessLog = false
            settings.certificates = [certificate]
            settings.publishedFiles = published
            return settings
        }
        let certificates = CertificateSupply.files(developmentExpected: true)
        guard let loaded = CommandLineTool.loadConfig(configPath, certificates: certificates, options: options, console: console) else {
            return ExitStatus.usage
        }
        let printer = DiagnosticPrinter(colour: console.stderrIsTerminal, sources: loaded.sources)
        printer.print(loaded.diagnostics.sortedForDisplay(), to: console)
        if loaded.diagnostics.hasErrors { return ExitStatus.failure }
        for host in hosts where loaded.config.site(forHost: host) == nil {
            console.err("warning: \(configPath) has no site for \(host); it will get the unknownHost answer\n")
        }
        let fingerprint = CertificateInspector.summary(caPEM)?.sha256Fingerprint ?? "(unreadable)"

        guard case .success(let first) = Generation.first(loaded) else { return ExitStatus.failure }
        return HTTPServer.run(
            initial: first,
            // Straight to stdout: the supervisor thread reports fetches while the console belongs to this one.
            recording: FetchRecording(
                configPath: configPath,
                onFetch: { fetch, status in Posix.writeAll(1, Array((fetchLine(fetch, status) + "\n").utf8)) }
            ),
            readInputs: { ConfigReader.inputs(path: configPath, certificates: certificates, options: options) },
            bindFailureHint: { error in
                // Binding to 443 without privilege: say exactly how to fix it.
                guard error.isPermissionDenied, port < 1024 else { return nil }
                return "binding port \(port) needs privilege: run `sudo setcap cap_net_bind_service=+ep "
                    + "\(Posix.executablePath() ?? "aasa-server")` once, or run as root, or use --port 8443 "
                    + "(fine for curl, but a device cannot use it: entitlements carry no port)"
            },
            onListening: { listening in
                let guide = DeviceGuide(
                    hosts: hosts,
                    listening: listening,
                    interfaces: Posix.interfaceAddresses(),
                    publicAddresses: publicAddresses,
                    caCertificatePath: files.caCertificate,
                    profilePath: profilePath,
                    caFingerprint: fingerprint,
                    terminal: console.stdoutIsTerminal
                )
                console.out(guide.text)
            }
        )
    }

    /// What dev prints the moment a fetcher asks for a document: for a device in developer mode, the proof
    /// that the set-up works (or why not yet).
    static func fetchLine(_ fetch: FetchRecord, _ status: HostStatus) -> String {
        let what = "\(fetch.document.fileName) for \(fetch.host)"
        let current = status.current[fetch.document].map { $0.version == fetch.version } ?? false
        let version = fetch.status != 200 ? "no document" : current ? "current version" : "an earlier version"
        switch fetch.fetcher {
        case .appleDevice:
            let verdict = fetch.status == 200 && current ? " — developer mode works" : ""
            return "iPhone or iPad (\(fetch.client)) fetched \(what): \(fetch.status), \(version)\(verdict)"
        case .appleCDN where fetch.origin == .verified:
            return "Apple's CDN (\(fetch.client)) fetched \(what): \(fetch.status), \(version) — a device in developer mode "
                + "would fetch directly; check that the entitlement ends in ?mode=developer"
        case .googleVerifier where fetch.origin == .verified:
            return "Google's verifier (\(fetch.client)) fetched \(what): \(fetch.status), \(version)"
        case .appleCDN, .googleVerifier:
            // A User-Agent is a claim: from this machine or a private address it is curl or a script, not Apple.
            return "a client calling itself \(fetch.fetcher.displayName) (\(fetch.client)) fetched \(what): \(fetch.status), "
                + "\(version) — not \(fetch.fetcher == .appleCDN ? "Apple's" : "Google's") network, so not counted"
        }
    }

    /// The config to serve: the user's (never modified; `--app` then only gets a note), or the starter
    /// config — written when absent, its app ID replaced when `--app` names another. Nil after an error.
    static func prepareConfig(_ given: String?, hosts: [String], app: String?, stateDirectory: String, console: any Console) -> String? {
        if let given {
            if app != nil {
                console.err("note: --app was not applied: dev never edits a config you wrote (\(given)); set the app there\n")
            }
            return given
        }
        let path = stateDirectory + "/config.json"
        guard Posix.fileExists(path) else {
            do {
                try Posix.writeFileAtomically(
                    Array(StarterConfig.text(hosts: hosts, app: app ?? StarterConfig.placeholderApp).utf8),
                    to: path
                )
                console.err("wrote a starter config: \(path)\n")
            } catch {
                console.err("error: cannot write \(path): \(error)\n")
                return nil
            }
            if app == nil {
                console.err(
                    "warning: the starter config names the placeholder app \(StarterConfig.placeholderApp): the device will not "
                        + "open your app until you run dev again with --app TEAMID.BUNDLE (it updates \(path))\n"
                )
            }
            return path
        }
        guard let app else {
            console.err("using the existing starter config \(path) (edit it freely; it is never overwritten)\n")
            return path
        }
        guard let bytes = try? Posix.readFile(path, limit: Posix.ReadLimit.config) else {
            console.err("error: cannot read \(path)\n")
            return nil
        }
        switch StarterConfig.updatingApp(in: bytes, to: app) {
        case .unchanged:
            console.err("using the existing starter config \(path) (app \(app))\n")
        case .updated(let previous, let updated):
            do {
                try Posix.writeFileAtomically(updated, to: path)
                console.err("updated the app in the starter config \(path): \(previous) → \(app) (nothing else changed)\n")
            } catch {
                console.err("error: cannot write \(path): \(error)\n")
                return nil
            }
        case .notApplicable:
            console.err(
                "note: --app was not applied: \(path) no longer has \"apps\": {\"app\": \"…\"} (it was edited); set the app there yourself\n"
            )
        }
        return path
    }
}
