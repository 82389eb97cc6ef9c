/// One of Apple's URL patterns, compiled: `*` (zero or more), `?` (exactly one), literals, and
/// `$(variable)` substitutions (docs/aasa-format.md §3.1, §3.6). Patterns are anchored: they must match the whole text.
///
/// Text is handled as Unicode scalar values so that `?` is one character even in a decoded
/// (`percentEncoded: false`) Unicode path.
// A class so that the per-URL loop over rules passes references instead of copying (and
// retaining) every array a pattern holds.
final class Pattern: Sendable {
    enum Element: Sendable, Equatable {
        case literal(UInt32)
        case anyOne
        case anyRun
        /// A variable whose values are all single ASCII characters (`$(digit)`, `$(alpha)`…), as a bitmap.
        case asciiClass(low: UInt64, high: UInt64)
        /// Index into `alternatives`: a variable whose values are longer, e.g. `$(lang)` or `$(food)`.
        case choice(Int)
    }

    let source: String
    let elements: [Element]
    let alternatives: [[[Element]]]
    /// Multi-character variables, indexed for backtracking (empty for most patterns).
    private let choices: [Choice]

    /// Compiles `source`. `variables` resolves `$(name)`; an unresolved reference stays literal text
    /// (it then matches only itself — Apple's behaviour is undocumented; the validator reports it).
    init(_ source: String, caseSensitive: Bool, variables: (String) -> [String]?) {
        self.source = source
        var elements: [Element] = []
        var alternatives: [[[Element]]] = []
        let scalars = Array(source.unicodeScalars)
        var index = 0
        while index < scalars.count {
            if scalars[index] == "$", index + 1 < scalars.count, scalars[index + 1] == "(",
                let close = scalars[(index + 2)...].firstIndex(of: ")")
            {
                let name = String(String.UnicodeScalarView(scalars[(index + 2)..<close]))
                if let values = variables(name) {
                    let compiled = values.map { Pattern.simpleElements($0, caseSensitive: caseSensitive) }
                    if let bitmap = Pattern.asciiClass(compiled) {
                        elements.append(bitmap)
                    } else {
                        alternatives.append(compiled)
                        elements.append(.choice(alternatives.count - 1))
                    }
                    index = close + 1
                    continue
                }
            }
            elements.append(Pattern.element(for: scalars[index], caseSensitive: caseSensitive))
            index += 1
        }
        self.elements = elements
        self.alternatives = alternatives
        self.choices = alternatives.map(Pattern.index)
    }

    /// Variable values may hold `*` and `?` but no other variables (docs/aasa-format.md §3.6).
    private static func simpleElements(_ text: String, caseSensitive: Bool) -> [Element] {
        text.unicodeScalars.map { element(for: $0, caseSensitive: caseSensitive) }
    }

    private static func element(for scalar: Unicode.Scalar, caseSensitive: Bool) -> Element {
        switch scalar {
        case "*": return .anyRun
        case "?": return .anyOne
        default: return .literal(caseSensitive ? scalar.value : foldCase(scalar.value))
        }
    }

    private static func asciiClass(_ values: [[Element]]) -> Element? {
        var low: UInt64 = 0
        var high: UInt64 = 0
        for value in values {
            guard value.count == 1, case .literal(let scalar) = value[0], scalar < 128 else { return nil }
            if scalar < 64 { low |= 1 << UInt64(scalar) } else { high |= 1 << UInt64(scalar - 64) }
        }
        return values.isEmpty ? nil : .asciiClass(low: low, high: high)
    }

    /// True when the pattern matches every text (`*`, `**`): used to spot catch-all rules.
    var matchesEverything: Bool { !elements.isEmpty && elements.allSatisfy { $0 == .anyRun } }

    /// True when the pattern matches the empty string (the query-dictionary trap of docs/aasa-format.md §3.3).
    var matchesEmpty: Bool { matches([]) }

    /// The literal text before the first wildcard, for "closest rule" explanations.
    var literalPrefix: [UInt32] {
        var prefix: [UInt32] = []
        for element in elements {
            guard case .literal(let scalar) = element else { break }
            prefix.append(scalar)
        }
        return prefix
    }

    func matches(_ text: [UInt32]) -> Bool {
        if alternatives.isEmpty { return Pattern.globMatch(elements, text) }
        return matchWithChoices(text)
    }

    /// Matches percent-encoded (hence ASCII) URL bytes directly, folding ASCII case on the fly when
    /// `fold` is set: no per-URL conversion to scalars for the common rules.
    func matches(bytes: ArraySlice<UInt8>, fold: Bool) -> Bool {
        guard alternatives.isEmpty else {
            return matchWithChoices(bytes.map { fold ? foldCase(UInt32($0)) : UInt32($0) })
        }
        return bytes.withUnsafeBufferPointer { buffer in
            fold ? Pattern.globMatch(elements, FoldedBytes(buffer: buffer)) : Pattern.globMatch(elements, PlainBytes(buffer: buffer))
        }
    }

    // MARK: - Single-width patterns: the classic linear-time glob with one backtrack point

