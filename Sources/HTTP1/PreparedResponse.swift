/// A response built once (when the config loads, or once per error kind): the status line, every header
/// but `Date` and `Connection`, `Content-Length`, and the body.
///
/// The bytes live in memory the object keeps for its whole life, so a connection can hand them to the
/// kernel (`writev`) by pointer: serving a document copies nothing but the per-send lines. The status line
/// comes first; the lines that change per send (``ResponseEncoder``) go right after it. The body is either
/// in the object's own allocation or in an immutable buffer another object owns (a document the loaded
/// config holds anyway: a million sites then keep their bytes once, not twice).
///
/// Compact (a million sites hold one each): the status line and own lines are found from two 32-bit
/// offsets into `storage`, the shared lines in ``SharedHeaders``.
public final class PreparedResponse: @unchecked Sendable {
    public var status: Int { Int(storedStatus) }
    /// `HTTP/1.1 200 OK\r\n`.
    public var statusLine: UnsafeRawBufferPointer {
        shared?.statusLine ?? UnsafeRawBufferPointer(start: storage, count: Int(lineEnd))
    }
    /// The `Last-Modified` its shared lines state (``SharedHeaders/lastModified``).
    public var sharedLastModified: Int? { shared?.lastModified }
    /// Header lines this response shares with others (``SharedHeaders``); empty when it has none.
    public var sharedFields: UnsafeRawBufferPointer { shared?.fields ?? UnsafeRawBufferPointer(start: storage, count: 0) }
    /// Its own header lines, `Content-Length` and the blank line.
    public var fields: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage + Int(lineEnd), count: Int(fieldsEnd &- lineEnd))
    }
    public let bodyBytes: UnsafeRawBufferPointer
    /// The status line when there are no shared lines, the own lines, then the body when it is not external.
    private let storage: UnsafeMutableRawPointer
    /// Keeps `bodyBytes` valid when they are not in `storage`; a writer may also send them from it when it
    /// is a file (a sealed memory file holding exactly these bytes).
    public let bodyOwner: AnyObject?
    private let shared: SharedHeaders?
    private let lineEnd: UInt32
    private let fieldsEnd: UInt32
    private let storedStatus: UInt16
    /// The status line, shared and own lines together: what every send counts, kept to save the lookups.
    private let headCount: UInt32

    /// `headers` must not include `Date`, `Connection` or `Content-Length`: the encoder owns those.
    public convenience init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.init(status: status, shared: nil, headers: headers, bodyCount: body.count) { target in target.copyBytes(from: body) }
    }

    /// A body that stays where it is: `owner` keeps `body` valid and unchanged for as long as it lives.
    public convenience init(status: Int, headers: [(String, String)], body: UnsafeRawBufferPointer, owner: AnyObject) {
        self.init(status: status, shared: nil, headers: headers, bodyCount: 0, external: (body, owner)) { _ in }
    }

    /// The status line and `shared`'s lines from `shared`, then `headers`, then `body` where it is.
    public convenience init(
        shared: SharedHeaders,
        headers: [(String, String)],
        body: UnsafeRawBufferPointer,
        owner: AnyObject
    ) {
        self.init(status: shared.status, shared: shared, headers: headers, bodyCount: 0, external: (body, owner)) { _ in }
    }

    /// The status line and `shared`'s lines from `shared`, then `headers`, then a copy of `body`: an answer
    /// built per request (a link's redirect) pays for its own lines only.
    public convenience init(shared: SharedHeaders, headers: [(String, String)], body: [UInt8]) {
        self.init(status: shared.status, shared: shared, headers: headers, bodyCount: body.count) { target in target.copyBytes(from: body) }
    }

    /// `shared`'s lines and one line of its own, no body: a redirect built per request (a link's
    /// `Location`) without an array of header pairs.
    public convenience init(shared: SharedHeaders, field: StaticString, value: String) {
        self.init(status: shared.status, shared: shared, headers: [], field: (field, value), bodyCount: 0) { _ in }
    }

    /// A document's response: `shared`'s lines, then `ETag: "<etag as 16 hex digits><etagSuffix>"`, then
    /// `headers`, then `body` where it is. The tag is written straight into the response's bytes: a
    /// million documents are prepared at start-up.
    public convenience init(
        shared: SharedHeaders,
        etag: UInt64,
        etagSuffix: StaticString = "",
        headers: [(String, String)] = [],
        body: UnsafeRawBufferPointer,
        owner: AnyObject
    ) {
        self.init(
            status: shared.status,
            shared: shared,
            etag: (etag, etagSuffix),
            headers: headers,
            bodyCount: 0,
            external: (body, owner)
        ) { _ in }
    }

    /// `HTTP/1.1 100 Continue`: an interim answer, so no Content-Length and no body (RFC 9110 §15.2).
    public static let continueInterim = PreparedResponse(interimStatus: 100)

    private convenience init(interimStatus: Int) {
        self.init(status: interimStatus, shared: nil, headers: [], bodyCount: 0, framed: false) { _ in }
    }

    private init(
        status: Int,
        shared: SharedHeaders?,
        etag: (value: UInt64, suffix: StaticString)? = nil,
        headers: [(String, String)],
        field: (name: StaticString, value: String)? = nil,
        bodyCount: Int,
        external: (body: UnsafeRawBufferPointer, owner: AnyObject)? = nil,
        framed: Bool = true,
        writeBody: (UnsafeMutableRawBufferPointer) -> Void
    ) {
        storedStatus = UInt16(status)
        let line = shared == nil ? ResponseEncoder.statusLine(status) : ""
        let contentLength = external?.body.count ?? bodyCount
        let etagCount = etag.map { "ETag: \"".utf8.count + 16 + $0.suffix.utf8CodeUnitCount + "\"\r\n".utf8.count } ?? 0
        let fieldCount = field.map { $0.name.utf8CodeUnitCount + $0.value.utf8.count + 4 } ?? 0
        var writer = LineWriter(
            byteCount: line.utf8.count + etagCount + LineWriter.count(headers) + fieldCount
                + (framed ? LineWriter.contentLengthCount(contentLength) : 0) + 2 + bodyCount
        )
        writer.put(line)
        let lineCount = writer.cursor
        if let etag {
            writer.put("ETag: \"" as StaticString)
            writer.putHex(etag.value)
            writer.put(etag.suffix)
            writer.put("\"\r\n" as StaticString)
        }
        writer.put(headers)
        if let field {
            writer.put(field.name)
            writer.put(": " as StaticString)
            writer.put(field.value)
            writer.put("\r\n" as StaticString)
        }
        if framed { writer.putContentLength(contentLength) }
        writer.put("\r\n" as StaticString)
        let fieldsEnd = writer.cursor
        writeBody(UnsafeMutableRawBufferPointer(rebasing: writer.storage[fieldsEnd...]))
        storage = writer.storage.baseAddress!
        lineEnd = UInt32(lineCount)
        self.fieldsEnd = UInt32(fieldsEnd)
        bodyBytes = external?.body ?? UnsafeRawBufferPointer(rebasing: writer.storage[fieldsEnd...])
        bodyOwner = external?.owner
        self.shared = shared
        headCount = UInt32((shared.map { $0.statusLine.count + $0.fields.count } ?? lineCount) + fieldsEnd - lineCount)
    }

    deinit { storage.deallocate() }

    public var body: [UInt8] { Array(bodyBytes) }

    /// The status line and the header lines (without the blank line), as sent but for the per-send lines.
    public var head: [UInt8] { Array(statusLine) + Array(sharedFields) + Array(fields[0..<(fields.count - 2)]) }

    /// Bytes on the wire for one send (HEAD without the body).
    public func byteCount(perSendLines: Int, includeBody: Bool) -> Int {
        Int(headCount) + perSendLines + (includeBody ? bodyBytes.count : 0)
    }
}

