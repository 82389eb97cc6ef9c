import Support

/// A JSON value with members in the exact order they will be written.
///
/// Generated documents are built as `JSONOutput` in a fixed key order, so the same config always
/// gives the same bytes (and the same ETag).
public indirect enum JSONOutput: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case string(String)
    case array([JSONOutput])
    case object([(String, JSONOutput)])

    public static func == (lhs: JSONOutput, rhs: JSONOutput) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// Converts a parsed tree, keeping its member order (used to re-emit what a user wrote).
    public init(_ node: JSONNode) {
        switch node.value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .number(let text): self = Int(text).map(JSONOutput.int) ?? .string(text)
        case .string(let text): self = .string(text)
        case .array(let items): self = .array(items.map(JSONOutput.init))
        case .object(let members): self = .object(members.map { ($0.key, JSONOutput($0.value)) })
        }
    }
}

/// Serialises ``JSONOutput``: UTF-8, no BOM, `/` unescaped, compact or two-space pretty.
public enum JSONWriter {
    public static func bytes(_ value: JSONOutput, pretty: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(value, into: &out, pretty: pretty, indent: 0)
        if pretty { out.append(UInt8(ascii: "\n")) }
        return out
    }

    public static func string(_ value: JSONOutput, pretty: Bool = false) -> String {
        String(decoding: bytes(value, pretty: pretty), as: UTF8.self)
    }

