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

    let bytes: [UInt8]
    var index = 0
    var line = 1
    var lineStart = 0
    // Columns are computed incrementally from the last position asked for, so a 1 MB single-line
    // (minified) document stays linear.
    var columnCacheOffset = 0
    var columnCacheColumn = 1
    /// Every byte in this range is ASCII, so there a column is a byte count: nearly every config and
    /// AASA file is ASCII, and counting scalars byte by byte was a tenth of parsing one.
    var asciiRange: Range<Int> = 0..<0
    var depth = 0
    var findings: [Diagnostic] = []
    let duplicateKeySeverity: Severity
    var skips: [Range<Int>] = []
    var nextSkip = 0
    var topLevelItemSink: ((JSONNode, Int) -> Void)?
    var topLevelDirectItem: ((SourceLocation, Int, Int) -> ValueEnd?)?

    public static func parse(_ bytes: [UInt8], duplicateKeys: Severity = .error) -> JSONParseResult {
        var parser = JSONParser(bytes: bytes, duplicateKeySeverity: duplicateKeys)
        return parser.run()
    }

    public static func parse(_ text: String, duplicateKeys: Severity = .error) -> JSONParseResult {
        parse(Array(text.utf8), duplicateKeys: duplicateKeys)
    }

    init(bytes: [UInt8], duplicateKeySeverity: Severity) {
        self.bytes = bytes
        self.duplicateKeySeverity = duplicateKeySeverity
    }

    struct SyntaxError: Error {
        var diagnostic: Diagnostic
    }

    mutating func markASCII(_ range: Range<Int>) {
        let isASCII = bytes.withUnsafeBufferPointer { buffer in
            var high: UInt8 = 0
            for offset in range { high |= buffer[offset] }
            return high < 0x80
        }
        asciiRange = isASCII ? range : 0..<0
    }

    mutating func run() -> JSONParseResult {
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

    mutating func location(at offset: Int? = nil) -> SourceLocation {
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

    mutating func newline(at offset: Int) {
        line += 1
        lineStart = offset + 1
        columnCacheOffset = lineStart
        columnCacheColumn = 1
    }

    mutating func skipWhitespace() {
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

    mutating func parseValue() throws(SyntaxError) -> JSONNode {
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

    mutating func parseObject(start: SourceLocation) throws(SyntaxError) -> JSONNode {
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
            if try closesAfterValue(UInt8(ascii: "}"), openedAt: start) { return JSONNode(.object(members), at: start) }
        }
    }

    var lastComma: SourceLocation?

    mutating func parseArray(start: SourceLocation) throws(SyntaxError) -> JSONNode {
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
                if let direct = topLevelDirectItem, bytes[index] == UInt8(ascii: "{"), nextSkip >= skips.count,
                    let end = direct(location(), lineStart, sunk)
                {
                    resume(after: end)
                } else {
                    sink(try parseValue(), sunk)
                }
                sunk += 1
            } else {
                items.append(try parseValue())
            }
            if try closesAfterValue(UInt8(ascii: "]"), openedAt: start) { return JSONNode(.array(items), at: start) }
        }
    }

    /// After an object's member or an array's item: a comma (another follows: false) or `closer` (the
    /// container ends: true); anything else is a syntax error, most often a missing comma.
    @inline(__always)
    private mutating func closesAfterValue(_ closer: UInt8, openedAt start: SourceLocation) throws(SyntaxError) -> Bool {
        skipWhitespace()
        guard index < bytes.count else {
            let text = Character(Unicode.Scalar(closer))
            throw truncated(expecting: "',' or '\(text)'", openedAt: start, closer: text)
        }
        switch bytes[index] {
        case UInt8(ascii: ","):
            lastComma = location()
            index += 1
            return false
        case closer:
            index += 1
            lastComma = nil
            return true
        default:
            throw unexpected(expecting: "',' or '\(Character(Unicode.Scalar(closer)))' after the value", missingCommaHint: true)
        }
    }

    mutating func enterNesting(at start: SourceLocation) throws(SyntaxError) {
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

    mutating func expectLiteral(_ word: StaticString) throws(SyntaxError) {
        let expected = word.withUTF8Buffer { Array($0) }
        if bytes.count - index >= expected.count && Array(bytes[index..<index + expected.count]) == expected {
            index += expected.count
            return
        }
        throw unexpected(expecting: "a value (object, array, string, number, true, false or null)")
    }

    mutating func parseNumber() throws(SyntaxError) -> String {
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

    mutating func parseString() throws(SyntaxError) -> String {
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

    static let typographicQuotes: Set<Unicode.Scalar> = ["\u{201C}", "\u{201D}", "\u{2018}", "\u{2019}"]

    mutating func unterminatedString(
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

    mutating func parseEscape() throws(SyntaxError) -> Unicode.Scalar {
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

    mutating func parseHex4(escapeStart: SourceLocation) throws(SyntaxError) -> UInt32 {
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

    func invalidEscape(at location: SourceLocation, _ detail: String) -> SyntaxError {
        SyntaxError(diagnostic: Diagnostic(.error, "json.syntax", "invalid escape in string: \(detail)", at: location))
    }

    /// Decodes one UTF-8 sequence at `index`, rejecting overlong forms and surrogates (RFC 3629).
    mutating func decodeUTF8() throws(SyntaxError) -> Unicode.Scalar {
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

    mutating func invalidUTF8() -> SyntaxError {
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
}
