/// One host to check: how to reach it and what to call it.
public struct CheckTarget: Sendable, Equatable {
    public enum Scheme: String, Sendable {
        case https, http
    }

    public var scheme: Scheme
    /// The name sent as SNI and Host (lower case, no trailing dot).
    public var host: String
    public var port: Int

    public init(scheme: Scheme = .https, host: String, port: Int? = nil) {
        self.scheme = scheme
        self.host = host
        self.port = port ?? (scheme == .https ? 443 : 80)
    }

    /// `host`, `host:port`, `[v6]:port`, or a URL `https://host[:port]/anything` (only the scheme, host
    /// and port are used).
    public static func parse(_ text: String) -> Result<CheckTarget, CheckUsageError> {
        var rest = Substring(text)
        var scheme = Scheme.https
        if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") {
            let name = rest[..<colon].lowercased()
            guard let parsed = Scheme(rawValue: name) else {
                return .failure(
                    CheckUsageError("\(text): Apple fetches over https (http:// is allowed for an origin behind a load balancer)")
                )
            }
            scheme = parsed
            rest = rest[rest.index(colon, offsetBy: 3)...]
        }
        if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<slash] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        var host = rest
        var port: Int?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return .failure(CheckUsageError("\(text): unterminated IPv6 address")) }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                guard let value = Int(after.dropFirst()), (1...65535).contains(value) else {
                    return .failure(CheckUsageError("\(text): the port must be a number from 1 to 65535"))
                }
                port = value
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let value = Int(rest[rest.index(after: colon)...]), (1...65535).contains(value) else {
                return .failure(CheckUsageError("\(text): the port must be a number from 1 to 65535"))
            }
            port = value
        }
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        guard !name.isEmpty, !name.contains(" ") else { return .failure(CheckUsageError("\(text): no host name")) }
        return .success(CheckTarget(scheme: scheme, host: name, port: port))
    }

    /// `https://example.com`, with the port when it is not the scheme's default.
    public var origin: String {
        let defaultPort = scheme == .https ? 443 : 80
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(scheme.rawValue)://\(shownHost)" + (port == defaultPort ? "" : ":\(port)")
    }
}

public struct CheckUsageError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Where to connect instead of what DNS says: `--connect ADDR[:PORT]` for every host, or curl's
/// `--resolve HOST:PORT:ADDR` for one.
public struct AddressOverride: Sendable, Equatable {
    public var host: String?
    public var port: Int?
    public var address: String

    /// `--connect 10.0.0.5`, `--connect 10.0.0.5:8443`, `--connect [::1]:8443`.
    public static func parseConnect(_ text: String) -> Result<AddressOverride, CheckUsageError> {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                return .failure(CheckUsageError("--connect \(text): unterminated IPv6 address"))
            }
            let address = String(text[text.index(after: text.startIndex)..<close])
            let after = text[text.index(after: close)...]
            if after.isEmpty { return .success(AddressOverride(host: nil, port: nil, address: address)) }
            guard after.hasPrefix(":"), let port = Int(after.dropFirst()), (1...65535).contains(port) else {
                return .failure(CheckUsageError("--connect \(text): expected [IPv6]:PORT"))
            }
            return .success(AddressOverride(host: nil, port: port, address: address))
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 1 { return .success(AddressOverride(host: nil, port: nil, address: text)) }
        if parts.count == 2, let port = Int(parts[1]), (1...65535).contains(port) {
            return .success(AddressOverride(host: nil, port: port, address: String(parts[0])))
        }
        if parts.count > 2 { return .success(AddressOverride(host: nil, port: nil, address: text)) }
        return .failure(CheckUsageError("--connect \(text): expected ADDRESS or ADDRESS:PORT"))
    }

    /// `--resolve example.com:443:127.0.0.1` (as in curl; the address may be `[::1]`).
    public static func parseResolve(_ text: String) -> Result<AddressOverride, CheckUsageError> {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, let port = Int(parts[1]), (1...65535).contains(port), !parts[2].isEmpty else {
            return .failure(CheckUsageError("--resolve \(text): expected HOST:PORT:ADDRESS, e.g. example.com:443:127.0.0.1"))
        }
        var address = String(parts[2])
        if address.hasPrefix("[") && address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
        return .success(AddressOverride(host: parts[0].lowercased(), port: port, address: address))
    }
}
