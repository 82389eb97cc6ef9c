import AASA

/// Which changed settings a running server cannot apply: they need new sockets, threads, or live in
/// every open connection. Compared on the effective settings (the config with the command line's
/// `--listen`/`--admin` applied), so an override never reads as a change. Everything else a reload
/// applies at once (`logFormat`, `cacheControl`, `healthPath`, certificates, the reload settings, the
/// admin policy), so a setting is either applied or named here — never both.
enum RestartRequirements {
    /// The config keys (`server.accessLog`, `server.limits.headerBytes`) whose new values wait for a restart.
    static func settingsNeedingRestart(running: ServerSettings, incoming: ServerSettings) -> [String] {
        var restart: [String] = []
        func compare<Value: Equatable>(_ key: String, _ value: (ServerSettings) -> Value) {
            if value(incoming) != value(running) { restart.append("server." + key) }
        }
        compare("listen") { $0.listeners }
        compare("admin") { $0.admin }
        compare("threads") { $0.threads }
        compare("maxConnections") { $0.maxConnections }
        compare("maxRequestsPerConnection") { $0.maxRequestsPerConnection }
        compare("limits.requestLineBytes") { $0.maxRequestLineBytes }
        compare("limits.headerBytes") { $0.maxHeaderBytes }
        compare("limits.headerCount") { $0.maxHeaderCount }
        compare("limits.bodyBytes") { $0.maxBodyBytes }
        compare("timeouts.header") { $0.headerTimeout }
        compare("timeouts.keepAlive") { $0.keepAliveTimeout }
        compare("timeouts.write") { $0.writeTimeout }
        compare("timeouts.drain") { $0.drainTimeout }
        compare("accessLog") { $0.accessLog }
        compare("trustForwardedHeaders") { $0.trustForwardedHeaders }
        return restart
    }
}
