import Support

/// A response as a client received it: the status line, every header as sent, and the body with its
/// transfer framing removed (content codings such as gzip are left to the caller).
public struct ParsedResponse: Sendable, Equatable {
    public var version: String
    public var status: Int
    public var reason: String
    /// In the order received, names as sent.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// How the body was delimited.
    public var framing: Framing
    /// Bytes of the body that arrived, before de-chunking (what `Content-Length` should have said).
    public var receivedBodyBytes: Int

    public enum Framing: Sendable, Equatable {
        case contentLength(Int)
        case chunked
        /// No length: the body ran until the server closed the connection.
        case closeDelimited
        /// HEAD, 1xx, 204 and 304 have no body whatever the headers say.
        case none
    }

    /// The first value of a header (names compare case-insensitively).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// Every value of a header, in order.
    public func headers(_ name: String) -> [String] {
        let wanted = name.lowercased()
        return headers.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    public static func == (lhs: ParsedResponse, rhs: ParsedResponse) -> Bool {
        lhs.version == rhs.version && lhs.status == rhs.status && lhs.reason == rhs.reason && lhs.body == rhs.body
            && lhs.framing == rhs.framing && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

/// What is wrong with a response, in words that name the mistake.
public struct ResponseParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Parses an HTTP/1.1 response from all the bytes a connection delivered (the client reads until the
/// server closes, or until the framing says the response is complete). Pure; used by `check`, which
/// must see the raw status line and every header, and never follows a redirect.
public enum ResponseParser {
    public enum Outcome: Sendable, Equatable {
        case complete(ParsedResponse, consumed: Int)
        /// More bytes are needed (and the connection is still open).
        case incomplete
        case failed(ResponseParseError)
    }

    /// `closed`: the server closed the connection after `bytes` (a close-delimited body ends there; any
    /// other framing cut short is an error). `isHEAD`: the request was HEAD.
    public static func parse(_ bytes: [UInt8], closed: Bool, isHEAD: Bool = false, bodyLimit: Int = 16 << 20) -> Outcome {
        guard let headEnd = findHeadEnd(bytes) else {
            if bytes.count > 64 * 1024 { return .failed(ResponseParseError("the response header is larger than 64 KB")) }
            if closed {
                return .failed(
                    ResponseParseError(
                        bytes.isEmpty ? "the server closed the connection without answering" : "the response was cut off in its header"
                    )
                )
            }
            return .incomplete
        }
        let head = bytes[0..<headEnd.start]
        var lines = split(lines: head)
        guard !lines.isEmpty else { return .failed(ResponseParseError("empty response header")) }
        let statusLine = lines.removeFirst()
        guard let (version, status, reason) = parseStatusLine(statusLine) else {
            return .failed(ResponseParseError("malformed status line: \(printable(statusLine))"))
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
                return .failed(ResponseParseError("malformed header line: \(printable(line))"))
            }
            let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self)
            guard name.utf8.allSatisfy(isTokenByte) else {
                return .failed(ResponseParseError("invalid header name: \(printable(line[line.startIndex..<colon]))"))
            }
            var value = line[(colon + 1)...]
            while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
            while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
            headers.append((name, String(decoding: value, as: UTF8.self)))
        }
        var response = ParsedResponse(
            version: version,
            status: status,
            reason: reason,
            headers: headers,
            body: [],
            framing: .none,
            receivedBodyBytes: 0
        )
        let bodyStart = headEnd.end
        let available = bytes.count - bodyStart
        if isHEAD || (100..<200).contains(status) || status == 204 || status == 304 {
            return .complete(response, consumed: bodyStart)
        }
        let encodings = response.headers("Transfer-Encoding").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingSpacesAndTabs() }.filter { !$0.isEmpty }
        if let last = encodings.last {
            guard last.lowercased() == "chunked" else {
                return .failed(ResponseParseError("Transfer-Encoding \(encodings.joined(separator: ", ")) does not end with chunked"))
            }
            response.framing = .chunked
            switch decodeChunked(bytes, from: bodyStart, limit: bodyLimit) {
            case .incomplete:
                return closed ? .failed(ResponseParseError("the chunked body was cut off before its last chunk")) : .incomplete
            case .failed(let error):
                return .failed(error)
            case .complete(let body, let end):
                response.body = body
                response.receivedBodyBytes = end - bodyStart
                return .complete(response, consumed: end)
            }
        }
        let lengths = response.headers("Content-Length")
        if !lengths.isEmpty {
            let distinct = Set(lengths.flatMap { $0.split(separator: ",").map { $0.trimmingSpacesAndTabs() } })
            guard distinct.count == 1, let text = distinct.first, let length = Int(text), length >= 0, text.utf8.allSatisfy(ASCII.isDigit)
            else {
                return .failed(ResponseParseError("invalid Content-Length: \(lengths.joined(separator: ", "))"))
            }
            response.framing = .contentLength(length)
            if length > bodyLimit { return .failed(ResponseParseError("Content-Length \(length) is larger than \(bodyLimit) bytes")) }
            if available < length {
                if !closed { return .incomplete }
                // Reported, not failed: check says how much was missing.
                response.body = Array(bytes[bodyStart...])
                response.receivedBodyBytes = available
                return .complete(response, consumed: bytes.count)
            }
            response.body = Array(bytes[bodyStart..<(bodyStart + length)])
            response.receivedBodyBytes = length
            return .complete(response, consumed: bodyStart + length)
        }
        response.framing = .closeDelimited
        guard closed else {
            return available > bodyLimit ? .failed(ResponseParseError("the body is larger than \(bodyLimit) bytes")) : .incomplete
        }
        response.body = Array(bytes[bodyStart...])
        response.receivedBodyBytes = available
        return .complete(response, consumed: bytes.count)
    }

    /// Where the header ends: the blank line, CRLF or bare LF line ends.
    static func findHeadEnd(_ bytes: [UInt8]) -> (start: Int, end: Int)? {
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x0A {
                if index + 1 < bytes.count && bytes[index + 1] == 0x0A { return (index, index + 2) }
                if index + 2 < bytes.count && bytes[index + 1] == 0x0D && bytes[index + 2] == 0x0A { return (index, index + 3) }
            }
            index += 1
        }
        return nil
    }

