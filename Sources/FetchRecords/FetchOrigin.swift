public import Support

/// Whether a fetch really came from the fetcher its User-Agent names. A User-Agent is a claim anyone can
/// make; Apple's CDN fetches from Apple's network (17.0.0.0/8) and Google's verifier from Google's, so
/// only an address inside the fetcher's network makes a fetch count as that fetcher's.
public enum FetchOrigin: String, CaseIterable, Sendable {
    /// From the fetcher's own network.
    case verified
    /// The User-Agent says so, the address is another network's: not counted as the fetcher's.
    case claimed
    /// The address is a proxy's (loopback or private, with no PROXY protocol and no trusted
    /// X-Forwarded-For): the real client cannot be checked.
    case unverifiable
    /// A device in developer mode: any network, nothing to check; it stays a device.
    case device

    /// Whether the fetch counts as the fetcher's in `status`, the console and `/metrics`.
    public var counts: Bool { self == .verified || self == .device }
}

/// How the client address of a request was learned.
public enum ClientAddressSource: Sendable, Equatable {
    /// The TCP peer.
    case peer
    /// A PROXY protocol header on a listener configured for it.
    case proxyProtocol
    /// The address the trusted proxy appended to X-Forwarded-For (its last entry: earlier ones are the
    /// client's own claims).
    case forwardedFor
}

/// The networks each fetcher fetches from.
public struct FetcherNetworks: Sendable, Equatable {
    public static let appleDefault = ["17.0.0.0/8"]

    public var apple: [IPNetwork]
    public var google: [IPNetwork]

    public init(apple: [IPNetwork] = FetcherNetworks.appleDefault.compactMap(IPNetwork.init), google: [IPNetwork] = []) {
        self.apple = apple
        self.google = google
    }

    public func networks(of fetcher: Fetcher) -> [IPNetwork] {
        switch fetcher {
        case .appleCDN: return apple
        case .googleVerifier: return google
        case .appleDevice: return []
        }
    }

    /// Where a fetch by `fetcher` (as its User-Agent says) from `address` comes from. A Google fetch left
    /// `claimed` here may still be verified by forward-confirmed reverse DNS, off the event loops.
    public func origin(of fetcher: Fetcher, from text: String, source: ClientAddressSource) -> FetchOrigin {
        if fetcher == .appleDevice { return .device }
        guard let address = IPAddress(text) else { return .claimed }
        if networks(of: fetcher).contains(where: { $0.contains(address) }) { return .verified }
        if source == .peer && IPNetwork.isInternal(address) { return .unverifiable }
        return .claimed
    }
}

/// Forward-confirmed reverse DNS, as Google documents for telling its crawlers from impostors: the
/// address's PTR name is in one of Google's domains, and that name resolves back to the same address.
public enum ReverseDNSCheck {
    public static let googleDomains = ["google.com", "googlebot.com"]

    /// `reverse` and `forward` are the resolver (the supervisor passes the system's, with deadlines).
    public static func confirms(
        _ address: String,
        domains: [String] = googleDomains,
        reverse: (String) -> String?,
        forward: (String) -> [String]
    ) -> Bool {
        guard let name = reverse(address), domains.contains(where: { name.hasSuffix("." + $0) }) else { return false }
        return forward(name).contains { IPNetwork.sameAddress($0, address) }
    }
}
