/// The part of JSON a direct decoder takes, read straight from the bytes: objects whose keys it knows,
/// arrays, strings of printable ASCII without escapes, booleans. Anything else — another key, an escape, a
/// non-ASCII byte, a number or null, a duplicate key, a syntax error — is ``Declined``, and the caller
/// gives the value to the JSON tree's way, which says what it is. The site decoder of large configs
/// (``DirectSiteDecoder``) and the hosted-document decoder (``DirectAASADecoder``) share it.
struct DirectJSONReader {
    struct Declined: Error {}

    let bytes: UnsafeBufferPointer<UInt8>
    var index: Int
    var line: Int
    var lineStart: Int
    /// Column minus offset on the value's first line; later lines start inside the value, where every byte
    /// is ASCII, so there a column is the distance from the line's start.
    private let firstLine: Int
    private let firstLineColumnBase: Int

    /// Reads the value at `location`, its line starting at offset `lineStart`.
    init(_ bytes: UnsafeBufferPointer<UInt8>, at location: SourceLocation, lineStart: Int) {
        self.bytes = bytes
        index = location.offset
        line = location.line
        self.lineStart = lineStart
        firstLine = location.line
        firstLineColumnBase = location.column - location.offset
    }

    /// The keys an object may have, each with its first eight bytes as written after the opening quote
    /// (its closing quote included when the key is shorter) as a word and a mask: a key in a file is then
    /// found with one masked comparison per candidate, where comparing bytes cost about 140 instructions a
    /// key, a dozen keys a site.
    struct KeySet {
        struct Key {
            let text: StaticString
            let word: UInt64
            let mask: UInt64
        }

        let keys: [Key]

