import Support

/// What a parse produced: the tree (nil when the syntax is broken) and every finding along the way.
public struct JSONParseResult: Sendable {
    public var root: JSONNode?
    public var diagnostics: [Diagnostic]
}

/// A strict RFC 8259 parser that keeps positions and explains the mistakes people really make.
///
/// Foundation's decoders give no line or column on Linux and accept some non-JSON (trailing commas),
/// so we parse ourselves. The first syntax error ends the parse (what follows it is guesswork), but it
/// names the exact cause: a trailing comma, a `//` comment, a single or typographic quote, a document
/// cut short. A UTF-8 byte order mark and duplicate keys are reported without stopping.
public struct JSONParser {
    /// Deeper nesting than any real config or AASA file; stops a hostile input from exhausting the stack.
    public static let maximumDepth = 256

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    // Columns are computed incrementally from the last position asked for, so a 1 MB single-line
    // (minified) document stays linear.
    private var columnCacheOffset = 0
    private var columnCacheColumn = 1
    /// Every byte in this range is ASCII, so there a column is a byte count: nearly every config and
    /// AASA file is ASCII, and counting scalars byte by byte was a tenth of parsing one.
    private var asciiRange: Range<Int> = 0..<0
    private var depth = 0
    private var findings: [Diagnostic] = []
    private let duplicateKeySeverity: Severity
    private var skips: [Range<Int>] = []
    private var nextSkip = 0
    private var topLevelItemSink: ((JSONNode, Int) -> Void)?

    public static func parse(_ bytes: [UInt8], duplicateKeys: Severity = .error) -> JSONParseResult {
        var parser = JSONParser(bytes: bytes, duplicateKeySeverity: duplicateKeys)
        return parser.run()
    }

    /// Parses `bytes` but steps over each value in `skipping` (sorted byte ranges, each the exact extent
    /// of a value the caller parsed before from identical bytes), leaving a `null` at its start.
    ///
    /// A reload of a 10,000-host config re-parses only the sites that changed this way. The caller must
    /// check that a skipped range starts where a value starts: a range that no value starts at is ignored.
    static func parse(_ bytes: [UInt8], duplicateKeys: Severity, skipping: [Range<Int>]) -> JSONParseResult {
        var parser = JSONParser(bytes: bytes, duplicateKeySeverity: duplicateKeys)
        parser.skips = skipping
        return parser.run()
    }

    /// Parses `bytes`; when the document is an array, each item goes to `eachItem` (with its index) as
    /// soon as it is parsed and the returned root is an empty array at the document's start. A caller
    /// that turns each item into something smaller (an included file's sites) so never holds the
    /// whole tree: each item is used and freed while it is still in the cache. Items handed over before
    /// a syntax error are worth nothing: the result then has no root, as with ``parse(_:duplicateKeys:)``.
    static func parse(_ bytes: [UInt8], duplicateKeys: Severity, eachItem: @escaping (JSONNode, Int) -> Void) -> JSONParseResult {
        var parser = JSONParser(bytes: bytes, duplicateKeySeverity: duplicateKeys)
        parser.topLevelItemSink = eachItem
        return parser.run()
    }

    public static func parse(_ text: String, duplicateKeys: Severity = .error) -> JSONParseResult {
        parse(Array(text.utf8), duplicateKeys: duplicateKeys)
    }

    /// Parses the one value that spans `span` of `bytes`, as a whole-file parse would see it there:
    /// `start` is the position of its first byte, `lineStart` the offset of its line's first byte, `depth`
    /// how deeply it is nested (so the depth limit
    /// holds as in a whole-file parse). Lets a large config's sites be parsed in parallel; a value that
    /// does not end exactly at the span's end is a `json.syntax` error.
    static func parseValue(
        in bytes: [UInt8],
        span: Range<Int>,
        start: SourceLocation,
        lineStart: Int,
        depth: Int,
        duplicateKeys: Severity
    )
        -> JSONParseResult
    {
        var parser = JSONParser(bytes: bytes, duplicateKeySeverity: duplicateKeys)
        parser.index = span.lowerBound
        parser.line = start.line
        // The column cache starts at the value, so positions on its first line need no scan back to
        // the line's start (a minified config is one line).
        parser.lineStart = lineStart
        parser.columnCacheOffset = span.lowerBound
        parser.columnCacheColumn = start.column
        parser.markASCII(span)
        parser.depth = depth
        do throws(SyntaxError) {
            let value = try parser.parseValue()
            if parser.index != span.upperBound {
                throw SyntaxError(
                    diagnostic: Diagnostic(.error, "json.syntax", "the value does not end where expected", at: parser.location())
                )
            }
            return JSONParseResult(root: value, diagnostics: parser.findings)
        } catch {
            return JSONParseResult(root: nil, diagnostics: parser.findings + [error.diagnostic])
        }
    }

