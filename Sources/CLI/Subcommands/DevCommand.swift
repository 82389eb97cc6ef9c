import AASA
import Posix
import Server
import TLS

enum DevCommand {
    static let placeholderApp = "REPLACEME0.com.example.your-app"

    static let subcommand = CommandLineTool.Subcommand(
        name: "dev",
        abstract: "Serve HTTPS for ?mode=developer hosts with a local CA, in one command.",
        help: """
            OVERVIEW: A local HTTPS host for associated domains in developer mode (applinks:HOST?mode=developer).

            Creates once (and reuses) a local CA and a certificate for the hosts in the state directory,
            writes a starter config when none is given (never overwriting one that exists), writes a
            .mobileconfig profile for installing the CA on a device, prints the entitlement lines, the device
            steps and a curl command to verify, then serves HTTPS. Devices in developer mode accept any
            certificate; installing the CA is only needed for Safari and curl. Entitlements cannot carry a
            port, so a device needs the host on 443.

            USAGE: aasa-server dev --host HOST [--host HOST]... [--config FILE] [--app TEAMID.BUNDLE]
                                   [--port 443] [--listen ADDR] [--state-dir DIR]

            OPTIONS:
              --host HOST          A development host (repeatable), e.g. dev.example.com.
              --config FILE        Serve this config's sites (its listeners and certificates are replaced).
              --app TEAMID.BUNDLE  The app for the starter config (default: a clearly marked placeholder).
              --port PORT          HTTPS port (default 443; 0 picks a free one).
              --listen ADDR        Address to listen on (default: all interfaces, IPv4 and IPv6).
              --state-dir DIR      Where the CA, certificate, starter config and profile live (default ./.aasa-dev).
              --help               Show this help.

            """,
        spec: ArgumentSpec(options: ["--config", "--app", "--port", "--listen", "--state-dir"], repeatableOptions: ["--host"]),
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
        let app = arguments.value("--app") ?? placeholderApp
        var appFindings: [Diagnostic] = []
        AASAValidator.validateAppID(Located(app)) { severity, rule, message, _ in
            appFindings.append(Diagnostic(severity, rule, message))
        }
        if appFindings.hasErrors {
            return CommandLineTool.usageError("--app \(appFindings[0].message)", console: console, usage: usage)
        }
        var addresses = ["0.0.0.0", "::"]
        if let listen = arguments.value("--listen") {
            guard ServerSettings.isIPLiteral(listen) else {
                return CommandLineTool.usageError("--listen takes an IP address such as 127.0.0.1 or ::", console: console, usage: usage)
            }
            addresses = [listen]
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

        // The config: the user's, or a starter one (never overwriting an existing file).
        var configPath = arguments.value("--config") ?? ""
        if configPath.isEmpty {
            configPath = stateDirectory + "/config.json"
            if Posix.fileExists(configPath) {
                console.err("using the existing starter config \(configPath) (edit it freely; it is never overwritten)\n")
            } else {
                do {
                    try Posix.writeFileAtomically(Array(starterConfig(hosts: hosts, app: app).utf8), to: configPath)
                    console.err("wrote a starter config: \(configPath)\n")
                } catch {
                    console.err("error: cannot write \(configPath): \(error)\n")
                    return ExitStatus.failure
                }
            }
            if app == placeholderApp {
                console.err(
                    "warning: the starter config lists the placeholder app \(placeholderApp); pass --app TEAMID.bundle or edit \(configPath)\n"
                )
            }
        }
        // Serving settings: HTTPS only, with the dev certificate; the rest of the user's server settings
        // (cache control, limits) apply, and keep applying across reloads.
        let certificate = ServerSettings.CertificateEntry(
            hosts: hosts,
            // Absolute paths: certificate paths are resolved against the config's directory otherwise.
            certificate: Posix.canonicalPath(files.certificate),
            key: Posix.canonicalPath(files.key)
        )
        let source = ConfigSource(path: configPath) { [addresses] configured in
            var settings = configured
            settings.listeners = addresses.map { ServerSettings.Listener(address: $0, port: port, tls: true) }
            settings.listenersConfigured = true
            settings.admin = nil
            settings.certificates = [certificate]
            return settings
        }
        guard let loaded = ConfigFiles.load(source, console: console) else { return ExitStatus.usage }
        let printer = DiagnosticPrinter(colour: console.stderrIsTerminal, sources: loaded.sources)
        printer.print(loaded.diagnostics.sortedForDisplay(), to: console)
        if loaded.diagnostics.hasErrors { return ExitStatus.failure }
        for host in hosts where loaded.config.site(forHost: host) == nil {
            console.err("warning: \(configPath) has no site for \(host); it will get the unknownHost answer\n")
        }

        let profilePath = stateDirectory + "/aasa-dev-ca.mobileconfig"
        if let caPEM = try? Posix.readFile(files.caCertificate, limit: Posix.ReadLimit.certificate) {
            try? Posix.writeFileAtomically(Array(mobileConfig(caPEM: caPEM).utf8), to: profilePath)
        }
        console.out(instructions(hosts: hosts, files: files, profilePath: profilePath, port: port))

        return HTTPServer.run(source: source, initial: loaded) { error in
            // Binding to 443 without privilege: say exactly how to fix it.
            guard error.isPermissionDenied, port < 1024 else { return nil }
            return "binding port \(port) needs privilege: run `sudo setcap cap_net_bind_service=+ep "
                + "\(Posix.executablePath() ?? "aasa-server")` once, or run as root, or use --port 8443 "
                + "(fine for curl, but a device cannot use it: entitlements carry no port)"
        }
    }

    static func starterConfig(hosts: [String], app: String) -> String {
        let hostList = hosts.map { "\"\($0)\"" }.joined(separator: ", ")
        return """
            {
              "version": 1,
              "comment": "Starter config written by `aasa-server dev`. Edit freely: it is never overwritten.",
              "apps": { "app": "\(app)" },
              "sites": [
                {
                  "hosts": [\(hostList)],
                  "applinks": {
                    "details": [
                      { "apps": ["app"], "components": [
                        { "#": "no_universal_links", "exclude": true, "comment": "a link that opts out" },
                        { "/": "/*", "comment": "everything else opens the app" }
                      ] }
                    ]
                  },
                  "webcredentials": { "apps": ["app"] }
                }
              ]
            }

            """
    }

    static func instructions(hosts: [String], files: DevState.Files, profilePath: String, port: Int) -> String {
        let shownPort = port == 443 ? "" : ":\(port)"
        var text = "\nAdd to the app's Associated Domains entitlement (Signing & Capabilities):\n"
        for host in hosts { text += "    applinks:\(host)?mode=developer\n    webcredentials:\(host)?mode=developer\n" }
        text += """

            On the device:
              1. Settings → Privacy & Security → Developer Mode: on (restart when asked).
              2. Settings → Developer → Associated Domains Development: on.
              3. Point \(hosts.joined(separator: ", ")) at this machine (DNS or a local resolver) and reinstall the Debug build.
              Developer mode accepts any certificate. For Safari or curl on the device, install the CA profile
              \(profilePath) and trust it in Settings → General → About → Certificate Trust Settings.

            The CA certificate: \(files.caCertificate)
            Verify from this machine:

            """
        for host in hosts {
            text +=
                "    curl --cacert \(files.caCertificate) --resolve \(host):\(port):127.0.0.1 -sI https://\(host)\(shownPort)/.well-known/apple-app-site-association\n"
        }
        return text + "\n"
    }

    /// A configuration profile installing the CA (what iOS offers to install from Files or AirDrop).
    static func mobileConfig(caPEM: [UInt8]) -> String {
        let base64 = String(decoding: caPEM, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        var generator = SystemRandomNumberGenerator()
        func uuid() -> String {
            let hex = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }.map { byte -> String in
                let digits = String(byte, radix: 16, uppercase: true)
                return digits.count == 1 ? "0" + digits : digits
            }.joined()
            let characters = Array(hex)
            return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
                <key>PayloadContent</key>
                <array>
                    <dict>
                        <key>PayloadCertificateFileName</key>
                        <string>aasa-dev-ca.cer</string>
                        <key>PayloadContent</key>
                        <data>\(base64)</data>
                        <key>PayloadDescription</key>
                        <string>Trusts the aasa-server development CA (for Safari and curl; developer mode does not need it).</string>
                        <key>PayloadDisplayName</key>
                        <string>aasa-server development CA</string>
                        <key>PayloadIdentifier</key>
                        <string>dev.aasa-server.ca.\(uuid())</string>
                        <key>PayloadType</key>
                        <string>com.apple.security.root</string>
                        <key>PayloadUUID</key>
                        <string>\(uuid())</string>
                        <key>PayloadVersion</key>
                        <integer>1</integer>
                    </dict>
                </array>
                <key>PayloadDisplayName</key>
                <string>aasa-server development CA</string>
                <key>PayloadIdentifier</key>
                <string>dev.aasa-server.profile</string>
                <key>PayloadType</key>
                <string>Configuration</string>
                <key>PayloadUUID</key>
                <string>\(uuid())</string>
                <key>PayloadVersion</key>
                <integer>1</integer>
            </dict>
            </plist>

            """
    }
}
