/// A destination written in the config — `https://shop.example.com/item/{1}?ref={query}` — with the
/// request's parts filled in: `{1}`…`{9}` what the rule's path wildcards matched, `{path}` the request's
/// path, `{query}` its query (without `?`). The scheme and host are literal (checked when the config is
/// read), so a request can change where in a site a visitor lands, never which site.
public struct LinkTemplate: Sendable, Equatable {
    public enum Part: Sendable, Equatable {
        case literal(String)
        case capture(Int)
        case path
        case query
    }

    public let source: String
    public let parts: [Part]

    /// Why a template cannot be used; nil when it can.
    public enum Problem: Sendable, Equatable {
        case notAbsolute
        case placeholderInAuthority
        case unknownPlaceholder(String)
        case unclosedBrace
    }

    /// `text` exactly, with no placeholder.
    public static func literal(_ text: String) -> LinkTemplate { LinkTemplate(source: text, parts: [.literal(text)]) }

    public static func parse(_ text: String) -> Result<LinkTemplate, TemplateError> {
        var parts: [Part] = []
        var literal = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            guard character == "{" else {
                literal.append(character)
                index = text.index(after: index)
                continue
            }
            guard let close = text[index...].firstIndex(of: "}") else { return .failure(TemplateError(.unclosedBrace, text)) }
            let name = String(text[text.index(after: index)..<close])
            let part: Part
            switch name {
            case "path": part = .path
            case "query": part = .query
            default:
                guard name.count == 1, let digit = Int(name), digit >= 1 else {
                    return .failure(TemplateError(.unknownPlaceholder(name), text))
                }
                part = .capture(digit)
            }
            if !literal.isEmpty { parts.append(.literal(literal)) }
            literal = ""
            parts.append(part)
            index = text.index(after: close)
        }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        // The scheme, host and the slash that ends them must be literal; `{path}` starts with its own slash.
        if case .literal(let head)? = parts.first, parts.count == 1 || parts[1] == .path, Self.authorityEnd(head) == nil,
            Self.authorityEnd(head + "/") == head.endIndex
        {
            return .success(LinkTemplate(source: text, parts: parts))
        }
        guard case .literal(let head)? = parts.first, let authorityEnd = Self.authorityEnd(head) else {
            let lead: String
            if case .literal(let head)? = parts.first { lead = head } else { lead = "" }
            let absolute = lead.lowercased().hasPrefix("https://") || lead.lowercased().hasPrefix("http://")
            return .failure(TemplateError(absolute ? .placeholderInAuthority : .notAbsolute, text))
        }
        _ = authorityEnd
        return .success(LinkTemplate(source: text, parts: parts))
    }

    public struct TemplateError: Error, Sendable, Equatable {
        public let problem: Problem
        public let text: String

        init(_ problem: Problem, _ text: String) {
            self.problem = problem
            self.text = text
        }

        public var message: String {
            switch problem {
            case .notAbsolute: return "\"\(text)\" is not an absolute http(s) URL; write https://host/path"
            case .placeholderInAuthority:
                return "\"\(text)\" puts a placeholder before the path: the scheme and host must be written out, then \"/\""
            case .unknownPlaceholder(let name):
                return "\"\(text)\" has {\(name)}; the placeholders are {1}…{9} (the rule's wildcards), {path} and {query}"
            case .unclosedBrace: return "\"\(text)\" opens a '{' it never closes"
            }
        }
    }

    /// The end of `scheme://host[:port]/` in `head`, when `head` has it whole; nil otherwise.
    public static func authorityEnd(_ head: String) -> String.Index? {
        let lower = head.lowercased()
        let schemeLength = lower.hasPrefix("https://") ? 8 : lower.hasPrefix("http://") ? 7 : 0
        guard schemeLength > 0 else { return nil }
        let afterScheme = head.index(head.startIndex, offsetBy: schemeLength)
        guard let slash = head[afterScheme...].firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) else { return nil }
        let authority = head[afterScheme..<slash]
        guard !authority.isEmpty, !authority.contains("@"), !authority.contains("\\") else { return nil }
        return slash
    }

    /// `scheme://host[:port]` of an absolute http(s) URL, lower case; nil when the URL has no such start or its
    /// host has anything but letters, digits, `.`, `-` and a port (the result goes into a
    /// Content-Security-Policy header, where a space or `;` would add a source or a directive).
    public static func origin(_ url: String) -> String? {
        let text = url.hasSuffix("/") ? url : url + "/"
        guard let end = authorityEnd(text) else { return nil }
        let origin = text[..<end].lowercased()
        let schemeLength = origin.hasPrefix("https://") ? 8 : 7
        let authority = origin.utf8.dropFirst(schemeLength)
        let allowed = authority.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: ":")
        }
        return allowed && !authority.isEmpty ? origin : nil
    }

    /// The highest capture the template uses (0: none).
    public var highestCapture: Int {
        parts.reduce(0) { highest, part in
            if case .capture(let number) = part { return max(highest, number) }
            return highest
        }
    }

    /// The host the template always points at (lower case).
    public var host: String {
        guard case .literal(var head)? = parts.first else { return "" }
        if Self.authorityEnd(head) == nil { head += "/" }
        guard let end = Self.authorityEnd(head) else { return "" }
        let afterScheme = head.index(head.startIndex, offsetBy: head.lowercased().hasPrefix("https://") ? 8 : 7)
        return head[afterScheme..<end].lowercased()
    }

    /// The URL for one request. Captures, path and query are the request's percent-encoded bytes, kept
    /// percent-encoded; a byte a URL may not carry as is (a space, `"`, `<`, `\`, a control) is encoded.
    public func expand(captures: [String], path: String, query: String?) -> String {
        func value(_ part: Part) -> String {
            switch part {
            case .literal(let text): return text
            case .capture(let number): return number <= captures.count ? captures[number - 1] : ""
            case .path: return path
            case .query: return query ?? ""
            }
        }
        // The usual request fills in bytes that need no encoding: the pieces are copied into one string of
        // the exact size (a redirect is built per request; appending piece by piece costs several times more).
        var total = 0
        for part in parts {
            var piece = value(part)
            if case .literal = part {
                total += piece.utf8.count
                continue
            }
            let kept = piece.withUTF8 { bytes in bytes.allSatisfy(URLText.isKept) }
            guard kept else { return expandEncoding(value) }
            total += piece.utf8.count
        }
        return String(unsafeUninitializedCapacity: total) { output in
            var cursor = 0
            for part in parts {
                var piece = value(part)
                piece.withUTF8 { bytes in
                    _ = UnsafeMutableBufferPointer(rebasing: output[cursor..<(cursor + bytes.count)]).initialize(from: bytes)
                    cursor += bytes.count
                }
            }
            return cursor
        }
    }

    private func expandEncoding(_ value: (Part) -> String) -> String {
        var out = ""
        for part in parts {
            if case .literal(let text) = part { out += text } else { out += URLText.safe(value(part)) }
        }
        return out
    }
}
