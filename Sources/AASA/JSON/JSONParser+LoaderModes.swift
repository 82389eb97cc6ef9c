/// The config loader's own ways to parse: stepping over sites it already has, handing an included
/// file's sites over one by one, and parsing one site on its own thread.
extension JSONParser {
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
    ///
    /// `directItem`, when given, is offered each item that is an object first, with its position and the
    /// offset of its line's start: it may read the item from `bytes` itself and say where the item ended
    /// (the parser goes on from there), or return nil to have the item parsed and handed to `eachItem`.
    static func parse(
        _ bytes: [UInt8],
        duplicateKeys: Severity,
        directItem: ((SourceLocation, Int, Int) -> ValueEnd?)? = nil,
        eachItem: @escaping (JSONNode, Int) -> Void
    ) -> JSONParseResult {
        var parser = JSONParser(bytes: bytes, duplicateKeySeverity: duplicateKeys)
        parser.topLevelItemSink = eachItem
        parser.topLevelDirectItem = directItem
        return parser.run()
    }

    /// Where a value read outside the parser ended: the position just after it, and the offset of that
    /// line's first byte.
    struct ValueEnd {
        var location: SourceLocation
        var lineStart: Int
    }

    /// Carries on after a value `directItem` read, from where it ended.
    mutating func resume(after end: ValueEnd) {
        index = end.location.offset
        line = end.location.line
        lineStart = end.lineStart
        columnCacheOffset = end.location.offset
        columnCacheColumn = end.location.column
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
}
