/// Android's Digital Asset Links statement list (`/.well-known/assetlinks.json`): a JSON array of
/// statements, each granting `relation`s to a `target` — an Android app (package name and signing
/// certificate fingerprints) or a website. docs/assetlinks-format.md summarises the rules.
public struct AssetStatement: Sendable {
    public enum Target: Sendable {
        case androidApp(package: Located<String>, fingerprints: [Located<String>])
        case web(site: Located<String>)
        /// A namespace Android and Chrome do not act on (e.g. `ios_app`): kept, reported.
        case other(namespace: String)
    }

    /// Empty for an `include` statement.
    public var relations: [Located<String>]
    public var target: Target?
    /// `{"include": "https://…"}`: statements pulled in from another file (fetched by the verifier).
    public var include: Located<String>?
    /// Android 15+ dynamic App Links: `relation_extensions` → `handle_all_urls` →
    /// `dynamic_app_link_components`, the URLs of the host the app opens, in order (nil: none declared).
    public var dynamicComponents: [Component]?
    public var origin: Provenance

    public init(relations: [Located<String>], target: Target?, include: Located<String>? = nil, origin: Provenance = .none) {
        self.relations = relations
        self.target = target
        self.include = include
        self.origin = origin
    }

    /// The package name when the target is an Android app.
    public var package: String? {
        if case .androidApp(let package, _) = target { return package.value }
        return nil
    }

    public var fingerprints: [String] {
        if case .androidApp(_, let fingerprints) = target { return fingerprints.map(\.value) }
        return []
    }
}

/// The relations Android and Chrome act on.
public enum AssetRelation {
    /// App Links: the app may open every https URL of the host (Android verifies this one).
    public static let handleAllURLs = "delegate_permission/common.handle_all_urls"
    /// Credential sharing between the site and the app (Credential Manager, Smart Lock, autofill).
    public static let getLoginCredentials = "delegate_permission/common.get_login_creds"

    /// The relation a loose word most likely means: "login" or "password" sharing, "links" or "urls" opening.
    static func meant(by word: String) -> String? {
        let lowered = word.lowercased()
        if ["login", "cred", "password", "sign"].contains(where: { lowered.contains($0) }) { return getLoginCredentials }
        if ["url", "link"].contains(where: { lowered.contains($0) }) { return handleAllURLs }
        return nil
    }
    /// Custom Tabs / Trusted Web Activities: the app may act with the site's origin.
    public static let useAsOrigin = "delegate_permission/common.use_as_origin"

    public static let known = [handleAllURLs, getLoginCredentials, useAsOrigin]

    /// The short names a config may use: `handle_all_urls` → the full relation string.
    public static func expand(_ name: String) -> String {
        known.first { $0.hasSuffix("." + name) } ?? name
    }

    /// `kind/detail`, both lower-case alphanumerics, `_` and (in the detail) `.`, as the Digital Asset
    /// Links parser requires; anything else makes the verifier reject the whole file.
    public static func isWellFormed(_ relation: String) -> Bool {
        let parts = relation.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return false }
        let kind = parts[0].utf8.allSatisfy { isLowerAlphanumeric($0) || $0 == UInt8(ascii: "_") }
        let detail = parts[1].utf8.allSatisfy { isLowerAlphanumeric($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") }
        return kind && detail
    }

    private static func isLowerAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

/// An Android app as a config declares it: the package, its signing certificates' SHA-256
/// fingerprints (canonical: upper-case hex pairs joined by ':') and the relations it is granted.
public struct AndroidApp: Sendable, Equatable {
    public var package: Located<String>
    public var fingerprints: [Located<String>]
    public var relations: [Located<String>]
    /// Dynamic App Links rules for its `handle_all_urls` statement (a link site's rules); nil: none.
    public var dynamicComponents: [Component]?
    public var origin: Provenance

    public init(package: Located<String>, fingerprints: [Located<String>], relations: [Located<String>], origin: Provenance = .none) {
        self.package = package
        self.fingerprints = fingerprints
        self.relations = relations
        self.origin = origin
    }

    public static func == (left: AndroidApp, right: AndroidApp) -> Bool {
        left.package.value == right.package.value && left.fingerprints.map(\.value) == right.fingerprints.map(\.value)
            && left.relations.map(\.value) == right.relations.map(\.value)
    }
}
