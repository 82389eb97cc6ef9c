import Support

/// The messages that name the mistake people really make (a comment, a trailing comma, a single
/// quote, a document cut short) instead of "unexpected character".
extension JSONParser {
    func isCommentStart() -> Bool {
        index + 1 < bytes.count && bytes[index] == UInt8(ascii: "/")
            && (bytes[index + 1] == UInt8(ascii: "/") || bytes[index + 1] == UInt8(ascii: "*"))
    }

    func commentError(at location: SourceLocation) -> SyntaxError {
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

    func trailingComma(at comma: SourceLocation, closer: Character) -> SyntaxError {
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

    mutating func truncated(
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

    mutating func unexpected(expecting: String, missingCommaHint: Bool = false) -> SyntaxError {
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

    func isIdentifierStart(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || byte == UInt8(ascii: "_")
    }

    func describeCurrent() -> String {
        guard index < bytes.count else { return "the end of the file" }
        let byte = bytes[index]
        if byte < 0x20 { return "control character U+\(ASCII.hex(UInt32(byte), width: 4))" }
        if byte < 0x80 { return "'\(Character(Unicode.Scalar(byte)))'" }
        var probe = self
        if let scalar = try? probe.decodeUTF8() { return "'\(Character(scalar))' (U+\(ASCII.hex(scalar.value, width: 4)))" }
        return "byte 0x\(ASCII.hex(UInt32(byte), width: 2))"
    }
}
