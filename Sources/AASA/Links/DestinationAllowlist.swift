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
        // Read as bytes: a link's destinations are checked at every click, and every byte is ASCII here.
        let bytes = Array(text.utf8)
        guard bytes.count <= 4096 else { return nil }
        for byte in bytes {
            guard byte > 0x20, byte < 0x7F else { return nil }
            // Bytes a URL must carry percent-encoded (\ < > " ` { } | ^); `{` also keeps the URL from reading
            // as a link template.
            switch byte {
            case 0x5C, 0x3C, 0x3E, 0x22, 0x60, 0x7B, 0x7D, 0x7C, 0x5E: return nil
            default: break
            }
        }
        func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
        func startsWith(_ prefix: StaticString) -> Bool {
            prefix.utf8CodeUnitCount <= bytes.count
                && prefix.withUTF8Buffer { prefix in prefix.indices.allSatisfy { lower(bytes[$0]) == prefix[$0] } }
        }
        let schemeLength = startsWith("https://") ? 8 : startsWith("http://") ? 7 : 0
        guard schemeLength > 0 else { return nil }
        let slash = UInt8(ascii: "/")
        let question = UInt8(ascii: "?")
        let hash = UInt8(ascii: "#")
        let authorityEnd = bytes[schemeLength...].firstIndex { $0 == slash || $0 == question || $0 == hash } ?? bytes.count
        let authority = bytes[schemeLength..<authorityEnd].map(lower)
        guard !authority.contains(UInt8(ascii: "@")) else { return nil }
        var hostBytes = authority[...]
        if let colon = authority.lastIndex(of: UInt8(ascii: ":")), authority.last != UInt8(ascii: "]") {
            let port = authority[(colon + 1)...]
            guard !port.isEmpty, port.count <= 5, port.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            hostBytes = authority[..<colon]
        }
        let hostText = String(decoding: hostBytes, as: UTF8.self)
        guard Self.isHostName(hostText) || (hostBytes.first == UInt8(ascii: "[") && hostBytes.last == UInt8(ascii: "]")) else {
            return nil
        }
        self.text = text
        scheme = schemeLength == 8 ? "https" : "http"
        host = hostText
        let pathEnd = bytes[authorityEnd...].firstIndex { $0 == question || $0 == hash } ?? bytes.count
        path = pathEnd == authorityEnd ? "/" : String(decoding: bytes[authorityEnd..<pathEnd], as: UTF8.self)
    }

    /// Letters, digits, `-` and dots, labels of 1…63, at most 253 in all (IPv4 literals pass too).
    public static func isHostName(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        var label = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") {
                guard label > 0 else { return false }
                label = 0
                continue
            }
            guard (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || byte == 0x2D else {
                return false
            }
            label += 1
            guard label <= 63 else { return false }
        }
        return label > 0
    }
}
