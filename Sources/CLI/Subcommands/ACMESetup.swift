import AASA
import ACME
import Server

/// The certificate manager `serve` runs with `server.acme`: paths resolved against the config, the
/// challenge types the listeners allow, the server's log.
enum ACMESetup {
    static func manager(_ acme: ACMESettings, settings: ServerSettings, configPath: String) throws(ACMEError) -> CertificateManager {
        var acme = acme
        // Like every other file the config names: relative to the config, not to where serve was started.
        acme.dnsHook = acme.dnsHook.map { ConfigLoader.resolve($0, relativeTo: configPath) }
        let storage: any Storage
        do {
            storage = try CertificateStorage.backend(acme, settings: settings, configPath: configPath, prepare: true)
        } catch {
            throw .local("cannot prepare the ACME storage: \(error)")
        }
        return try CertificateManager(
            settings: acme,
            storage: storage,
            trustFile: acme.directoryTrust.map { ConfigLoader.resolve($0, relativeTo: configPath) },
            hmacKeyFile: acme.externalAccount.map { ConfigLoader.resolve($0.hmacKeyFile, relativeTo: configPath) },
            listeners: CertificateManager.Listeners(
                plain: settings.listeners.contains { !$0.tls },
                tls: settings.listeners.contains { $0.tls }
            ),
            userAgent: "aasa-server/\(CommandLineTool.version) (ACME)",
            log: { level, message in
                switch level {
                case .info: Log.info(message)
                case .warning: Log.warning(message)
                }
            }
        )
    }
}
