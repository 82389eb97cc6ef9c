import AASA
import Posix

/// When each document's inputs last changed, for the first load of a server: the newest modification
/// time of the config (its app aliases shape every document), the file the site is written in, and the
/// files it hosts as they are. A restart then keeps Last-Modified where it was; reloads stamp a changed
/// document with the time it changed.
struct FirstLoadStamps: Sendable {
    let configTime: Int
    let modificationTime: @Sendable (String) -> Int?

    /// Nil when the config has no modification time (the embedded default): then the load time it is.
    init?(configPath: String, modificationTime: @escaping @Sendable (String) -> Int? = { Posix.modificationTime($0) }) {
        guard let time = modificationTime(configPath) else { return nil }
        configTime = time
        self.modificationTime = modificationTime
    }

    func stamp(group: SiteList.Group) -> Int { max(configTime, group.source.flatMap(modificationTime) ?? 0) }

    func stamp(site: LoadedSite) -> Int {
        max(site.file.flatMap(modificationTime) ?? 0, site.assetLinks?.file.flatMap(modificationTime) ?? 0)
    }
}