    private init(bytes: [UInt8], duplicateKeySeverity: Severity) {
        self.bytes = bytes
        self.duplicateKeySeverity = duplicateKeySeverity
    }

    private struct SyntaxError: Error {
        var diagnostic: Diagnostic
    }

    private mutating func markASCII(_ range: Range<Int>) {
        let isASCII = bytes.withUnsafeBufferPointer { buffer in
            var high: UInt8 = 0
            for offset in range { high |= buffer[offset] }
            return high < 0x80
        }
        asciiRange = isASCII ? range : 0..<0
    }

    private mutating func run() -> JSONParseResult {
        markASCII(0..<bytes.count)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            findings.append(
                Diagnostic(
                    .error,
                    "json.bom",
                    "the file starts with a UTF-8 byte order mark (EF BB BF); Apple's parser rejects it. "
                        + "Save the file as UTF-8 without BOM",
                    at: location()
                )
            )
            index = 3
            lineStart = 3
            columnCacheOffset = 3
        }
        skipWhitespace()
        if index >= bytes.count {
            findings.append(
                Diagnostic(
                    .error,
                    "json.empty",
                    "the file is empty; it must contain a JSON object such as {\"applinks\": {\"details\": []}}",
                    at: location()
                )
            )
            return JSONParseResult(root: nil, diagnostics: findings)
        }
        do throws(SyntaxError) {
            let root = try parseValue()
            skipWhitespace()
            if index < bytes.count {
                let here = location()
                if isCommentStart() {
                    throw commentError(at: here)
                }
                throw SyntaxError(
                    diagnostic: Diagnostic(
                        .error,
                        "json.syntax",
                        "unexpected \(describeCurrent()) after the end of the JSON document; a file holds exactly "
                            + "one value. Remove what follows the closing bracket",
                        at: here
                    )
                )
            }
            return JSONParseResult(root: root, diagnostics: findings)
        } catch {
            findings.append(error.diagnostic)
            return JSONParseResult(root: nil, diagnostics: findings)
        }
    }

    // MARK: - Positions

    private mutating func location(at offset: Int? = nil) -> SourceLocation {
        let offset = offset ?? index
        if offset < columnCacheOffset || columnCacheOffset < lineStart {
            columnCacheOffset = lineStart
            columnCacheColumn = 1
        }
        var column = columnCacheColumn
        var cursor = columnCacheOffset
        if asciiRange.contains(cursor) && offset <= asciiRange.upperBound && cursor <= offset {
            column += offset - cursor
            cursor = offset
        }
        while cursor < offset && cursor < bytes.count {
            if bytes[cursor] & 0xC0 != 0x80 { column += 1 }
            cursor += 1
        }
        columnCacheOffset = offset
        columnCacheColumn = column
        return SourceLocation(offset: offset, line: line, column: column)
    }

    private mutating func newline(at offset: Int) {
        line += 1
        lineStart = offset + 1
        columnCacheOffset = lineStart
        columnCacheColumn = 1
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D: index += 1
            case 0x0A:
                newline(at: index)
                index += 1
            default: return
            }
        }
    }

    // MARK: - Values

    private mutating func parseValue() throws(SyntaxError) -> JSONNode {
        guard index < bytes.count else { throw truncated(expecting: "a value") }
        let start = location()
        if nextSkip < skips.count {
            while nextSkip < skips.count && skips[nextSkip].lowerBound < index { nextSkip += 1 }
            if nextSkip < skips.count && skips[nextSkip].lowerBound == index {
                let end = min(skips[nextSkip].upperBound, bytes.count)
                nextSkip += 1
                while index < end {
                    if bytes[index] == 0x0A { newline(at: index) }
                    index += 1
                }
                return JSONNode(.null, at: start)
            }
        }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(start: start)
        case UInt8(ascii: "["): return try parseArray(start: start)
        case UInt8(ascii: "\""): return JSONNode(.string(try parseString()), at: start)
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return JSONNode(.bool(true), at: start)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return JSONNode(.bool(false), at: start)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return JSONNode(.null, at: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONNode(.number(try parseNumber()), at: start)
        default:
            throw unexpected(expecting: "a value (object, array, string, number, true, false or null)")
        }
    }

    private mutating func parseObject(start: SourceLocation) throws(SyntaxError) -> JSONNode {
        try enterNesting(at: start)
        defer { depth -= 1 }
        index += 1
        var members: [JSONMember] = []
        // Small objects (nearly all) look for a duplicate key among their members; a dictionary pays off
        // only for large ones.
        var seenKeys: [String: SourceLocation]?
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return JSONNode(.object(members), at: start)
        }
        // Room for a typical object's members up front: growing one slot at a time allocated and copied
        // the array up to three times per object.
        members.reserveCapacity(4)
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw truncated(expecting: "a key", openedAt: start, closer: "}") }
            guard bytes[index] == UInt8(ascii: "\"") else {
                if bytes[index] == UInt8(ascii: "}"), let comma = lastComma {
                    throw trailingComma(at: comma, closer: "}")
                }
                throw unexpected(expecting: "a key in double quotes")
            }
            let keyLocation = location()
            let key = try parseString()
            if seenKeys == nil && members.count >= 16 {
                var byKey: [String: SourceLocation] = [:]
                for member in members where byKey[member.key] == nil { byKey[member.key] = member.keyLocation }
                seenKeys = byKey
            }
            let earlier = seenKeys != nil ? seenKeys?[key] : members.first { $0.key == key }?.keyLocation
            if let first = earlier {
                findings.append(
                    Diagnostic(
                        duplicateKeySeverity,
                        "json.duplicate-key",
                        "key \"\(key)\" appears twice in this object (first at line \(first.line):\(first.column)); "
                            + "parsers disagree on which one wins. Keep one",
                        at: keyLocation
                    )
                )
            } else {
                seenKeys?[key] = keyLocation
            }
            skipWhitespace()
            guard index < bytes.count else { throw truncated(expecting: "':'", openedAt: start, closer: "}") }
            guard bytes[index] == UInt8(ascii: ":") else { throw unexpected(expecting: "':' after the key") }
            index += 1
            skipWhitespace()
            guard index < bytes.count else { throw truncated(expecting: "a value", openedAt: start, closer: "}") }
            let value = try parseValue()
            members.append(JSONMember(key: key, keyLocation: keyLocation, value: value))
            skipWhitespace()
            guard index < bytes.count else { throw truncated(expecting: "',' or '}'", openedAt: start, closer: "}") }
            switch bytes[index] {
            case UInt8(ascii: ","):
                lastComma = location()
                index += 1
            case UInt8(ascii: "}"):
                index += 1
                lastComma = nil
                return JSONNode(.object(members), at: start)
            default:
                throw unexpected(expecting: "',' or '}' after the value", missingCommaHint: true)
            }
        }
    }

    private var lastComma: SourceLocation?

    private mutating func parseArray(start: SourceLocation) throws(SyntaxError) -> JSONNode {
        try enterNesting(at: start)
        defer { depth -= 1 }
        index += 1
        var items: [JSONNode] = []
        skipWhitespace()
        // The items of a top-level array go to the caller one by one when it asked for that.
        let sink = depth == 1 ? topLevelItemSink : nil
        var sunk = 0
        if index < bytes.count && bytes[index] != UInt8(ascii: "]") && sink == nil { items.reserveCapacity(4) }
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return JSONNode(.array(items), at: start)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw truncated(expecting: "a value", openedAt: start, closer: "]") }
            if bytes[index] == UInt8(ascii: "]"), let comma = lastComma {
                throw trailingComma(at: comma, closer: "]")
            }
            lastComma = nil
            if let sink {
                sink(try parseValue(), sunk)
                sunk += 1
            } else {
                items.append(try parseValue())
            }
            skipWhitespace()
            guard index < bytes.count else { throw truncated(expecting: "',' or ']'", openedAt: start, closer: "]") }
            switch bytes[index] {
            case UInt8(ascii: ","):
                lastComma = location()
                index += 1
            case UInt8(ascii: "]"):
                index += 1
                lastComma = nil
                return JSONNode(.array(items), at: start)
            default:
                throw unexpected(expecting: "',' or ']' after the value", missingCommaHint: true)
            }
        }
    }

    private mutating func enterNesting(at start: SourceLocation) throws(SyntaxError) {
        depth += 1
        if depth > Self.maximumDepth {
            throw SyntaxError(
                diagnostic: Diagnostic(
                    .error,
                    "json.too-deep",
                    "nesting deeper than \(Self.maximumDepth) levels; no AASA file or config needs that",
                    at: start
                )
            )
        }
    }

    private mutating func expectLiteral(_ word: StaticString) throws(SyntaxError) {
        let expected = word.withUTF8Buffer { Array($0) }
        if bytes.count - index >= expected.count && Array(bytes[index..<index + expected.count]) == expected {
            index += expected.count
            return
        }
        throw unexpected(expecting: "a value (object, array, string, number, true, false or null)")
    }

    private mutating func parseNumber() throws(SyntaxError) -> String {
        let begin = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, ASCII.isDigit(bytes[index]) else { throw unexpected(expecting: "a digit") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count && ASCII.isDigit(bytes[index]) {
                throw unexpected(expecting: "'.' or the end of the number (JSON numbers have no leading zeros)")
            }
        } else {
            while index < bytes.count && ASCII.isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, ASCII.isDigit(bytes[index]) else { throw unexpected(expecting: "a digit after '.'") }
            while index < bytes.count && ASCII.isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                index += 1
            }
            guard index < bytes.count, ASCII.isDigit(bytes[index]) else {
                throw unexpected(expecting: "a digit in the exponent")
            }
            while index < bytes.count && ASCII.isDigit(bytes[index]) { index += 1 }
        }
        return String(decoding: bytes[begin..<index], as: UTF8.self)
    }

    private mutating func parseString() throws(SyntaxError) -> String {
        // Fast path: printable ASCII up to the closing quote (nearly every string in a config) becomes a
        // String in one step; anything else (escapes, UTF-8, mistakes) takes the scalar-by-scalar path.
        var end = index + 1
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
                index = end + 1
                return text
            }
            if byte < 0x20 || byte >= 0x80 || byte == UInt8(ascii: "\\") { break }
            end += 1
        }
        let opening = location()
        index += 1
        var scalars = String.UnicodeScalarView()
        var lastTypographicQuote: (SourceLocation, Unicode.Scalar)?
        while true {
            guard index < bytes.count else {
                throw unterminatedString(openedAt: opening, typographicQuote: lastTypographicQuote, atEnd: true)
            }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                scalars.append(try parseEscape())
            case 0x0A, 0x0D:
                throw unterminatedString(openedAt: opening, typographicQuote: lastTypographicQuote, atEnd: false)
            case 0x00..<0x20:
                throw SyntaxError(
                    diagnostic: Diagnostic(
                        .error,
                        "json.syntax",
                        "control character U+\(ASCII.hex(UInt32(byte), width: 4)) inside a string; write it as an escape "
                            + "such as \\t or \\u\(ASCII.hex(UInt32(byte), width: 4))",
                        at: location()
                    )
                )
            case 0x20..<0x80:
                scalars.append(Unicode.Scalar(byte))
                index += 1
            default:
                let here = location()
                let scalar = try decodeUTF8()
                if Self.typographicQuotes.contains(scalar) { lastTypographicQuote = (here, scalar) }
                scalars.append(scalar)
            }
        }
    }

    private static let typographicQuotes: Set<Unicode.Scalar> = ["\u{201C}", "\u{201D}", "\u{2018}", "\u{2019}"]

    private mutating func unterminatedString(
        openedAt opening: SourceLocation,
        typographicQuote: (SourceLocation, Unicode.Scalar)?,
        atEnd: Bool
    ) -> SyntaxError {
        if let (quoteLocation, scalar) = typographicQuote {
            return SyntaxError(
                diagnostic: Diagnostic(
                    .error,
                    "json.smart-quote",
                    "the string opened at line \(opening.line):\(opening.column) is never closed: "
                        + "\(scalar) (U+\(ASCII.hex(scalar.value, width: 4))) is a typographic quote, not a JSON quote. "
                        + "Replace it with a straight \" (editors and word processors substitute these)",
                    at: quoteLocation
                )
            )
        }
        if atEnd {
            return SyntaxError(
                diagnostic: Diagnostic(
                    .error,
                    "json.truncated",
                    "the file ends inside the string opened at line \(opening.line):\(opening.column); "
                        + "the document looks cut short",
                    at: location()
                )
            )
        }
        return SyntaxError(
            diagnostic: Diagnostic(
                .error,
                "json.syntax",
                "the string opened at line \(opening.line):\(opening.column) is not closed before the end of the "
                    + "line; add the closing \" (line breaks inside strings must be written \\n)",
                at: location()
            )
        )
    }

    private mutating func parseEscape() throws(SyntaxError) -> Unicode.Scalar {
        let escapeStart = location()
        index += 1
        guard index < bytes.count else { throw truncated(expecting: "an escape character") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try parseHex4(escapeStart: escapeStart)
            if (0xD800..<0xDC00).contains(high) {
                guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else {
                    throw invalidEscape(
                        at: escapeStart,
                        "a high surrogate \\u\(ASCII.hex(high, width: 4)) must be followed by a low surrogate"
                    )
                }
                index += 2
                let low = try parseHex4(escapeStart: escapeStart)
                guard (0xDC00..<0xE000).contains(low) else {
                    throw invalidEscape(at: escapeStart, "\\u\(ASCII.hex(low, width: 4)) is not a low surrogate")
                }
                let combined = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                return Unicode.Scalar(combined) ?? "\u{FFFD}"
            }
            guard let scalar = Unicode.Scalar(high) else {
                throw invalidEscape(at: escapeStart, "\\u\(ASCII.hex(high, width: 4)) is a lone low surrogate")
            }
            return scalar
        default:
            throw invalidEscape(
                at: escapeStart,
                "\\\(Character(Unicode.Scalar(byte))) is not a JSON escape; valid ones are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX"
            )
        }
    }

    private mutating func parseHex4(escapeStart: SourceLocation) throws(SyntaxError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw invalidEscape(at: escapeStart, "\\u needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw invalidEscape(at: escapeStart, "\\u needs four hex digits")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private func invalidEscape(at location: SourceLocation, _ detail: String) -> SyntaxError {
        SyntaxError(diagnostic: Diagnostic(.error, "json.syntax", "invalid escape in string: \(detail)", at: location))
    }

    /// Decodes one UTF-8 sequence at `index`, rejecting overlong forms and surrogates (RFC 3629).
    private mutating func decodeUTF8() throws(SyntaxError) -> Unicode.Scalar {
        let lead = bytes[index]
        let length: Int
        var value: UInt32
        switch lead {
        case 0xC2...0xDF:
            length = 2
            value = UInt32(lead & 0x1F)
        case 0xE0...0xEF:
            length = 3
            value = UInt32(lead & 0x0F)
        case 0xF0...0xF4:
            length = 4
            value = UInt32(lead & 0x07)
        default: throw invalidUTF8()
        }
        guard bytes.count - index >= length else { throw invalidUTF8() }
        for offset in 1..<length {
            let byte = bytes[index + offset]
            guard byte & 0xC0 == 0x80 else { throw invalidUTF8() }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        let minimum: UInt32 = length == 2 ? 0x80 : (length == 3 ? 0x800 : 0x10000)
        guard value >= minimum, let scalar = Unicode.Scalar(value) else { throw invalidUTF8() }
        index += length
        return scalar
    }

    private mutating func invalidUTF8() -> SyntaxError {
        SyntaxError(
            diagnostic: Diagnostic(
                .error,
                "json.encoding",
                "byte 0x\(ASCII.hex(UInt32(bytes[index]), width: 2)) is not valid UTF-8; JSON must be UTF-8 encoded "
                    + "(was the file saved as Latin-1 or UTF-16?)",
                at: location()
            )
        )
    }

    // MARK: - Error explanations

    private func isCommentStart() -> Bool {
        index + 1 < bytes.count && bytes[index] == UInt8(ascii: "/")
            && (bytes[index + 1] == UInt8(ascii: "/") || bytes[index + 1] == UInt8(ascii: "*"))
    }

    private func commentError(at location: SourceLocation) -> SyntaxError {
        SyntaxError(
            diagnostic: Diagnostic(
                .error,
                "json.comment",
                "JSON has no comments; remove this \(bytes[index + 1] == UInt8(ascii: "/") ? "//" : "/* */") comment "
                    + "(in an AASA component, a \"comment\" key is the supported way to annotate)",
                at: location
            )
        )
    }

    private func trailingComma(at comma: SourceLocation, closer: Character) -> SyntaxError {
        SyntaxError(
            diagnostic: Diagnostic(
                .error,
                "json.trailing-comma",
                "trailing comma before '\(closer)': JSON does not allow a comma after the last "
                    + "\(closer == "}" ? "member" : "element"); remove it",
                at: comma
            )
        )
    }

    private mutating func truncated(
        expecting: String,
        openedAt: SourceLocation? = nil,
        closer: Character? = nil
    ) -> SyntaxError {
        var message = "the file ends where \(expecting) was expected"
        if let openedAt, let closer {
            message +=
                "; the \(closer == "}" ? "object" : "array") opened at line \(openedAt.line):\(openedAt.column) "
                + "is never closed with '\(closer)'. The document looks cut short"
        }
        return SyntaxError(diagnostic: Diagnostic(.error, "json.truncated", message, at: location()))
    }

    private mutating func unexpected(expecting: String, missingCommaHint: Bool = false) -> SyntaxError {
        // A number or literal cut off by the end of the file ("-", "1e", "tru"): the file is what is short.
        guard index < bytes.count else { return truncated(expecting: expecting) }
        let here = location()
        if isCommentStart() { return commentError(at: here) }
        let byte = bytes[index]
        if byte == UInt8(ascii: "'") {
            // The whole document in single quotes, as `echo '…'` pasted into a file leaves it.
            let last = bytes.lastIndex { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }
            let next = bytes[(index + 1)...].first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }
            if let last, last > index, bytes[last] == UInt8(ascii: "'"), next == UInt8(ascii: "{") || next == UInt8(ascii: "[") {
                return SyntaxError(
                    diagnostic: Diagnostic(
                        .error,
                        "json.single-quote",
                        "the whole document is wrapped in single quotes; remove the quotes around the document",
                        at: here
                    )
                )
            }
            return SyntaxError(
                diagnostic: Diagnostic(
                    .error,
                    "json.single-quote",
                    "JSON strings use double quotes; replace the single quotes with \"",
                    at: here
                )
            )
        }
        if byte >= 0x80 {
            var probe = self
            if let scalar = try? probe.decodeUTF8(), Self.typographicQuotes.contains(scalar) {
                return SyntaxError(
                    diagnostic: Diagnostic(
                        .error,
                        "json.smart-quote",
                        "\(scalar) (U+\(ASCII.hex(scalar.value, width: 4))) is a typographic quote; JSON needs a straight \" "
                            + "(editors and word processors substitute these)",
                        at: here
                    )
                )
            }
        }
        if index == 0 && bytes.starts(with: [0x1F, 0x8B]) {
            let message =
                "the file is gzip-compressed (it starts with the gzip bytes 1f 8b), not JSON: decompress it (gunzip). A server may "
                + "send it compressed only with Content-Encoding: gzip"
            return SyntaxError(diagnostic: Diagnostic(.error, "json.syntax", message, at: here))
        }
        var message = "expected \(expecting), found \(describeCurrent())"
        if missingCommaHint && (byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[")) {
            message += "; is a ',' missing before it?"
        } else if expecting.hasPrefix("a key") && isIdentifierStart(byte) {
            message += "; keys must be quoted strings, e.g. \"applinks\""
        }
        return SyntaxError(diagnostic: Diagnostic(.error, "json.syntax", message, at: here))
    }

    private func isIdentifierStart(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || byte == UInt8(ascii: "_")
    }

    private func describeCurrent() -> String {
        guard index < bytes.count else { return "the end of the file" }
        let byte = bytes[index]
        if byte < 0x20 { return "control character U+\(ASCII.hex(UInt32(byte), width: 4))" }
        if byte < 0x80 { return "'\(Character(Unicode.Scalar(byte)))'" }
        var probe = self
        if let scalar = try? probe.decodeUTF8() { return "'\(Character(scalar))' (U+\(ASCII.hex(scalar.value, width: 4)))" }
        return "byte 0x\(ASCII.hex(UInt32(byte), width: 2))"
    }
}