/// The status line and header lines many responses have in common (the server, type, caching and
/// `Last-Modified` of documents loaded together), kept once: each response then holds only its own lines
/// (`ETag`, `Content-Length`) — a few dozen bytes instead of a couple of hundred, a million times over.
public final class SharedHeaders: @unchecked Sendable {
    public let status: Int
    /// The time the lines' `Last-Modified` states (Unix seconds), when they have one and it was given.
    public let lastModified: Int?
    let statusLine: UnsafeRawBufferPointer
    let fields: UnsafeRawBufferPointer
    private let storage: UnsafeMutableRawBufferPointer

    public init(status: Int, headers: [(String, String)], lastModified: Int? = nil) {
        self.status = status
        self.lastModified = lastModified
        let line = ResponseEncoder.statusLine(status)
        var writer = LineWriter(byteCount: line.utf8.count + LineWriter.count(headers))
        writer.put(line)
        let lineCount = writer.cursor
        writer.put(headers)
        storage = writer.storage
        statusLine = UnsafeRawBufferPointer(rebasing: storage[0..<lineCount])
        fields = UnsafeRawBufferPointer(rebasing: storage[lineCount...])
    }

    deinit { storage.deallocate() }
}

/// Writes header text straight into one allocation of the exact size (a million sites are prepared at
/// start-up: no intermediate strings).
private struct LineWriter {
    let storage: UnsafeMutableRawBufferPointer
    var cursor = 0

