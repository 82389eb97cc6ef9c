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