    /// An array or object: `[]` / `{}` when empty, else the opener, the elements separated by commas (each
    /// on its own indented line when pretty), the closer.
    @inline(__always)
    private static func writeContainer<Element>(
        _ elements: [Element],
        open: UInt8,
        close: UInt8,
        into out: inout [UInt8],
        pretty: Bool,
        indent: Int,
        element writeElement: (Element, inout [UInt8]) -> Void
    ) {
        out.append(open)
        if elements.isEmpty {
            out.append(close)
            return
        }
        for (position, element) in elements.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            if pretty { newline(into: &out, indent: indent + 1) }
            writeElement(element, &out)
        }
        if pretty { newline(into: &out, indent: indent) }
        out.append(close)
    }

    private static func write(_ value: JSONOutput, into out: inout [UInt8], pretty: Bool, indent: Int) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let number): out.append(contentsOf: String(number).utf8)
        case .string(let text): writeString(text, into: &out)
        case .array(let items):
            writeContainer(items, open: UInt8(ascii: "["), close: UInt8(ascii: "]"), into: &out, pretty: pretty, indent: indent) {
                item,
                out in
                write(item, into: &out, pretty: pretty, indent: indent + 1)
            }
        case .object(let members):
            writeContainer(members, open: UInt8(ascii: "{"), close: UInt8(ascii: "}"), into: &out, pretty: pretty, indent: indent) {
                member,
                out in
                writeString(member.0, into: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(UInt8(ascii: " ")) }
                write(member.1, into: &out, pretty: pretty, indent: indent + 1)
            }
        }
    }

    private static func newline(into out: inout [UInt8], indent: Int) {
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    /// Whether any of `bytes` must be escaped inside a JSON string (a control byte, a quote, a backslash),
    /// eight bytes per step (``JSONStringBytes``); the last word is read ending at the last byte.
    static func needsEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = bytes.count
        guard count >= 8, let base = bytes.baseAddress else {
            return bytes.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        }
        let raw = UnsafeRawPointer(base)
        @inline(__always) func flagged(_ offset: Int) -> Bool {
            JSONStringBytes.mustEscape(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) != 0
        }
        var offset = 0
        while offset + 8 <= count {
            if flagged(offset) { return true }
            offset += 8
        }
        return offset < count && flagged(count - 8)
    }

    static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Nearly every string (hosts, app IDs, patterns) needs no escape: copied in one go.
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard !needsEscape(bytes) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if copied == true {
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            let escape = Escape(byte)
            if escape.count == 0 {
                out.append(byte)
            } else {
                for index in 0..<escape.count { out.append(escape[index]) }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// How a byte is written inside a JSON string: nothing (`count` 0: the byte as it is) or up to six bytes
    /// (`\"`, `\\`, `\n`, `\r`, `\t`, `\u00XX`), kept in a word so no writer allocates to escape.
    struct Escape {
        private let bytes: UInt64
        let count: Int

        init(_ byte: UInt8) {
            func pair(_ letter: Unicode.Scalar) -> (UInt64, Int) {
                (UInt64(UInt8(ascii: "\\")) | UInt64(UInt8(ascii: letter)) << 8, 2)
            }
            switch byte {
            case UInt8(ascii: "\""): (bytes, count) = pair("\"")
            case UInt8(ascii: "\\"): (bytes, count) = pair("\\")
            case 0x0A: (bytes, count) = pair("n")
            case 0x0D: (bytes, count) = pair("r")
            case 0x09: (bytes, count) = pair("t")
            case 0x00..<0x20:
                let digits: StaticString = "0123456789ABCDEF"
                let high = UInt64(digits.utf8Start[Int(byte >> 4)])
                let low = UInt64(digits.utf8Start[Int(byte & 0x0F)])
                let prefix =
                    UInt64(UInt8(ascii: "\\")) | UInt64(UInt8(ascii: "u")) << 8
                    | UInt64(UInt8(ascii: "0")) << 16 | UInt64(UInt8(ascii: "0")) << 24
                (bytes, count) = (prefix | high << 32 | low << 40, 6)
            default: (bytes, count) = (0, 0)
            }
        }

        subscript(index: Int) -> UInt8 { UInt8(truncatingIfNeeded: bytes >> (8 * UInt64(index))) }
    }
}

/// Writes compact JSON straight to bytes, the same bytes ``JSONWriter`` writes for the equivalent
/// ``JSONOutput``, without building that tree first (building and freeing it was a fifth of
/// generating a 10,000-host config).
///
/// It writes into a buffer of its own: an array's `append` checks uniqueness and capacity through the
/// runtime for every byte, and a common site's document is some sixty appends (rendering one costs a
/// quarter less without them).
/// Noncopyable, so the buffer has one owner and is freed once.
struct CompactJSONWriter: ~Copyable {
    private var start: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int
    /// No comma before the next value: just after an opening bracket or a key.
    private var atStart = true

    init(capacity: Int = 512) {
        self.capacity = Swift.max(capacity, 16)
        start = .allocate(capacity: self.capacity)
    }

    deinit { start.deallocate() }

    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: start, count: count)) }

    /// The bytes written so far, valid only inside `body`.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        body(UnsafeRawBufferPointer(start: start, count: count))
    }

    @inline(__always)
    private mutating func reserve(_ more: Int) {
        if count + more > capacity { grow(to: count + more) }
    }

    /// `releasenone`: it frees only the writer's raw bytes (see ``quoted(_:colon:)``).
    @_effects(releasenone) @inline(never)
    private mutating func grow(to needed: Int) {
        let grown = Swift.max(capacity * 2, needed)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        moved.initialize(from: start, count: count)
        start.deallocate()
        start = moved
        capacity = grown
    }

    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        reserve(1)
        start[count] = byte
        count += 1
    }

    @inline(__always)
    private mutating func put(_ run: UnsafeBufferPointer<UInt8>) {
        guard let source = run.baseAddress, !run.isEmpty else { return }
        reserve(run.count)
        (start + count).initialize(from: source, count: run.count)
        count += run.count
    }

    @inline(__always)
    private mutating func separate() {
        if !atStart { put(UInt8(ascii: ",")) }
        atStart = false
    }

    /// `"bytes"` and, for a key, the colon after it, with one capacity check for all of it (a check per
    /// piece was a third of writing a short string).
    @inline(__always)
    private mutating func putQuoted(_ run: UnsafeBufferPointer<UInt8>, colon: Bool) {
        let length = run.count
        reserve(length + 3)
        start[count] = UInt8(ascii: "\"")
        if let source = run.baseAddress, length > 0 { (start + count + 1).initialize(from: source, count: length) }
        start[count + 1 + length] = UInt8(ascii: "\"")
        count += length + 2
        if colon {
            start[count] = UInt8(ascii: ":")
            count += 1
        }
    }

    mutating func openObject() { open(UInt8(ascii: "{")) }
    mutating func closeObject() { close(UInt8(ascii: "}")) }
    mutating func openArray() { open(UInt8(ascii: "[")) }
    mutating func closeArray() { close(UInt8(ascii: "]")) }

    private mutating func open(_ bracket: UInt8) {
        separate()
        put(bracket)
        atStart = true
    }

    private mutating func close(_ bracket: UInt8) {
        put(bracket)
        atStart = false
    }

    /// A key the code spells out ("components", "/"): its bytes copied as they are, none of them needing an
    /// escape, instead of scanned for escapes on every document (eight keys a component).
    mutating func key(_ name: StaticString) {
        separate()
        // A key the code spells out is a string literal, which the compiler stores as a pointer to its bytes.
        putQuoted(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount), colon: true)
        atStart = true
    }

    /// A key from the document (a query item's name, a substitution variable's), escaped as JSON needs.
    mutating func key(text name: String) {
        separate()
        quoted(name, colon: true)
        atStart = true
    }

    mutating func string(_ text: String) {
        separate()
        quoted(text)
    }

    /// Nearly every string (hosts, app IDs, patterns) needs no escape and is copied in one go; the rest is
    /// escaped byte by byte as ``JSONWriter/Escape`` says, straight into the buffer.
    ///
    /// Releases nothing (`releasenone`, and so does ``grow(to:)``): a call the optimizer thinks may free an
    /// object makes every caller copy (retain and release) each string it passes from a document, and
    /// writing a site's document passes some fourteen. What it frees is its own raw buffer; the string is
    /// read in place (`withUTF8` is mutating: the copy it needed was a retain and a release per string),
    /// and only a string without contiguous UTF-8 is copied, its copy released at the end.
    @_effects(releasenone)
    private mutating func quoted(_ text: String, colon: Bool = false) {
        let written: Void? = text.utf8.withContiguousStorageIfAvailable { run in putQuotedEscaping(run, colon: colon) }
        if written != nil { return }
        var native = text
        native.withUTF8 { run in putQuotedEscaping(run, colon: colon) }
    }

    @inline(__always)
    private mutating func putQuotedEscaping(_ run: UnsafeBufferPointer<UInt8>, colon: Bool) {
        if !JSONWriter.needsEscape(run) {
            putQuoted(run, colon: colon)
            return
        }
        put(UInt8(ascii: "\""))
        for byte in run {
            let escape = JSONWriter.Escape(byte)
            if escape.count == 0 {
                put(byte)
            } else {
                for index in 0..<escape.count { put(escape[index]) }
            }
        }
        put(UInt8(ascii: "\""))
        if colon { put(UInt8(ascii: ":")) }
    }

    mutating func bool(_ flag: Bool) {
        separate()
        let word: StaticString = flag ? "true" : "false"
        word.withUTF8Buffer { put($0) }
    }

    mutating func strings(_ texts: some Sequence<String>) {
        openArray()
        for text in texts { string(text) }
        closeArray()
    }

    /// `"name": "text"`, only when there is a text.
    mutating func member(_ name: StaticString, string text: String?) {
        guard let text else { return }
        key(name)
        string(text)
    }

    /// `"name": true|false`, only when there is a flag.
    mutating func member(_ name: StaticString, bool flag: Bool?) {
        guard let flag else { return }
        key(name)
        bool(flag)
    }

    /// `"name": [texts…]`, the shape of every app list.
    mutating func member(_ name: StaticString, strings texts: some Sequence<String>) {
        key(name)
        strings(texts)
    }
}

/// JSON text for values built outside a document (log lines, error bodies): one escaper for the project.
public enum JSONText {
    /// `text` as a JSON string literal, quotes included.
    public static func quoted(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        JSONWriter.writeString(text, into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
