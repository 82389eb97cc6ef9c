import Support

/// Finds and parses one request head at the start of a buffer, incrementally: bytes may arrive one at
/// a time, and a head is scanned once however it is split (the scan resumes where it stopped).
///
/// Strict where RFC 9110/9112 say MUST (and where lenience has enabled request smuggling elsewhere):
/// whitespace before a colon, obs-fold, bare CR, NUL and other CTLs in fields, a missing, repeated or
/// invalid Host, Content-Length with Transfer-Encoding, invalid or conflicting Content-Length, and
/// chunked not last are 400; an unknown transfer coding is 501; a major version other than 1 is 505;
/// a request line over the limit is 414 and a header section over the limits 431. Leading empty
/// lines are skipped; a bare LF is accepted as a line end (§2.2 MAY).
public struct RequestHeadParser: Sendable {
    public var limits: HTTPLimits
    private var scanOffset = 0
    private var headStart: Int?
    private var requestLineEnd: Int?
    private var lineCount = 0
    /// Set once the method (the bytes before the first space) has been seen to be a token.
    private var methodChecked = false

    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
    }

    /// Forget scan progress; call after a head is consumed from the buffer.
    public mutating func reset() {
        scanOffset = 0
        headStart = nil
        requestLineEnd = nil
        lineCount = 0
        methodChecked = false
    }

    /// Parses into `head`, which holds the head when the answer is `.complete` (and anything otherwise):
    /// a head is about 250 bytes, and handing it back as a value copied it several times per request.
    public mutating func parse(_ buffer: UnsafeBufferPointer<UInt8>, into head: inout RequestHead) -> HeadParseStatus {
        if scanOffset == 0, headStart == nil, parseWhole(buffer, into: &head) { return .complete }
        return parseIncrementally(buffer, into: &head)
    }

    public mutating func parse(_ buffer: UnsafeBufferPointer<UInt8>) -> HeadParseResult {
        var head = RequestHead()
        switch parse(buffer, into: &head) {
        case .incomplete: return .incomplete
        case .complete: return .complete(head)
        case .failed(let error): return .failed(error)
        }
    }

    /// A head that arrived whole and breaks no rule, in one pass over its lines (nearly every request):
    /// nil sends the buffer the incremental way, which finds the same head or says exactly what is wrong.
    /// The incremental scan finds the head's end first and parses it after, a second pass over every byte.
    func parseWhole(_ buffer: UnsafeBufferPointer<UInt8>, into head: inout RequestHead) -> Bool {
        guard let first = buffer.first, isTokenByte(first), let lineFeed = firstLineFeed(buffer, from: 0),
            lineFeed <= limits.requestLineBytes + 1,
            parseHead(buffer, start: 0, requestLineEnd: lineFeed, bound: buffer.count, into: &head) == .complete
        else { return false }
        return head.length - 1 - lineFeed <= limits.headerBytes + 2
    }

    mutating func parseIncrementally(_ buffer: UnsafeBufferPointer<UInt8>, into head: inout RequestHead) -> HeadParseStatus {
        let count = buffer.count
        var index = scanOffset
        // RFC 9112 §2.2: ignore at least one empty line before the request line.
        if headStart == nil {
            while index < count && (buffer[index] == 0x0D || buffer[index] == 0x0A) {
                if buffer[index] == 0x0D {
                    // A CR is judged with the byte after it; when that has not arrived, neither has this one.
                    guard index + 1 < count else { break }
                    if buffer[index + 1] != 0x0A { return .failed(.badRequest("bare CR before the request line")) }
                }
                index += 1
            }
            if index < count && buffer[index] == 0x0D {
                scanOffset = index
                return .incomplete
            }
            if index > limits.requestLineBytes { return .failed(.badRequest("too many empty lines before the request")) }
            if index >= count {
                scanOffset = index
                return .incomplete
            }
            headStart = index
        }
        guard let start = headStart else { return .incomplete }
        if !methodChecked, let error = checkMethodBytes(buffer, from: max(index, start)) { return .failed(error) }
        while let lineFeed = firstLineFeed(buffer, from: index) {
            index = lineFeed
            do {
                lineCount += 1
                if requestLineEnd == nil {
                    requestLineEnd = index
                    if index - start > limits.requestLineBytes + 1 { return .failed(.uriTooLong) }
                } else {
                    // An empty line ends the head: "\n\n" or "\n\r\n".
                    let previous = index - 1
                    if buffer[previous] == 0x0A || (buffer[previous] == 0x0D && previous > 0 && buffer[previous - 1] == 0x0A) {
                        scanOffset = 0
                        guard let lineEnd = requestLineEnd else { return .failed(.badRequest("no request line")) }
                        if index - lineEnd > limits.headerBytes + 2 {
                            return .failed(.headerFieldsTooLarge("header section larger than \(limits.headerBytes) bytes"))
                        }
                        // The scan found the empty line that the field lines end at.
                        return parseHead(buffer, start: start, requestLineEnd: lineEnd, bound: index + 1, into: &head)
                            ?? .failed(.badRequest("no empty line after the header fields"))
                    }
                    if lineCount - 1 > limits.headerCount {
                        return .failed(.headerFieldsTooLarge("more than \(limits.headerCount) header fields"))
                    }
                }
            }
            index += 1
        }
        index = count
        scanOffset = index
        if let lineEnd = requestLineEnd {
            if count - lineEnd > limits.headerBytes + 2 {
                return .failed(.headerFieldsTooLarge("header section larger than \(limits.headerBytes) bytes"))
            }
        } else if count - start > limits.requestLineBytes {
            return .failed(.uriTooLong)
        }
        return .incomplete
    }

    /// A request starts with a method, which is a token: a byte that cannot be part of one (a TLS
    /// ClientHello's 0x16, a binary protocol, a stray control byte) is refused as soon as it arrives,
    /// not after the header timeout.
    private mutating func checkMethodBytes(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> HTTPError? {
        var index = start
        while index < buffer.count {
            let byte = buffer[index]
            if byte == 0x20 || byte == 0x0D || byte == 0x0A {
                // The method ended; the rest of the line is judged when it is complete.
                methodChecked = true
                return nil
            }
            if !isTokenByte(byte) {
                if byte == 0x16 && index == headStart {
                    return .badRequest("a TLS handshake on a plain-HTTP port; use http:// here, or the HTTPS port")
                }
                return .badRequest("not an HTTP request: byte 0x\(String(byte, radix: 16)) cannot start a request line")
            }
            index += 1
        }
        return nil
    }

    // MARK: - Parsing a complete head

    /// The head whose request line starts at `start` and ends with the LF at `requestLineEnd`, up to the
    /// empty line after its field lines, which ends before `bound`; nil when it does not.
    private func parseHead(
        _ buffer: UnsafeBufferPointer<UInt8>,
        start: Int,
        requestLineEnd lineEndIndex: Int,
        bound end: Int,
        into head: inout RequestHead
    ) -> HeadParseStatus? {
        head = RequestHead()
        if let error = parseRequestLine(buffer, start, lineEndIndex, &head) { return .failed(error) }

        var hostCount = 0
        var contentLength: Int?
        var transferEncodingSeen = false
        var chunkedLast = false
        var unknownCoding = false
        var chunkedCount = 0
        var fieldCount = 0
        var lineStart = lineEndIndex + 1
        while true {
            guard lineStart < end else { return nil }
            let first = buffer[lineStart]
            // The empty line that ends the head.
            if first == 0x0A || (first == 0x0D && lineStart + 1 < end && buffer[lineStart + 1] == 0x0A) {
                head.length = lineStart + (first == 0x0A ? 1 : 2)
                break
            }
            fieldCount += 1
            if fieldCount > limits.headerCount {
                return .failed(.headerFieldsTooLarge("more than \(limits.headerCount) header fields"))
            }
            if first == 0x20 || first == 0x09 {
                return .failed(.badRequest("obsolete line folding (a header line starting with whitespace)"))
            }
            // Field name: a token, then ':' with no whitespace before it (RFC 9112 §5.1).
            var colon = lineStart
            while colon < end && isTokenByte(buffer[colon]) { colon += 1 }
            guard colon < end, buffer[colon] == UInt8(ascii: ":"), colon > lineStart else {
                if colon < end && (buffer[colon] == 0x20 || buffer[colon] == 0x09) {
                    return .failed(.badRequest("whitespace between a header name and the colon"))
                }
                return .failed(.badRequest("invalid header field name"))
            }
            let name = lineStart..<colon
            let known = KnownHeader(buffer, name)
            var valueStart = colon + 1
            while valueStart < end && (buffer[valueStart] == 0x20 || buffer[valueStart] == 0x09) { valueStart += 1 }
            let line = scanFieldLine(buffer, valueStart: valueStart, end: end, hashing: known == .userAgent)
            if let forbidden = line.forbidden {
                return .failed(
                    .badRequest(buffer[forbidden] == 0x0D ? "bare CR in a header value" : "control character in a header value")
                )
            }
            var valueEnd = line.contentEnd
            while valueEnd > valueStart && (buffer[valueEnd - 1] == 0x20 || buffer[valueEnd - 1] == 0x09) { valueEnd -= 1 }
            let value = valueStart..<valueEnd
            switch known {
            case .host:
                hostCount += 1
                if hostCount > 1 { return .failed(.badRequest("more than one Host header")) }
                if head.hostRange == nil {
                    if let error = validateAuthority(buffer, value) { return .failed(error) }
                    head.hostRange = value
                }
            case .contentLength:
                guard let length = parseContentLength(buffer, value) else {
                    return .failed(.badRequest("invalid Content-Length"))
                }
                if let previous = contentLength, previous != length {
                    return .failed(.badRequest("conflicting Content-Length headers"))
                }
                contentLength = length
            case .transferEncoding:
                transferEncodingSeen = true
                forEachToken(buffer, value) { coding in
                    if equalsLowercase(buffer, coding, "chunked") {
                        chunkedCount += 1
                        chunkedLast = true
                    } else {
                        unknownCoding = true
                        chunkedLast = false
                    }
                }
            case .connection:
                forEachToken(buffer, value) { token in
                    if equalsLowercase(buffer, token, "close") { head.connectionClose = true }
                    if equalsLowercase(buffer, token, "keep-alive") { head.connectionKeepAlive = true }
                }
            case .acceptEncoding:
                head.acceptsGzip = acceptsGzip(buffer, value)
            case .userAgent:
                head.userAgentRange = value
                // The pass hashed the line up to its end unless a tab stopped it; trimmed or tabbed, hashed again.
                head.userAgentHash =
                    (valueEnd == line.contentEnd ? line.hash : nil)
                    ?? FieldValueHash.of(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[value]))
            case .forwardedFor:
                // The last line: a proxy that adds a line of its own puts it after the client's.
                head.forwardedForRange = value
            case .checkProbe:
                head.isCheckProbe = true
            case .origin:
                head.originRange = head.originRange ?? value
            case .contentType:
                head.contentTypeRange = head.contentTypeRange ?? value
            case .authorization:
                head.authorizationRange = head.authorizationRange ?? value
            case .expect:
                forEachToken(buffer, value) { token in
                    if equalsLowercase(buffer, token, "100-continue") { head.expectsContinue = true }
                }
            case .other:
                break
            }
            lineStart = line.next
        }

        if transferEncodingSeen {
            if contentLength != nil {
                return .failed(.badRequest("both Content-Length and Transfer-Encoding"))
            }
            if head.isHTTP10 {
                return .failed(.badRequest("Transfer-Encoding in an HTTP/1.0 request"))
            }
            if chunkedCount > 1 { return .failed(.badRequest("chunked applied twice")) }
            if !chunkedLast { return .failed(.badRequest("chunked is not the final transfer coding")) }
            if unknownCoding { return .failed(.notImplemented("unsupported transfer coding")) }
            head.body = .chunked
        } else if let contentLength, contentLength > 0 {
            head.body = .length(contentLength)
        }
        if hostCount == 0 && !head.isHTTP10 {
            return .failed(.badRequest("missing Host header"))
        }
        return .complete
    }

    private func parseRequestLine(
        _ buffer: UnsafeBufferPointer<UInt8>,
        _ start: Int,
        _ newline: Int,
        _ head: inout RequestHead
    ) -> HTTPError? {
        var end = newline
        if end > start && buffer[end - 1] == 0x0D { end -= 1 }
        // method SP request-target SP HTTP-version, single spaces (RFC 9112 §3).
        var methodEnd = start
        // Nearly every request is a GET: one four-byte comparison instead of the token loop and the name match.
        if end - start > 4, let base = buffer.baseAddress,
            UnsafeRawPointer(base + start).loadUnaligned(as: UInt32.self) == UInt32(littleEndian: 0x2054_4547)
        {
            methodEnd = start + 3
            head.method = .get
        } else {
            while methodEnd < end && isTokenByte(buffer[methodEnd]) { methodEnd += 1 }
            guard methodEnd > start, methodEnd < end, buffer[methodEnd] == 0x20 else {
                return .badRequest("malformed request line")
            }
            head.method = HTTPMethod(buffer, start..<methodEnd)
        }
        head.methodRange = start..<methodEnd
        let targetStart = methodEnd + 1
        var targetEnd = targetStart
        var firstQuestionMark: Int?
        while targetEnd < end {
            // Eight bytes at a time past the bytes a target is mostly made of: a path is read on every request.
            if targetEnd + 8 <= end, let base = buffer.baseAddress {
                let notPlain = Self.notPlainTargetBytes(UnsafeRawPointer(base).loadUnaligned(fromByteOffset: targetEnd, as: UInt64.self))
                if notPlain == 0 {
                    targetEnd += 8
                    continue
                }
                targetEnd += notPlain.trailingZeroBitCount >> 3
            }
            let byte = buffer[targetEnd]
            if byte == 0x20 { break }
            if byte < 0x20 || byte >= 0x7F {
                return .badRequest(byte >= 0x80 ? "non-ASCII byte in the request target" : "control character in the request target")
            }
            // A fragment is never sent (RFC 9110 §4.2.5); one in the target means a broken client or a probe.
            if byte == UInt8(ascii: "#") { return .badRequest("a fragment ('#') in the request target") }
            if byte == UInt8(ascii: "?") && firstQuestionMark == nil { firstQuestionMark = targetEnd }
            targetEnd += 1
        }
        guard targetEnd > targetStart, targetEnd < end else { return .badRequest("malformed request line") }
        head.targetRange = targetStart..<targetEnd
        let versionStart = targetEnd + 1
        guard end - versionStart == 8,
            buffer[versionStart] == UInt8(ascii: "H"), buffer[versionStart + 1] == UInt8(ascii: "T"),
            buffer[versionStart + 2] == UInt8(ascii: "T"), buffer[versionStart + 3] == UInt8(ascii: "P"),
            buffer[versionStart + 4] == UInt8(ascii: "/"), ASCII.isDigit(buffer[versionStart + 5]),
            buffer[versionStart + 6] == UInt8(ascii: "."), ASCII.isDigit(buffer[versionStart + 7])
        else {
            return .badRequest("malformed HTTP version")
        }
        if buffer[versionStart + 5] != UInt8(ascii: "1") { return .versionNotSupported }
        head.minorVersion = Int(buffer[versionStart + 7] - UInt8(ascii: "0"))

        // Target forms (RFC 9112 §3.2): origin, absolute (its authority overrides Host), asterisk.
        let first = buffer[targetStart]
        if first == UInt8(ascii: "/") {
            head.pathRange = targetStart..<(firstQuestionMark ?? targetEnd)
        } else if first == UInt8(ascii: "*") && targetEnd - targetStart == 1 {
            // Asterisk-form names the server as a whole and exists only for OPTIONS (RFC 9112 §3.2.4).
            guard head.method == .options else { return .badRequest("'*' as the request target is only valid with OPTIONS") }
            head.isAsteriskForm = true
            head.pathRange = targetStart..<targetEnd
        } else if let schemeEnd = absoluteFormSchemeEnd(buffer, targetStart..<targetEnd) {
            let authorityStart = schemeEnd + 3
            var authorityEnd = authorityStart
            while authorityEnd < targetEnd && buffer[authorityEnd] != UInt8(ascii: "/") && buffer[authorityEnd] != UInt8(ascii: "?") {
                authorityEnd += 1
            }
            if let error = validateAuthority(buffer, authorityStart..<authorityEnd) { return error }
            head.hostRange = authorityStart..<authorityEnd
            var pathEnd = authorityEnd
            while pathEnd < targetEnd && buffer[pathEnd] != UInt8(ascii: "?") { pathEnd += 1 }
            head.pathRange = authorityEnd..<pathEnd
        } else {
            return .badRequest("request target must be a path such as /.well-known/apple-app-site-association")
        }
        return nil
    }

    /// A flag in the high bit of each byte of `word` that is not a plain target byte: a space or control
    /// (below 0x21), DEL or non-ASCII (0x7F and up), `#` or `?`. The lowest flag is exact (a borrow or carry
    /// only flags bytes after a true one), so it names the first such byte.
    @inline(__always)
    private static func notPlainTargetBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let belowBang = (word &- 0x2121_2121_2121_2121) & ~word
        let deleteOrHigh = word | (word &+ ones)
        let hash = word ^ 0x2323_2323_2323_2323
        let question = word ^ 0x3F3F_3F3F_3F3F_3F3F
        return (belowBang | deleteOrHigh | ((hash &- ones) & ~hash) | ((question &- ones) & ~question)) & highBits
    }

    /// `http://` or `https://` (case-insensitive): returns the index of the ':'.
    private func absoluteFormSchemeEnd(_ buffer: UnsafeBufferPointer<UInt8>, _ target: Range<Int>) -> Int? {
        let schemes: [(StaticString, Int)] = [("http", 4), ("https", 5)]
        for (scheme, length) in schemes where target.count > length + 3 {
            if equalsLowercase(buffer, target.lowerBound..<(target.lowerBound + length), scheme),
                buffer[target.lowerBound + length] == UInt8(ascii: ":"),
                buffer[target.lowerBound + length + 1] == UInt8(ascii: "/"),
                buffer[target.lowerBound + length + 2] == UInt8(ascii: "/")
            {
                return target.lowerBound + length
            }
        }
        return nil
    }
}
