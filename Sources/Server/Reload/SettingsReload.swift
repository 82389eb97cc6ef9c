import AASA

/// What a reload does with each server setting, in one table: applied at once, or kept at its running value
/// until a restart because it lives in sockets, threads or every open connection. A setting is one or the
/// other, never both, and is named by its config key. Compared on the effective settings (the config with
/// the command line's `--listen`/`--admin` applied), so an override never reads as a change.
enum SettingsReload {
    /// One setting: its config key, and either how a reload applies it or that it waits for a restart.
    struct Key {
        let name: String
        let differs: (ServerSettings, ServerSettings) -> Bool
        /// Nil: the running value stays until a restart.
        let apply: ((inout ServerSettings, ServerSettings) -> Void)?

        static func applied<Value: Equatable>(_ name: String, _ path: WritableKeyPath<ServerSettings, Value>) -> Key {
            Key(name: name, differs: { $0[keyPath: path] != $1[keyPath: path] }, apply: { $0[keyPath: path] = $1[keyPath: path] })
        }

        static func restart<Value: Equatable>(_ name: String, _ path: KeyPath<ServerSettings, Value>) -> Key {
            Key(name: name, differs: { $0[keyPath: path] != $1[keyPath: path] }, apply: nil)
        }
    }

    /// Every stored setting of ``ServerSettings`` (a test counts them), each decided once.
    static var keys: [Key] {
        [
            .restart("server.listen", \.listeners),
            .restart("server.admin", \.admin),
            .restart("server.threads", \.threads),
            .restart("server.maxConnections", \.maxConnections),
            .restart("server.maxRequestsPerConnection", \.maxRequestsPerConnection),
            .restart("server.limits.requestLineBytes", \.maxRequestLineBytes),
            .restart("server.limits.headerBytes", \.maxHeaderBytes),
            .restart("server.limits.headerCount", \.maxHeaderCount),
            .restart("server.limits.bodyBytes", \.maxBodyBytes),
            .restart("server.timeouts.header", \.headerTimeout),
            .restart("server.timeouts.keepAlive", \.keepAliveTimeout),
            .restart("server.timeouts.write", \.writeTimeout),
            .restart("server.timeouts.drain", \.drainTimeout),
            .restart("server.accessLog", \.accessLog),
            .restart("server.trustForwardedHeaders", \.trustForwardedHeaders),
            .restart("server.stateDirectory", \.stateDirectory),
            .restart("server.fetchHistory", \.fetchHistory),
            .restart("server.fetchHosts", \.fetchHosts),
            .restart("server.fetchHostsPerWildcard", \.fetchHostsPerWildcard),
            .restart("server.fetcherNetworks.apple", \.appleNetworks),
            .restart("server.fetcherNetworks.google", \.googleNetworks),
            .restart("server.acme", \.acme),
            .restart("server.clickRetentionDays", \.clickRetentionDays),
            .restart("server.linkStore.postgres", \.linkStorePostgres),
            .restart("server.linkStore.passwordFile", \.linkStorePasswordFile),
            .applied("server.cacheControl", \.cacheControl),
            .applied("server.healthPath", \.healthPath),
            .applied("server.certificates", \.certificates),
            .applied("server.reload.watch", \.watchFiles),
            .applied("server.reload.watch", \.forcePolling),
            .applied("server.reload.pollSeconds", \.pollInterval),
            .applied("server.logFormat", \.logFormat),
            .applied("server.adminExposed", \.adminExposed),
            .applied("server.adminTokenFile", \.adminTokenFile),
            .applied("server.linkAPI.tokenFile", \.linkAPITokenFile),
            .applied("server.linkAPI.creationsPerSecond", \.linkAPICreationsPerSecond),
            .applied("dev's published files", \.publishedFiles),
            .applied("server.listen (given or defaulted)", \.listenersConfigured),
        ]
    }

    /// The settings in force after a reload to `incoming`, and the keys whose new values wait for a restart.
    static func apply(_ incoming: ServerSettings, over running: ServerSettings) -> (settings: ServerSettings, needsRestart: [String]) {
        var settings = running
        var needsRestart: [String] = []
        for key in keys where key.differs(running, incoming) {
            if let apply = key.apply { apply(&settings, incoming) } else { needsRestart.append(key.name) }
        }
        return (settings, needsRestart)
    }
}
