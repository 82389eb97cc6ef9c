/// Who fetched a document, told apart by User-Agent. The one list of known fetchers: the server
/// records their fetches, `status` and the console speak of them, and docs/fetch-records.md lists them.
public enum Fetcher: String, CaseIterable, Sendable {
    /// Apple's CDN, which fetches the AASA for every device since iOS 14 (`AASA-Bot/1.0.0`).
    case appleCDN = "apple-cdn"
    /// A device in developer mode (`applinks:host?mode=developer`) fetching directly: the associated
    /// domains daemon, `swcd`.
    case appleDevice = "apple-device"
    /// Google's Digital Asset Links verifier, checking App Links for Android (`GoogleAssociationService`).
    case googleVerifier = "google-verifier"

    /// What the User-Agent starts with.
    public var userAgentPrefix: String {
        switch self {
        case .appleCDN: return "AASA-Bot/"
        case .appleDevice: return "swcd"
        case .googleVerifier: return "GoogleAssociationService"
        }
    }

    /// How a sentence names it.
    public var displayName: String {
        switch self {
        case .appleCDN: return "Apple's CDN"
        case .appleDevice: return "An Apple device in developer mode"
        case .googleVerifier: return "Google's verifier"
        }
    }

    /// A label for a narrow column or a chart.
    public var shortName: String {
        switch self {
        case .appleCDN: return "Apple CDN"
        case .appleDevice: return "Apple device"
        case .googleVerifier: return "Google"
        }
    }

    /// Which document it fetches.
    public var document: DocumentKind {
        switch self {
        case .appleCDN, .appleDevice: return .aasa
        case .googleVerifier: return .assetLinks
        }
    }

    private static let prefixes: [(Fetcher, [UInt8])] = allCases.map { ($0, Array($0.userAgentPrefix.utf8)) }

    /// The fetcher a User-Agent names, or nil for everyone else. Called on the request path for document
    /// requests only: a few byte comparisons, no allocation.
    public static func classify(_ userAgent: UnsafeBufferPointer<UInt8>) -> Fetcher? {
        for (fetcher, prefix) in prefixes where userAgent.count >= prefix.count {
            var same = true
            for index in 0..<prefix.count where userAgent[index] != prefix[index] {
                same = false
                break
            }
            if same { return fetcher }
        }
        return nil
    }

    public static func classify(_ userAgent: String) -> Fetcher? {
        var text = userAgent
        return text.withUTF8 { classify($0) }
    }
}

/// The two documents a host serves.
public enum DocumentKind: String, CaseIterable, Sendable {
    case aasa
    case assetLinks = "assetlinks"

    public var fileName: String { self == .aasa ? "apple-app-site-association" : "assetlinks.json" }
}
