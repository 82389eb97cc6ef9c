/// Whether a name may have a certificate, decided in one place — at the handshake, in the worker before
/// an order, and again before every renewal (certmagic's `DecisionFunc`). Everything starts from one
/// normalised spelling, so `Shop.Example.COM.` and `shop.example.com` are one name with one storage
/// entry, and a name that cannot be a host of ours is refused before anything reads the storage.
public enum IssuanceDecision: Equatable, Sendable {
    /// A host the config asks a certificate for (`acme.hosts: "config"`), wildcards included.
    case configHost
    /// A host under a wildcard site whose `*.` certificate the config asks for: that certificate serves it.
    case coveredByWildcard(String)
    /// A name the config serves, with nothing asked for it in advance: on-demand issuance may order it
    /// (after `ask`, when set).
    case onDemand
    case refused(Refusal)

    public enum Refusal: Equatable, Sendable, CustomStringConvertible {
        case invalidName(String)
        /// The config serves no site with this name.
        case notServed
        /// The config serves it, but only on-demand issuance could get it and that is off.
        case onDemandOff

        public var description: String {
            switch self {
            case .invalidName(let reason): return reason
            case .notServed: return "the config serves no such host"
            case .onDemandOff: return "no certificate is asked for it and onDemand is off"
            }
        }
    }

    /// Where a name comes from: a handshake's SNI never asks for a wildcard certificate; the config's own
    /// host list may.
    public enum Origin: Sendable {
        case handshake
        case config
    }

    /// What the config in force says about certificates.
    public struct Inputs: Sendable {
        /// Normalised hosts (and `*.suffix` wildcards) the config asks certificates for.
        public var configHosts: Set<String>
        /// Whether the config serves a normalised exact name (directly or under a wildcard site).
        public var serves: @Sendable (String) -> Bool
        public var onDemand: Bool

        public init(configHosts: Set<String> = [], serves: @escaping @Sendable (String) -> Bool = { _ in false }, onDemand: Bool = false) {
            self.configHosts = configHosts
            self.serves = serves
            self.onDemand = onDemand
        }
    }

    /// The decision for `raw` as it arrived (any case, maybe a trailing dot).
    public static func decide(_ raw: String, origin: Origin, _ inputs: Inputs) -> (name: String?, decision: IssuanceDecision) {
        switch CertificateName.normalize(raw, allowWildcard: origin == .config) {
        case .failure(let problem): return (nil, .refused(.invalidName(problem.reason)))
        case .success(let name): return (name, decide(normalized: name, inputs))
        }
    }

    /// The decision for a name already normalised by ``CertificateName/normalize(_:allowWildcard:)``.
    public static func decide(normalized name: String, _ inputs: Inputs) -> IssuanceDecision {
        if inputs.configHosts.contains(name) { return .configHost }
        // Only a config host may be a wildcard name: the SNI `*.evil.example.com` is never ordered.
        guard !name.hasPrefix("*.") else { return .refused(.notServed) }
        if let dot = name.utf8.firstIndex(of: UInt8(ascii: ".")) {
            let wildcard = "*" + name[dot...]
            if inputs.configHosts.contains(wildcard) { return .coveredByWildcard(wildcard) }
        }
        guard inputs.serves(name) else { return .refused(.notServed) }
        return inputs.onDemand ? .onDemand : .refused(.onDemandOff)
    }
}

/// A host name as certificates and their storage know it: lower case, no trailing dot, A-labels only,
/// each label 1–63 bytes of letters, digits and inner hyphens, 253 bytes in all.
public enum CertificateName {
    public struct Problem: Error, Equatable, Sendable {
        public var reason: String
    }

    public static func normalize(_ raw: String, allowWildcard: Bool = false) -> Result<String, Problem> {
        var bytes = Array(raw.utf8)
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        var wildcard = false
        if bytes.starts(with: Array("*.".utf8)) {
            guard allowWildcard else { return .failure(Problem(reason: "a wildcard name is never ordered for a handshake")) }
            wildcard = true
            bytes.removeFirst(2)
        }
        guard !bytes.isEmpty else { return .failure(Problem(reason: "an empty name")) }
        guard bytes.count <= (wildcard ? 251 : 253) else { return .failure(Problem(reason: "longer than 253 bytes")) }
        var label = 0
        var previous: UInt8 = UInt8(ascii: ".")
        for index in bytes.indices {
            var byte = bytes[index]
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") {
                byte |= 0x20
                bytes[index] = byte
            }
            if byte == UInt8(ascii: ".") {
                guard label > 0 else { return .failure(Problem(reason: "an empty label")) }
                guard previous != UInt8(ascii: "-") else { return .failure(Problem(reason: "a label ends with a hyphen")) }
                label = 0
            } else {
                let allowed =
                    (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || byte == UInt8(ascii: "-")
                guard allowed else {
                    return .failure(
                        Problem(
                            reason: byte >= 0x80
                                ? "not an A-label (internationalised names arrive as xn--…)" : "a character no host name has"
                        )
                    )
                }
                guard !(byte == UInt8(ascii: "-") && label == 0) else { return .failure(Problem(reason: "a label starts with a hyphen")) }
                label += 1
                guard label <= 63 else { return .failure(Problem(reason: "a label longer than 63 bytes")) }
            }
            previous = byte
        }
        guard label > 0 else { return .failure(Problem(reason: "an empty label")) }
        guard previous != UInt8(ascii: "-") else { return .failure(Problem(reason: "a label ends with a hyphen")) }
        return .success((wildcard ? "*." : "") + String(decoding: bytes, as: UTF8.self))
    }
}
