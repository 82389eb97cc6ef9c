/// An apple-app-site-association document (docs/aasa-format.md §1–§6).
public struct AASADocument: Sendable {
    public var applinks: AppLinks?
    public var webcredentials: ServiceApps?
    public var appclips: ServiceApps?
    public var activitycontinuation: ServiceApps?

    public init(
        applinks: AppLinks? = nil,
        webcredentials: ServiceApps? = nil,
        appclips: ServiceApps? = nil,
        activitycontinuation: ServiceApps? = nil
    ) {
        self.applinks = applinks
        self.webcredentials = webcredentials
        self.appclips = appclips
        self.activitycontinuation = activitycontinuation
    }

    /// What an unknown host gets under `unknownHost: "empty"`: valid, and associated with no app.
    public static let empty = AASADocument(applinks: AppLinks(details: []))
}

/// `caseSensitive` / `percentEncoded`, at applinks, details or component level (docs/aasa-format.md §3.5).
public struct MatchOptions: Sendable, Hashable {
    public var caseSensitive: Bool?
    public var percentEncoded: Bool?

    public init(caseSensitive: Bool? = nil, percentEncoded: Bool? = nil) {
        self.caseSensitive = caseSensitive
        self.percentEncoded = percentEncoded
    }

    /// The more specific level wins (docs/aasa-format.md §3.5: component over details over applinks).
    public func overriding(_ general: MatchOptions) -> MatchOptions {
        MatchOptions(
            caseSensitive: caseSensitive ?? general.caseSensitive,
            percentEncoded: percentEncoded ?? general.percentEncoded
        )
    }

    public var isEmpty: Bool { caseSensitive == nil && percentEncoded == nil }
}

public struct SubstitutionVariable: Sendable {
    public var name: String
    public var values: [Located<String>]
    public var origin: Provenance

    public init(name: String, values: [Located<String>], origin: Provenance = .none) {
        self.name = name
        self.values = values
        self.origin = origin
    }
}

/// The `applinks` service.
public struct AppLinks: Sendable {
    /// Legacy; must be empty when present (docs/aasa-format.md §2.1). Nil when the key is absent.
    public var apps: [Located<String>]?
    public var defaults = MatchOptions()
    public var defaultsOrigin: Provenance?
    public var substitutionVariables: [SubstitutionVariable] = []
    public var details: [AppLinksDetails]
    public var origin: Provenance = .none
}

/// One entry of `applinks.details`.
public struct AppLinksDetails: Sendable {
    public var appID: Located<String>?
    public var appIDs: [Located<String>]?
    public var components: [Component]?
    public var paths: [Located<String>]?
    public var defaults: MatchOptions
    public var origin: Provenance

    public init(
        appID: Located<String>? = nil,
        appIDs: [Located<String>]? = nil,
        components: [Component]? = nil,
        paths: [Located<String>]? = nil,
        defaults: MatchOptions = MatchOptions(),
        origin: Provenance = .none
    ) {
        self.appID = appID
        self.appIDs = appIDs
        self.components = components
        self.paths = paths
        self.defaults = defaults
        self.origin = origin
    }

    /// `appID` is ignored when `appIDs` is present, even if empty (docs/aasa-format.md §2.2, swcutil).
    public var effectiveAppIDs: [String] {
        if let appIDs { return appIDs.map(\.value) }
        return appID.map { [$0.value] } ?? []
    }

    /// `!effectiveAppIDs.isEmpty`, without building the list.
    public var namesAnApp: Bool {
        if let appIDs { return !appIDs.isEmpty }
        return appID != nil
    }
}

/// The `?` of a component: the whole query string, or a dictionary of item patterns (docs/aasa-format.md §3.3).
public enum QueryPattern: Sendable, Equatable {
    case whole(String)
    case items([QueryItemPattern])
}

public struct QueryItemPattern: Sendable, Equatable {
    public var name: String
    public var pattern: String
    public var origin: Provenance

    public init(name: String, pattern: String, origin: Provenance = .none) {
        self.name = name
        self.pattern = pattern
        self.origin = origin
    }

    public static func == (lhs: QueryItemPattern, rhs: QueryItemPattern) -> Bool {
        lhs.name == rhs.name && lhs.pattern == rhs.pattern
    }
}

/// One iOS 13+ rule (docs/aasa-format.md §3). Unspecified parts match anything.
public struct Component: Sendable {
    public var path: String?
    public var query: QueryPattern?
    public var fragment: String?
    public var exclude = false
    public var options = MatchOptions()
    public var comment: String?
    public var origin: Provenance = .none

    /// The rule as a person would write it, for explanations: `{"/":"/admin/*","exclude":true}`.
    /// The comment is left out: it is the user's note, not part of the rule.
    public var summary: String {
        var rule = self
        rule.comment = nil
        var writer = CompactJSONWriter(capacity: 64)
        AASARenderer.write(rule, to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

/// `webcredentials`, `appclips`, `activitycontinuation`: `{ "apps": [...] }` (docs/aasa-format.md §6).
public struct ServiceApps: Sendable {
    public var apps: [Located<String>]
    public var origin: Provenance

    public init(apps: [Located<String>], origin: Provenance = .none) {
        self.apps = apps
        self.origin = origin
    }
}
