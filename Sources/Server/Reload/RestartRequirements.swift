import AASA

/// Which changed settings a running server cannot apply: they need new sockets, threads, or live in
/// every open connection. Compared on the effective settings (the config with the command line's
/// `--listen`/`--admin` applied), so an override never reads as a change.
enum RestartRequirements {
    static func settingsNeedingRestart(running: ServerSettings, incoming: ServerSettings) -> [String] {
        var restart: [String] = []
        if incoming.listeners != running.listeners { restart.append("server.listen") }
        if incoming.admin != running.admin { restart.append("server.admin") }
        if incoming.threads != running.threads { restart.append("server.threads") }
        if incoming.maxConnections != running.maxConnections || incoming.maxRequestsPerConnection != running.maxRequestsPerConnection
            || incoming.maxRequestLineBytes != running.maxRequestLineBytes || incoming.maxHeaderBytes != running.maxHeaderBytes
            || incoming.maxHeaderCount != running.maxHeaderCount || incoming.maxBodyBytes != running.maxBodyBytes
        {
            restart.append("server limits")
        }
        if incoming.headerTimeout != running.headerTimeout || incoming.keepAliveTimeout != running.keepAliveTimeout
            || incoming.writeTimeout != running.writeTimeout || incoming.drainTimeout != running.drainTimeout
        {
            restart.append("server.timeouts")
        }
        if incoming.accessLog != running.accessLog || incoming.trustForwardedHeaders != running.trustForwardedHeaders {
            restart.append("server logging")
        }
        return restart
    }
}