    private static func globMatch<Text: ScalarText>(_ pattern: [Element], _ text: Text) -> Bool {
        var p = 0
        var t = 0
        var starP = -1
        var starT = 0
        while t < text.count {
            if p < pattern.count {
                switch pattern[p] {
                case .anyRun:
                    starP = p
                    starT = t
                    p += 1
                    continue
                case .anyOne:
                    p += 1
                    t += 1
                    continue
                case .literal(let scalar) where scalar == text[t]:
                    p += 1
                    t += 1
                    continue
                case .asciiClass(let low, let high) where classContains(low, high, text[t]):
                    p += 1
                    t += 1
                    continue
                default: break
                }
            }
            guard starP >= 0 else { return false }
            p = starP + 1
            starT += 1
            t = starT
        }
        while p < pattern.count, pattern[p] == .anyRun { p += 1 }
        return p == pattern.count
    }

    @inline(__always)
    static func classContains(_ low: UInt64, _ high: UInt64, _ scalar: UInt32) -> Bool {
        if scalar < 64 { return low & (1 << UInt64(scalar)) != 0 }
        if scalar < 128 { return high & (1 << UInt64(scalar - 64)) != 0 }
        return false
    }

    // MARK: - Patterns with multi-character alternatives: backtracking, indexed by first character

    /// A variable's values, indexed by their first literal so `$(lang)` at "e" tries only "ee", "el", "en"…
    struct Choice: Sendable {
        var byFirstScalar: [UInt32: [[Element]]]
        /// Values starting with a wildcard (or empty), tried at every position.
        var unanchored: [[Element]]
    }

    private static func index(_ values: [[Element]]) -> Choice {
        var byFirst: [UInt32: [[Element]]] = [:]
        var unanchored: [[Element]] = []
        for value in values {
            if case .literal(let first)? = value.first {
                byFirst[first, default: []].append(value)
            } else {
                unanchored.append(value)
            }
        }
        return Choice(byFirstScalar: byFirst, unanchored: unanchored)
    }

    /// Matches with memoised backtracking: each (element, position) pair fails at most once, so even
    /// `*$(a)*$(b)*` stays polynomial. Allocations happen only for patterns with variables.
    private func matchWithChoices(_ text: [UInt32]) -> Bool {
        var failed = Set<Int>()
        return matchFrom(0, 0, text, &failed)
    }

    private func matchFrom(_ elementIndex: Int, _ position: Int, _ text: [UInt32], _ failed: inout Set<Int>) -> Bool {
        var e = elementIndex
        var t = position
        while e < elements.count {
            switch elements[e] {
            case .literal(let scalar):
                guard t < text.count, text[t] == scalar else { return false }
            case .anyOne:
                guard t < text.count else { return false }
            case .asciiClass(let low, let high):
                guard t < text.count, Pattern.classContains(low, high, text[t]) else { return false }
            case .anyRun:
                let key = e * (text.count + 1) + t
                if failed.contains(key) { return false }
                for next in t...text.count where matchFrom(e + 1, next, text, &failed) { return true }
                failed.insert(key)
                return false
            case .choice(let index):
                let key = e * (text.count + 1) + t
                if failed.contains(key) { return false }
                let choice = choices[index]
                if t < text.count, let anchored = choice.byFirstScalar[text[t]] {
                    for value in anchored where tryValue(value, e, t, text, &failed) { return true }
                }
                for value in choice.unanchored where tryValue(value, e, t, text, &failed) { return true }
                failed.insert(key)
                return false
            }
            e += 1
            t += 1
        }
        return t == text.count
    }

    /// Tries one variable value (no variables inside) at `start`, then the rest of the pattern.
    private func tryValue(_ value: [Element], _ e: Int, _ start: Int, _ text: [UInt32], _ failed: inout Set<Int>) -> Bool {
        if !value.contains(.anyRun) {
            // Fixed width: one possible end, checked without allocating.
            guard start + value.count <= text.count else { return false }
            for (offset, element) in value.enumerated() {
                let scalar = text[start + offset]
                switch element {
                case .literal(let expected) where expected != scalar: return false
                case .asciiClass(let low, let high) where !Pattern.classContains(low, high, scalar): return false
                default: continue
                }
            }
            return matchFrom(e + 1, start + value.count, text, &failed)
        }
        for end in start...text.count where Pattern.globMatch(value, Array(text[start..<end])) {
            if matchFrom(e + 1, end, text, &failed) { return true }
        }
        return false
    }

}

/// Case folding used on both sides of a case-insensitive comparison.
@inline(__always)
func foldCase(_ scalar: UInt32) -> UInt32 {
    if scalar < 128 {
        return (scalar >= 65 && scalar <= 90) ? scalar + 32 : scalar
    }
    guard let unicode = Unicode.Scalar(scalar) else { return scalar }
    let lowered = unicode.properties.lowercaseMapping.unicodeScalars
    return lowered.count == 1 ? lowered.first?.value ?? scalar : scalar
}

/// Text the glob matcher reads: scalar arrays, or URL bytes read as scalars (optionally case-folded).
protocol ScalarText {
    var count: Int { get }
    subscript(_ index: Int) -> UInt32 { get }
}

extension Array: ScalarText where Element == UInt32 {}

struct PlainBytes: ScalarText {
    let buffer: UnsafeBufferPointer<UInt8>
    var count: Int { buffer.count }
    @inline(__always) subscript(_ index: Int) -> UInt32 { UInt32(buffer[index]) }
}

struct FoldedBytes: ScalarText {
    let buffer: UnsafeBufferPointer<UInt8>
    var count: Int { buffer.count }
    @inline(__always) subscript(_ index: Int) -> UInt32 {
        let byte = buffer[index]
        return UInt32(byte >= 65 && byte <= 90 ? byte | 0x20 : byte)
    }
}
