import Support

/// A site's own landing page (`links.landingPage`): the team's HTML with `{{placeholder}}`s the server
/// fills in per request, every value HTML-escaped (docs/links.md, "Your own landing page"). Parsed once
/// when the config loads; a template with a problem is a config error, so the last good one keeps serving.
public struct LandingPageTemplate: Sendable, Equatable {
    /// The documented placeholders, and nothing else.
    public enum Placeholder: String, Sendable, CaseIterable {
        /// Required: the Smart App Banner and the preview tags, which no page may lose.
        case head
        case title
        case description
        case image
        case appName
        case appIcon
        case link
        case deepLink
        case web
        /// What an in-app browser's visitor should know; empty for everyone else.
        case note
        /// The page's buttons (App Store, Google Play, open in the app, the web) as `<a class="button">`s.
        case buttons
    }

    public enum Part: Sendable, Equatable {
        case text(String)
        case value(Placeholder)
    }

    public let parts: [Part]
    /// `'sha256-…'` of each `<style>` element's text: the Content-Security-Policy allows exactly these
    /// inline styles and no other.
    public let styleHashes: [String]

    /// Larger than any landing page needs; the whole template is kept in memory per site.
    public static let maximumSize = 256 * 1024

    public struct Problem: Sendable, Equatable {
        public var rule: String
        public var message: String
        public var location: SourceLocation?
    }

    /// Every problem found, not only the first: a team fixes a template in one go.
    public struct Problems: Error, Sendable, Equatable {
        public var all: [Problem]
    }

    public static func parse(_ bytes: [UInt8]) -> Result<LandingPageTemplate, Problems> {
        guard bytes.count <= maximumSize else {
            return .failure(
                Problems(all: [
                    Problem(
                        rule: "links.landing-page",
                        message: "the landing page template is \(bytes.count) bytes; at most \(maximumSize) are kept",
                        location: nil
                    )
                ])
            )
        }
        guard String(validating: bytes, as: UTF8.self) != nil else {
            return .failure(
                Problems(all: [Problem(rule: "links.landing-page", message: "the landing page template is not UTF-8 text", location: nil)])
            )
        }
        var problems: [Problem] = []
        let lines = LineIndex(bytes)
        var parts: [Part] = []
        var literal: [UInt8] = []
        var seenHead = false
        var cursor = 0
        let open: [UInt8] = Array("{{".utf8)
        let close: [UInt8] = Array("}}".utf8)
        while cursor < bytes.count {
            guard starts(bytes, open, at: cursor) else {
                literal.append(bytes[cursor])
                cursor += 1
                continue
            }
            guard let end = find(bytes, close, from: cursor + 2) else {
                problems.append(
                    Problem(
                        rule: "links.page-placeholder",
                        message: "\"{{\" is never closed by \"}}\"",
                        location: lines.location(of: cursor)
                    )
                )
                break
            }
            let name = String(decoding: bytes[(cursor + 2)..<end], as: UTF8.self).trimmingSpacesAndTabs()
            if let placeholder = Placeholder(rawValue: name) {
                if !literal.isEmpty { parts.append(.text(String(decoding: literal, as: UTF8.self))) }
                literal = []
                parts.append(.value(placeholder))
                if placeholder == .head { seenHead = true }
            } else {
                let names = Placeholder.allCases.map(\.rawValue)
                let suggestion = closestMatch(to: name, in: names)
                problems.append(
                    Problem(
                        rule: "links.page-placeholder",
                        message: "no placeholder {{\(name)}}"
                            + (suggestion.map { "; did you mean {{\($0)}}?" } ?? "; the placeholders are "
                                + names.map { "{{\($0)}}" }.joined(separator: ", ")),
                        location: lines.location(of: cursor)
                    )
                )
            }
            cursor = end + 2
        }
        if !literal.isEmpty { parts.append(.text(String(decoding: literal, as: UTF8.self))) }
        if !seenHead && problems.isEmpty {
            problems.append(
                Problem(
                    rule: "links.page-head",
                    message: "the template has no {{head}}: put it inside <head>, where the Smart App Banner and the link "
                        + "preview tags go (a landing page without them loses the banner and its preview)",
                    location: nil
                )
            )
        }
        // ASCII case folding keeps every offset where it was (tags are ASCII).
        let loweredBytes = bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        if let script = find(loweredBytes, Array("<script".utf8), from: 0) {
            problems.append(
                Problem(
                    rule: "links.page-script",
                    message: "the template has a <script>: link pages run no script (their Content-Security-Policy blocks "
                        + "every one); the buttons work without it",
                    location: lines.location(of: script)
                )
            )
        }
        var hashes: [String] = []
        var searchFrom = 0
        while let styleOpen = find(loweredBytes, Array("<style".utf8), from: searchFrom) {
            guard let tagEnd = loweredBytes[styleOpen...].firstIndex(of: UInt8(ascii: ">")),
                let styleClose = find(loweredBytes, Array("</style".utf8), from: tagEnd + 1)
            else {
                problems.append(
                    Problem(rule: "links.page-style", message: "a <style> element is never closed", location: lines.location(of: styleOpen))
                )
                break
            }
            let content = Array(bytes[(tagEnd + 1)..<styleClose])
            if find(content, open, from: 0) != nil {
                problems.append(
                    Problem(
                        rule: "links.page-style",
                        message: "a placeholder inside <style>: the page's Content-Security-Policy allows the style by its "
                            + "hash, which a value filled in per request would break",
                        location: lines.location(of: tagEnd + 1)
                    )
                )
            }
            hashes.append("'sha256-\(Base64.encode(SHA256.digest(content)))'")
            searchFrom = styleClose + 1
        }
        if !problems.isEmpty { return .failure(Problems(all: problems)) }
        return .success(LandingPageTemplate(parts: parts, styleHashes: Array(Set(hashes)).sorted()))
    }

    static func starts(_ bytes: [UInt8], _ prefix: [UInt8], at index: Int) -> Bool {
        index + prefix.count <= bytes.count && bytes[index..<(index + prefix.count)].elementsEqual(prefix)
    }

    static func find(_ bytes: [UInt8], _ needle: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + needle.count <= bytes.count {
            if starts(bytes, needle, at: index) { return index }
            index += 1
        }
        return nil
    }

    /// Offsets to line:column, for findings in the template file.
    struct LineIndex {
        let lineStarts: [Int]

        init(_ bytes: [UInt8]) {
            var starts = [0]
            for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") { starts.append(offset + 1) }
            lineStarts = starts
        }

        func location(of offset: Int) -> SourceLocation {
            var low = 0
            var high = lineStarts.count - 1
            while low < high {
                let middle = (low + high + 1) / 2
                if lineStarts[middle] <= offset { low = middle } else { high = middle - 1 }
            }
            return SourceLocation(offset: offset, line: low + 1, column: offset - lineStarts[low] + 1)
        }
    }
}
