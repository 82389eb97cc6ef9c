/// A config with every site's document built and validated: what the server and the CLI work from.
public struct LoadedConfig: Sendable {
    public var config: Config?
    public var sites: SiteList
    public var diagnostics: [Diagnostic]
    /// Host → position in `sites` (``SiteList/site(atPosition:)``).
    package private(set) var hostTable: HostTable<Int>
    /// What the next load of an edited version of this file can take over (nil after errors).
    var reuse: SiteReuse?
    /// The included files' built sites, for the next load to take over.
    var includeState: IncludeState?
    /// The include patterns, resolved against the config's directory: what to watch.
    public internal(set) var includePatterns: [String] = []

    public static let emptyDocumentBytes = AASARenderer.bytes(.empty)

    public var hasErrors: Bool { diagnostics.hasErrors }

    /// The site serving `host` (a Host header value: any case, port and trailing dot ignored).
    public func site(forHost host: String) -> LoadedSite? {
        hostTable.lookup(host).map { sites.site(atPosition: $0) }
    }

    init(config: Config?, sites: SiteList, diagnostics: [Diagnostic], hostTable: HostTable<Int>) {
        self.config = config
        self.sites = sites
        self.diagnostics = diagnostics.withoutCascades()
        self.hostTable = hostTable
    }
}

/// Runs `body` for every index in `0..<count`, possibly on several threads, returning when all are
/// done. The pure core starts no threads itself; the server passes one that does.
public typealias ParallelFor = @Sendable (_ count: Int, _ body: @Sendable (Int) -> Void) -> Void
