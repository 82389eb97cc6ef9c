/// Where URLs that come from a request (an FDL long link's `link` and fallbacks) may send a visitor:
/// exact hosts, `*.suffix` hosts, or URL prefixes. Anything else is refused — the server is never an
/// open redirect (Firebase recommended the same allowlist for the same reason).
public struct DestinationAllowlist: Sendable, Equatable {
    public enum Entry: Sendable, Equatable {
        case host(String)
        case hostSuffix(String)
        /// `https://shop.example.com/app/`: the scheme, host and path start, compared by parts.
        case prefix(scheme: String, host: String, path: String)
    }

    public let entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    /// One config entry; nil (with why) when it cannot be one.
    public struct EntryError: Error, Sendable {
        public let message: String
        init(_ message: String) { self.message = message }
    }

    public static func entry(_ text: String) -> Result<Entry, EntryError> {
        let lower = text.lowercased()
        if lower.hasPrefix("https://") || lower.hasPrefix("http://") {
            guard let url = CheckedURL(text) else { return .failure(EntryError("\"\(text)\" is not an http(s) URL with a host")) }
            return .success(.prefix(scheme: url.scheme, host: url.host, path: url.path))
        }
        if lower.hasPrefix("*.") {
            let suffix = String(lower.dropFirst(2))
            guard CheckedURL.isHostName(suffix), suffix.contains(".") else {
                return .failure(EntryError("\"\(text)\" is not *. and a domain"))
            }
            return .success(.hostSuffix(suffix))
        }
        guard CheckedURL.isHostName(lower) else {
            return .failure(
                EntryError(
                    "\"\(text)\" is neither a host (shop.example.com, *.example.com) nor a URL prefix (https://shop.example.com/app/)"
                )
            )
        }
        return .success(.host(lower))
    }

    public func allows(_ url: CheckedURL) -> Bool {
        entries.contains { entry in
            switch entry {
            case .host(let host): return url.host == host
            case .hostSuffix(let suffix): return url.host.hasSuffix("." + suffix)
            case .prefix(let scheme, let host, let path):
                return url.scheme == scheme && url.host == host && (path == "/" || url.path == path || url.path.hasPrefix(path))
            }
        }
    }
}

/// An absolute http(s) URL read from untrusted text and found safe to put in a `Location` header or an
/// `href`: no control bytes, spaces, backslashes or user info, a plain host name or IP literal, an
/// optional port. What a browser would read differently from us (`\` as `/`, `@` for user info, a
/// `javascript:` scheme, CR/LF for header injection) is refused, never repaired.
public struct CheckedURL: Sendable, Equatable {
    public let text: String
    /// Lower case.
    public let scheme: String
    /// Lower case, without the port.
    public let host: String
    /// From the first `/` of the path to before `?` or `#`; "/" when the URL has none.
    public let path: String

    public init?(_ text: String) {
        guard text.utf8.count <= 4096 else { return nil }
        // Bytes a URL must carry percent-encoded; `{` also keeps the URL from reading as a link template.
        let refused: Set<UInt8> = Set("\\<>\"`{}|^".utf8)
        for byte in text.utf8 where byte <= 0x20 || byte >= 0x7F || refused.contains(byte) { return nil }
        let lower = text.lowercased()
        let schemeLength = lower.hasPrefix("https://") ? 8 : lower.hasPrefix("http://") ? 7 : 0
        guard schemeLength > 0 else { return nil }
        let rest = text.dropFirst(schemeLength)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd].lowercased()
        guard !authority.contains("@") else { return nil }
        var hostText = Substring(authority)
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            let port = authority[authority.index(after: colon)...]
            guard !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber) else { return nil }
            hostText = authority[..<colon]
        }
        guard Self.isHostName(String(hostText)) || (hostText.hasPrefix("[") && hostText.hasSuffix("]")) else { return nil }
        self.text = text
        scheme = String(lower.prefix(schemeLength - 3))
        host = String(hostText)
        let afterAuthority = rest[authorityEnd...]
        let pathEnd = afterAuthority.firstIndex { $0 == "?" || $0 == "#" } ?? afterAuthority.endIndex
        let pathPart = afterAuthority[..<pathEnd]
        path = pathPart.isEmpty ? "/" : String(pathPart)
    }

    /// Letters, digits, `-` and dots, labels of 1…63, at most 253 in all (IPv4 literals pass too).
    public static func isHostName(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        for label in text.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty, label.utf8.count <= 63,
                label.utf8.allSatisfy({
                    ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A) || $0 == 0x2D
                })
            else { return false }
        }
        return true
    }
}
