/// The server's configuration: every site and what each host serves (one JSON file, see docs/config.md).
public struct Config: Sendable {
    public var version: Int
    /// Named app IDs (`"shop": "ABCDE12345.com.example.shop"`), in the order written (entries that name
    /// only an Android app are not here).
    public var apps: [(name: String, id: Located<String>)]
    /// The sites the config file itself lists (those of included files are in `LoadedConfig.sites`);
    /// empty in a serving-only load (`LoadedConfig.sites` has them).
    public var sites: [Site]
    public var unknownHost: UnknownHostPolicy
    public var server = ServerSettings()
    /// `"include": ["sites.d/*.json"]`: files of more sites, relative to the config.
    public var includes: [Located<String>] = []
    /// Every named app, Apple and Android, as sites refer to them.
    public var appTable = AppTable()

    public init(
        version: Int = 1,
        apps: [(name: String, id: Located<String>)] = [],
        sites: [Site] = [],
        unknownHost: UnknownHostPolicy = .empty
    ) {
        self.version = version
        self.apps = apps
        self.sites = sites
        self.unknownHost = unknownHost
    }
}

/// What a host that matches no site gets.
public enum UnknownHostPolicy: String, Sendable, CaseIterable {
    /// 200 with `{"applinks":{"details":[]}}`: valid, associated with nothing, and never an error page.
    case empty
    /// 404, for those who prefer unknown hosts to look absent.
    case notFound = "404"
}

/// One site: the hosts it answers for and where its documents come from.
public struct Site: Sendable {
    public var hosts: SiteHosts
    public var source: Source
    /// `/.well-known/assetlinks.json`; nil: the host has no Android apps (404).
    public var android: AndroidSource?
    /// The site's link paths (docs/links.md); nil: every path but the well-known ones is a 404.
    public var links: SiteLinks?
    public var origin: Provenance

    // Boxed: a site is copied as it passes from one reload to the next, and inline payloads make each
    // copy a dozen reference-count updates and a million sites a few hundred megabytes.
    public indirect enum Source: Sendable {
        case generated(GeneratedSite)
        /// A verbatim AASA file, path relative to the config file's directory.
        case file(Located<String>)
        /// No Apple services (an Android-only site): the AASA paths answer as for an unknown host.
        case none
    }

    public indirect enum AndroidSource: Sendable {
        case generated([AndroidApp])
        /// A verbatim `assetlinks.json`, path relative to the config file's directory.
        case file(Located<String>)
    }

    public init(
        hosts: SiteHosts,
        source: Source,
        android: AndroidSource? = nil,
        links: SiteLinks? = nil,
        origin: Provenance = .none
    ) {
        self.hosts = hosts
        self.source = source
        self.android = android
        self.links = links
        self.origin = origin
    }

    public init(
        hosts: [Located<HostPattern>],
        source: Source,
        android: AndroidSource? = nil,
        links: SiteLinks? = nil,
        origin: Provenance = .none
    ) {
        self.init(hosts: SiteHosts(hosts), source: source, android: android, links: links, origin: origin)
    }

    /// A short name for messages: the first host.
    public var name: String { hosts.isEmpty ? "(no hosts)" : hosts.pattern(0).description }
}

/// The document formats `applinks` is generated in (docs/aasa-format.md §5).
public enum AppLinksFormat: String, Sendable, CaseIterable {
    /// `appIDs` + `components` (iOS 13+).
    case modern
    /// `appID` + `paths` with `NOT ` exclusions (iOS 12 and earlier).
    case legacy
}

public struct GeneratedSite: Sendable {
    public var applinks: AppLinksConfig?
    public var webcredentials: [Located<String>]?
    public var appclips: [Located<String>]?
    public var activitycontinuation: [Located<String>]?
    public var webcredentialsOrigin: Provenance = .none
    public var appclipsOrigin: Provenance = .none
    public var activitycontinuationOrigin: Provenance = .none

    public init(
        applinks: AppLinksConfig? = nil,
        webcredentials: [Located<String>]? = nil,
        appclips: [Located<String>]? = nil,
        activitycontinuation: [Located<String>]? = nil
    ) {
        self.applinks = applinks
        self.webcredentials = webcredentials
        self.appclips = appclips
        self.activitycontinuation = activitycontinuation
    }
}

public struct AppLinksConfig: Sendable {
    public var formats: [AppLinksFormat] = [.modern]
    public var defaults = MatchOptions()
    public var substitutionVariables: [SubstitutionVariable] = []
    public var details: [DetailsConfig] = []
    public var origin: Provenance = .none
}

/// One group of apps sharing the same rules; becomes one modern entry and one legacy entry per app.
public struct DetailsConfig: Sendable {
    /// Resolved app IDs (names from `apps` already replaced), with the config position of each reference.
    public var apps: [Located<String>]
    public var components: [Component]
    public var defaults: MatchOptions
    public var origin: Provenance

    public init(apps: [Located<String>], components: [Component], defaults: MatchOptions = MatchOptions(), origin: Provenance = .none) {
        self.apps = apps
        self.components = components
        self.defaults = defaults
        self.origin = origin
    }
}

/// The top-level `apps` table: names for Apple app IDs and for Android apps (an entry may define both),
/// so sites refer to an app by one name.
public struct AppTable: Sendable, Equatable {
    public var apple: [String: String] = [:]
    public var android: [String: AndroidApp] = [:]
    /// App Store IDs, display names and icons: what link pages need of an app.
    public var listings: [String: AppListing] = [:]

    public init(apple: [String: String] = [:], android: [String: AndroidApp] = [:], listings: [String: AppListing] = [:]) {
        self.apple = apple
        self.android = android
        self.listings = listings
    }

    /// Every name defined, for suggestions.
    var names: [String] { Array(Set(apple.keys).union(android.keys)).sorted() }

    /// The same table with Apple app IDs in storage of its own, equal to the original's.
    func ownCopy() -> AppTable {
        var copy = self
        copy.apple = apple.mapValues { String(decoding: Array($0.utf8), as: UTF8.self) }
        return copy
    }
}
