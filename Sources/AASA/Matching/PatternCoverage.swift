import Support

/// Whether one URL pattern matches everything another matches: the question behind "this later rule
/// never decides" when the two are not simply equal (`/platform/*` before `NOT /platform/login`).
///
/// Sound, not complete: a `true` is always right; a pattern with a substitution variable is never said
/// to cover or be covered (its values would have to be expanded), so such pairs answer `false`.
enum PatternCoverage {
    private enum Symbol: Equatable {
        case literal(Unicode.Scalar)
        case anyOne
        case anyRun
    }

    /// Every text `specific` matches is matched by `general` (`*` any run, `?` one character).
    static func covers(_ general: String, _ specific: String, caseSensitive: Bool = true) -> Bool {
        if general == specific { return true }
        // Most pairs differ in a literal before either has a wildcard (`/admin/*` and `/product/*`): that
        // settles it without building the table, which every site's validation would otherwise pay for.
        if literalPrefixesDiffer(general, specific, caseSensitive: caseSensitive) { return false }
        guard !general.containsBytes("$("), !specific.containsBytes("$(") else { return false }
        let wide = symbols(caseSensitive ? general : general.lowercased())
        let narrow = symbols(caseSensitive ? specific : specific.lowercased())
        // Patterns are short; the table is (|wide|+1) × (|narrow|+1) answers, each computed once.
        guard wide.count * narrow.count <= 1 << 16 else { return false }
        var memo = [UInt8](repeating: 0, count: (wide.count + 1) * (narrow.count + 1))
        func answer(_ i: Int, _ j: Int) -> Bool {
            let slot = i * (narrow.count + 1) + j
            if memo[slot] != 0 { return memo[slot] == 2 }
            let result: Bool
            if i == wide.count {
                result = j == narrow.count
            } else {
                switch wide[i] {
                case .anyRun:
                    // The run matches nothing more, or takes the next symbol of the narrow pattern whatever it is.
                    result = answer(i + 1, j) || (j < narrow.count && answer(i, j + 1))
                case .anyOne:
                    // One character: a literal or a `?`, never a `*` (which may be zero or many).
                    result = j < narrow.count && narrow[j] != .anyRun && answer(i + 1, j + 1)
                case .literal(let scalar):
                    result = j < narrow.count && narrow[j] == .literal(scalar) && answer(i + 1, j + 1)
                }
            }
            memo[slot] = result ? 2 : 1
            return result
        }
        return answer(0, 0)
    }

    /// True when, before the first `*`, `?` or `$` of either, the two differ in a character: then no text
    /// `specific` matches can match `general`. Bytes beyond ASCII end the comparison (case folding).
    private static func literalPrefixesDiffer(_ general: String, _ specific: String, caseSensitive: Bool) -> Bool {
        // Read in place (a native string's bytes are contiguous): copies to call `withUTF8` on cost a
        // retain and a release each, for every pair of rules of every site.
        guard
            let differ = general.utf8.withContiguousStorageIfAvailable({ wide in
                specific.utf8.withContiguousStorageIfAvailable { narrow in prefixesDiffer(wide, narrow, caseSensitive: caseSensitive) }
            }) ?? nil
        else {
            var general = general
            var specific = specific
            return general.withUTF8 { wide in specific.withUTF8 { narrow in prefixesDiffer(wide, narrow, caseSensitive: caseSensitive) } }
        }
        return differ
    }

    private static func prefixesDiffer(
        _ wide: UnsafeBufferPointer<UInt8>,
        _ narrow: UnsafeBufferPointer<UInt8>,
        caseSensitive: Bool
    ) -> Bool {
        for index in 0..<min(wide.count, narrow.count) {
            var (a, b) = (wide[index], narrow[index])
            if a == UInt8(ascii: "*") || a == UInt8(ascii: "?") || a == UInt8(ascii: "$") || a >= 0x80 { return false }
            if b == UInt8(ascii: "*") || b == UInt8(ascii: "?") || b == UInt8(ascii: "$") || b >= 0x80 { return false }
            if !caseSensitive {
                if (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(a) { a |= 0x20 }
                if (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b) { b |= 0x20 }
            }
            if a != b { return true }
        }
        return false
    }

    private static func symbols(_ pattern: String) -> [Symbol] {
        pattern.unicodeScalars.map { scalar in
            switch scalar {
            case "*": return .anyRun
            case "?": return .anyOne
            default: return .literal(scalar)
            }
        }
    }
}
