/// A response built once (when the config loads, or once per error kind): the status line, every header
/// but `Date` and `Connection`, `Content-Length`, and the body.
///
/// The bytes live in one allocation the object owns for its whole life, so a connection can hand them to
/// the kernel (`writev`) by pointer: serving a document copies nothing but the per-send lines. The
/// status line comes first; the lines that change per send (``ResponseEncoder``) go right after it.
public final class PreparedResponse: @unchecked Sendable {
    public let status: Int
    /// `HTTP/1.1 200 OK\r\n`.
    public let statusLine: UnsafeRawBufferPointer
    /// The other header lines, the blank line, then the body.
    public let rest: UnsafeRawBufferPointer
    /// Where the body starts in ``rest``.
    public let bodyOffset: Int
    private let storage: UnsafeMutableRawBufferPointer

    /// `headers` must not include `Date`, `Connection` or `Content-Length`: the encoder owns those.
    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        let line = ResponseEncoder.statusLine(status)
        let length = String(body.count)
        // Written straight into the one allocation: a million sites are prepared at start-up.
        var headCount = Self.contentLength.count + length.utf8.count + 4
        for (name, value) in headers { headCount += name.utf8.count + value.utf8.count + 4 }
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: line.utf8.count + headCount + body.count, alignment: 8)
        var cursor = 0
        func put(_ text: String) {
            var text = text
            text.withUTF8 { bytes in
                let target = UnsafeMutableRawBufferPointer(rebasing: storage[cursor..<(cursor + bytes.count)])
                target.copyMemory(from: UnsafeRawBufferPointer(bytes))
                cursor += bytes.count
            }
        }
        put(line)
        let lineCount = cursor
        for (name, value) in headers {
            put(name)
            put(": ")
            put(value)
            put("\r\n")
        }
        put(Self.contentLength)
        put(length)
        put("\r\n\r\n")
        UnsafeMutableRawBufferPointer(rebasing: storage[cursor...]).copyBytes(from: body)
        self.storage = storage
        statusLine = UnsafeRawBufferPointer(rebasing: storage[0..<lineCount])
        rest = UnsafeRawBufferPointer(rebasing: storage[lineCount...])
        bodyOffset = cursor - lineCount
    }

    private static let contentLength = "Content-Length: "

    deinit { storage.deallocate() }

    public var body: [UInt8] { Array(rest[bodyOffset...]) }

    /// The status line and the header lines (without the blank line), as sent but for the per-send lines.
    public var head: [UInt8] { Array(statusLine) + Array(rest[0..<(bodyOffset - 2)]) }

    /// Bytes on the wire for one send (HEAD without the body).
    public func byteCount(perSendLines: Int, includeBody: Bool) -> Int {
        statusLine.count + perSendLines + (includeBody ? rest.count : bodyOffset)
    }
}

/// What the `Connection` header of a response says.
public enum ConnectionDirective: Sendable, Equatable {
    /// Persistent by default (HTTP/1.1): no header.
    case none
    case close
    /// Confirms a persistent HTTP/1.0 connection.
    case keepAlive

    public var line: [UInt8] {
        switch self {
        case .none: return []
        case .close: return ResponseEncoder.connectionClose
        case .keepAlive: return ResponseEncoder.connectionKeepAlive
        }
    }
}

/// Frames responses: one status line format, one place that adds `Date` and `Connection`.
public enum ResponseEncoder {
    /// `HTTP/1.1 404 Not Found\r\n`.
    public static func statusLine(_ status: Int) -> String {
        "HTTP/1.1 \(status) \(HTTPStatus.reasonPhrase(status))\r\n"
    }

    static let connectionClose = Array("Connection: close\r\n".utf8)
    static let connectionKeepAlive = Array("Connection: keep-alive\r\n".utf8)

    /// Appends `response` to `output` with the `Date` line (``HTTPDate/line(unixSeconds:)``) and the
    /// connection directive; HEAD answers leave the body out. Returns the bytes appended.
    @discardableResult
    public static func append(
        _ response: PreparedResponse,
        dateLine: [UInt8],
        connection: ConnectionDirective,
        includeBody: Bool,
        to output: inout [UInt8]
    ) -> Int {
        let before = output.count
        output.append(contentsOf: response.statusLine)
        output.append(contentsOf: dateLine)
        output.append(contentsOf: connection.line)
        output.append(contentsOf: includeBody ? response.rest : UnsafeRawBufferPointer(rebasing: response.rest[0..<response.bodyOffset]))
        return output.count - before
    }
}