    init(byteCount: Int) { storage = .allocate(byteCount: byteCount, alignment: 8) }

    static func count(_ headers: [(String, String)]) -> Int {
        headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 }
    }

    mutating func put(_ text: String) {
        var text = text
        let start = cursor
        text.withUTF8 { bytes in
            UnsafeMutableRawBufferPointer(rebasing: storage[start..<(start + bytes.count)]).copyMemory(from: UnsafeRawBufferPointer(bytes))
        }
        cursor += text.utf8.count
    }

    mutating func put(_ text: StaticString) {
        UnsafeMutableRawBufferPointer(rebasing: storage[cursor..<(cursor + text.utf8CodeUnitCount)])
            .copyMemory(from: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        cursor += text.utf8CodeUnitCount
    }

    /// 16 lower-case hex digits.
    mutating func putHex(_ value: UInt64) {
        let digits: StaticString = "0123456789abcdef"
        for shift in stride(from: 60, through: 0, by: -4) {
            storage[cursor] = digits.utf8Start[Int((value >> UInt64(shift)) & 0xF)]
            cursor += 1
        }
    }

    static func contentLengthCount(_ length: Int) -> Int { "Content-Length: ".utf8.count + decimalCount(length) + 2 }

    static func decimalCount(_ value: Int) -> Int {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        return digits
    }

    mutating func putContentLength(_ length: Int) {
        put("Content-Length: " as StaticString)
        let digits = Self.decimalCount(length)
        var rest = length
        for offset in stride(from: digits - 1, through: 0, by: -1) {
            storage[cursor + offset] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        cursor += digits
        put("\r\n" as StaticString)
    }

    mutating func put(_ headers: [(String, String)]) {
        for (name, value) in headers {
            put(name)
            put(": " as StaticString)
            put(value)
            put("\r\n" as StaticString)
        }
    }
}

/// What the `Connection` header of a response says.
public enum ConnectionDirective: Sendable, Equatable {
    /// Persistent by default (HTTP/1.1): no header.
    case none
    case close
    /// Confirms a persistent HTTP/1.0 connection.
    case keepAlive

    /// The line's bytes, in the program's constant data: valid for the life of the process.
    public var line: UnsafeRawBufferPointer {
        switch self {
        case .none: return UnsafeRawBufferPointer(start: nil, count: 0)
        case .close: return Self.bytes("Connection: close\r\n")
        case .keepAlive: return Self.bytes("Connection: keep-alive\r\n")
        }
    }

    private static func bytes(_ text: StaticString) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
    }
}

/// Frames responses: one status line format, one place that adds `Date` and `Connection`.
public enum ResponseEncoder {
    /// `HTTP/1.1 404 Not Found\r\n`.
    public static func statusLine(_ status: Int) -> String {
        "HTTP/1.1 \(status) \(HTTPStatus.reasonPhrase(status))\r\n"
    }

    /// Appends `response` to `output` with the `Date` line (none for an interim answer) and the connection
    /// directive; HEAD answers leave the body out. Returns the bytes appended.
    @discardableResult
    public static func append(
        _ response: PreparedResponse,
        date: DateLine?,
        connection: ConnectionDirective,
        includeBody: Bool,
        to output: inout [UInt8]
    ) -> Int {
        let before = output.count
        output.append(contentsOf: response.statusLine)
        if let date { output.append(contentsOf: date.bytes) }
        output.append(contentsOf: connection.line)
        output.append(contentsOf: response.sharedFields)
        output.append(contentsOf: response.fields)
        if includeBody { output.append(contentsOf: response.bodyBytes) }
        return output.count - before
    }
}
