import AASA
import FetchRecords
import Posix

/// When each document's inputs last changed, for the first load of a server: the newest modification
/// time of the config (its app aliases shape every document), the file the site is written in, and the
/// files it hosts as they are. A restart then keeps Last-Modified where it was; reloads stamp a changed
/// document with the time it changed.
struct FirstLoadStamps: Sendable {
    let configTime: Int
    let modificationTime: @Sendable (String) -> Int?
    /// From the state directory: when the version served now was first served (Unix seconds), per site
    /// and document, for the sites a fetcher fetched — exact where file times are only close.
    private(set) var recorded: [ObjectIdentifier: (aasa: Int?, assetLinks: Int?)] = [:]

    /// Nil when the config has no modification time (the embedded default): then the load time it is.
    init?(configPath: String, modificationTime: @escaping @Sendable (String) -> Int? = { Posix.modificationTime($0) }) {
        guard let time = modificationTime(configPath) else { return nil }
        configTime = time
        self.modificationTime = modificationTime
    }

    /// Takes the first-served times `ledger` recorded for versions that are still the ones served.
    mutating func record(_ ledger: FetchLedger, config: LoadedConfig) {
        for (host, history) in ledger.hosts {
            guard let loaded = config.site(forHost: host) else { continue }
            var found = recorded[ObjectIdentifier(loaded)] ?? (nil, nil)
            if let version = history.currentVersion(.aasa), version.version == FNV1a.hex(loaded.served.hash) {
                found.aasa = version.since / 1000
            }
            if let bytes = loaded.assetLinks?.bytes, let version = history.currentVersion(.assetLinks),
                version.version == FNV1a.hex(bytes.withUnsafeBytes { FNV1a.wordHash($0) })
            {
                found.assetLinks = version.since / 1000
            }
            if found.aasa != nil || found.assetLinks != nil { recorded[ObjectIdentifier(loaded)] = found }
        }
    }

    func stamp(group: SiteList.Group) -> Int { max(configTime, group.source.flatMap(modificationTime) ?? 0) }

    func stamp(site: LoadedSite) -> Int {
        max(site.file.flatMap(modificationTime) ?? 0, site.assetLinks?.file.flatMap(modificationTime) ?? 0)
    }
}