    private static func split(lines head: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex
        for index in head.indices where head[index] == 0x0A {
            var end = index
            if end > start && head[end - 1] == 0x0D { end -= 1 }
            lines.append(head[start..<end])
            start = index + 1
        }
        var end = head.endIndex
        if end > start && head[end - 1] == 0x0D { end -= 1 }
        if start < end { lines.append(head[start..<end]) }
        return lines
    }

    private static func parseStatusLine(_ line: ArraySlice<UInt8>) -> (String, Int, String)? {
        let text = String(decoding: line, as: UTF8.self)
        let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), parts[0].count == 8, parts[1].count == 3,
            let status = Int(parts[1]), (100...999).contains(status)
        else { return nil }
        return (String(parts[0]), status, parts.count > 2 ? String(parts[2]) : "")
    }

    enum ChunkedOutcome {
        case complete([UInt8], end: Int)
        case incomplete
        case failed(ResponseParseError)
    }

    /// Decodes a chunked body (sizes in hex, extensions ignored, trailers skipped).
    static func decodeChunked(_ bytes: [UInt8], from start: Int, limit: Int) -> ChunkedOutcome {
        var body: [UInt8] = []
        var index = start
        while true {
            guard let lineEnd = bytes[index...].firstIndex(of: 0x0A) else { return .incomplete }
            var sizeEnd = index
            while sizeEnd < lineEnd, ASCII.isHexDigit(bytes[sizeEnd]) { sizeEnd += 1 }
            guard sizeEnd > index, sizeEnd - index <= 15 else {
                return .failed(ResponseParseError("invalid chunk size: \(printable(bytes[index..<lineEnd]))"))
            }
            var size = 0
            for byte in bytes[index..<sizeEnd] { size = size << 4 | Int(ASCII.hexValue(byte) ?? 0) }
            index = lineEnd + 1
            if size == 0 {
                // Trailer lines, then the blank line.
                while true {
                    guard let end = bytes[index...].firstIndex(of: 0x0A) else { return .incomplete }
                    let empty = end == index || (end == index + 1 && bytes[index] == 0x0D)
                    index = end + 1
                    if empty { return .complete(body, end: index) }
                }
            }
            guard body.count + size <= limit else { return .failed(ResponseParseError("the chunked body is larger than \(limit) bytes")) }
            guard bytes.count >= index + size else { return .incomplete }
            body += bytes[index..<(index + size)]
            index += size
            // CRLF (or LF) after the data.
            guard index < bytes.count else { return .incomplete }
            if bytes[index] == 0x0D {
                guard index + 1 < bytes.count else { return .incomplete }
                index += 1
            }
            guard bytes[index] == 0x0A else { return .failed(ResponseParseError("a chunk is longer than its size says")) }
            index += 1
        }
    }

    /// At most 80 characters of the bytes, with non-printable ones escaped.
    static func printable(_ bytes: ArraySlice<UInt8>) -> String {
        var text = ""
        for byte in bytes.prefix(80) {
            if byte >= 0x20 && byte < 0x7F {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                text += "\\x" + String(byte, radix: 16)
            }
        }
        return (bytes.count > 80 ? text + "…" : text).debugDescription
    }
}