        init(_ texts: [StaticString]) {
            precondition(texts.count <= 32, "an object's keys are tracked in 32 bits")
            keys = texts.map { text in
                let written = Array(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)) + [UInt8(ascii: "\"")]
                var word: UInt64 = 0
                var mask: UInt64 = 0
                for (position, byte) in written.prefix(8).enumerated() {
                    word |= UInt64(byte) << (8 * position)
                    mask |= 0xFF << (8 * position)
                }
                return Key(text: text, word: word, mask: mask)
            }
        }
    }

    /// After a value: a comma (false) or `closer` (true).
    mutating func closes(_ closer: UInt8) throws(Declined) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw Declined() }
        if bytes[index] == UInt8(ascii: ",") {
            index += 1
            return false
        }
        guard bytes[index] == closer else { throw Declined() }
        index += 1
        return true
    }

    mutating func consume(_ byte: UInt8) throws(Declined) -> Bool {
        guard index < bytes.count else { throw Declined() }
        guard bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// `opener` and the whitespace after it; true when `closer` follows at once (an empty object or array).
    mutating func opens(_ opener: UInt8, closedBy closer: UInt8) throws(Declined) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == opener else { throw Declined() }
        index += 1
        skipWhitespace()
        return try consume(closer)
    }

    /// The colon after a key, and the whitespace around it: a value's position is its first byte.
    mutating func colon() throws(Declined) {
        skipWhitespace()
        guard try consume(UInt8(ascii: ":")) else { throw Declined() }
        skipWhitespace()
    }

    /// Which of `keys` the key at `index` is. Each is compared with the bytes after the quote, closing quote
    /// included, without finding the key's end first: a key with an escape or any other byte matches none,
    /// as when it was read as a string first.
    mutating func knownKey(_ keys: KeySet) throws(Declined) -> Int {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Declined() }
        let start = index + 1
        let available = bytes.count - start
        if available >= 8, let base = bytes.baseAddress {
            // Little-endian, as the words were made: the first byte after the quote is the lowest.
            let written = UInt64(littleEndian: UnsafeRawPointer(base + start).loadUnaligned(as: UInt64.self))
            for position in keys.keys.indices {
                let key = keys.keys[position]
                guard written & key.mask == key.word else { continue }
                let length = key.text.utf8CodeUnitCount
                // Longer than seven bytes: the rest, and the closing quote, read after the word.
                if length >= 8 {
                    guard length < available, bytes[start + length] == UInt8(ascii: "\""), equal(key.text, at: start) else { continue }
                }
                index = start + length + 1
                return position
            }
            throw Declined()
        }
        for position in keys.keys.indices {
            let key = keys.keys[position].text
            let length = key.utf8CodeUnitCount
            guard length < available, bytes[start] == key.utf8Start[0], bytes[start + length] == UInt8(ascii: "\""),
                equal(key, at: start)
            else { continue }
            index = start + length + 1
            return position
        }
        throw Declined()
    }

    /// A string of printable ASCII without escapes; anything else is the tree's.
    mutating func string() throws(Declined) -> String {
        skipWhitespace()
        let (start, end) = try stringBounds()
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    mutating func stringBounds() throws(Declined) -> (Int, Int) {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Declined() }
        let start = index + 1
        var end = start
        // Eight bytes at a time up to the first that is not plain (a byte at a time was 200 instructions for
        // a 20-byte string, a host or a path); the loop below then says which it is.
        if let base = bytes.baseAddress {
            while end + 8 <= bytes.count {
                let flagged = Self.notPlain(UInt64(littleEndian: UnsafeRawPointer(base + end).loadUnaligned(as: UInt64.self)))
                if flagged != 0 {
                    end += flagged.trailingZeroBitCount / 8
                    break
                }
                end += 8
            }
        }
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                index = end + 1
                return (start, end)
            }
            if byte < 0x20 || byte >= 0x80 || byte == UInt8(ascii: "\\") { break }
            end += 1
        }
        throw Declined()
    }

    /// The high bit of each byte of `word` (little-endian) that must be escaped or is not ASCII; only the
    /// lowest flagged byte is certain, and only the lowest is read.
    static func notPlain(_ word: UInt64) -> UInt64 {
        JSONStringBytes.mustEscape(word) | (word & JSONStringBytes.highBits)
    }

    mutating func bool() throws(Declined) -> Bool {
        skipWhitespace()
        if matches("true") {
            index += 4
            return true
        }
        if matches("false") {
            index += 5
            return false
        }
        throw Declined()
    }

    private func matches(_ word: StaticString) -> Bool {
        bytes.count - index >= word.utf8CodeUnitCount && equal(word, at: index)
    }

    private func equal(_ word: StaticString, at offset: Int) -> Bool {
        let text = word.utf8Start
        for position in 0..<word.utf8CodeUnitCount where bytes[offset + position] != text[position] { return false }
        return true
    }

    /// Inlined for its common case, no whitespace at all (a generated file's compact JSON).
    @inline(__always)
    mutating func skipWhitespace() {
        if index < bytes.count, bytes[index] > 0x20 { return }
        skipWhitespaceRun()
    }

    private mutating func skipWhitespaceRun() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D: index += 1
            case 0x0A:
                line += 1
                index += 1
                lineStart = index
            default: return
            }
        }
    }

    func location() -> SourceLocation {
        let column = line == firstLine ? index + firstLineColumnBase : index - lineStart + 1
        return SourceLocation(offset: index, line: line, column: column)
    }
}

/// A decoder over a ``DirectJSONReader``: objects and arrays whose members and items it reads itself.
protocol DirectJSONDecoding {
    var reader: DirectJSONReader { get set }
}

extension DirectJSONDecoding {
    /// An object whose keys are all among `keys`, each at most once; `member` reads the value of the key
    /// at that position in `keys`.
    mutating func object(
        keys: DirectJSONReader.KeySet,
        _ member: (inout Self, Int) throws(DirectJSONReader.Declined) -> Void
    ) throws(DirectJSONReader.Declined) {
        if try reader.opens(UInt8(ascii: "{"), closedBy: UInt8(ascii: "}")) { return }
        var seen: UInt32 = 0
        while true {
            reader.skipWhitespace()
            let key = try reader.knownKey(keys)
            guard seen & (1 << key) == 0 else { throw DirectJSONReader.Declined() }
            seen |= 1 << key
            try reader.colon()
            try member(&self, key)
            if try reader.closes(UInt8(ascii: "}")) { return }
        }
    }

    /// An array; `item` reads the item at each position.
    mutating func array(_ item: (inout Self, Int) throws(DirectJSONReader.Declined) -> Void) throws(DirectJSONReader.Declined) {
        if try reader.opens(UInt8(ascii: "["), closedBy: UInt8(ascii: "]")) { return }
        var position = 0
        while true {
            reader.skipWhitespace()
            try item(&self, position)
            position += 1
            if try reader.closes(UInt8(ascii: "]")) { return }
        }
    }
}
