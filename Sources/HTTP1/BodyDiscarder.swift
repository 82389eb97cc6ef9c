import Support

/// Reads and throws away a request body (GET and HEAD need none, but a client may send one, and its
/// bytes must not be mistaken for the next request).
///
/// Chunked framing is parsed strictly (RFC 9112 §7.1): hex sizes without overflow, CRLF line ends only
/// (a bare LF is how request smuggling starts — Go's CVE-2025-22871), a bounded total.
public struct BodyDiscarder: Sendable {
    public enum Result: Sendable, Equatable {
        /// All of the buffer from `from` was consumed; more body is expected.
        case needMore
        /// The body ended; the next request starts at this index.
        case done(Int)
        case failed(HTTPError)
    }

    private enum State: Sendable, Equatable {
        case length(remaining: Int)
        case chunkSize(value: Int, digits: Int)
        case chunkExtension(length: Int)
        case chunkSizeLF
        case chunkData(remaining: Int)
        case chunkDataCR
        case chunkDataLF
        case trailerLineStart
        case trailerLine
        case trailerLF(empty: Bool)
    }

    private var state: State
    private var received = 0
    private let limit: Int

    public init(_ framing: BodyFraming, limit: Int) {
        self.limit = limit
        switch framing {
        case .length(let count): state = .length(remaining: count)
        case .chunked: state = .chunkSize(value: 0, digits: 0)
        case .none: state = .length(remaining: 0)
        }
    }

    public mutating func consume(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> Result {
        var index = start
        while true {
            switch state {
            case .length(let remaining):
                let available = buffer.count - index
                if available >= remaining { return .done(index + remaining) }
                state = .length(remaining: remaining - available)
                return .needMore
            case .chunkData(let remaining):
                let available = buffer.count - index
                if available >= remaining {
                    index += remaining
                    state = .chunkDataCR
                    continue
                }
                state = .chunkData(remaining: remaining - available)
                return .needMore
            default:
                break
            }
            guard index < buffer.count else { return .needMore }
            let byte = buffer[index]
            index += 1
            switch state {
            case .chunkSize(let value, let digits):
                if let digit = ASCII.hexValue(byte).map(Int.init) {
                    guard digits < 15 else { return .failed(.badRequest("chunk size too large")) }
                    state = .chunkSize(value: value << 4 | digit, digits: digits + 1)
                } else if digits == 0 {
                    return .failed(.badRequest("invalid chunk size"))
                } else if byte == 0x0D || byte == UInt8(ascii: ";") || byte == 0x20 || byte == 0x09 {
                    received += value
                    if received > limit { return .failed(.payloadTooLarge) }
                    pendingChunk = value
                    state = byte == 0x0D ? .chunkSizeLF : .chunkExtension(length: 0)
                } else {
                    return .failed(.badRequest(byte == 0x0A ? "bare LF in chunked body" : "invalid chunk size"))
                }
            case .chunkExtension(let length):
                if byte == 0x0D {
                    state = .chunkSizeLF
                } else if byte == 0x0A || (byte < 0x20 && byte != 0x09) || byte == 0x7F {
                    return .failed(.badRequest("invalid chunk extension"))
                } else if length >= 4096 {
                    return .failed(.badRequest("chunk extension too long"))
                } else {
                    state = .chunkExtension(length: length + 1)
                }
            case .chunkSizeLF:
                guard byte == 0x0A else { return .failed(.badRequest("bare CR in chunked body")) }
                state = pendingChunk == 0 ? .trailerLineStart : .chunkData(remaining: pendingChunk)
            case .chunkDataCR:
                guard byte == 0x0D else { return .failed(.badRequest("chunk data longer than its size")) }
                state = .chunkDataLF
            case .chunkDataLF:
                guard byte == 0x0A else { return .failed(.badRequest("bare CR in chunked body")) }
                state = .chunkSize(value: 0, digits: 0)
            case .trailerLineStart:
                state = byte == 0x0D ? .trailerLF(empty: true) : .trailerLine
                if byte == 0x0A { return .failed(.badRequest("bare LF in chunked trailer")) }
                received += 1
            case .trailerLine:
                received += 1
                if received > limit { return .failed(.payloadTooLarge) }
                if byte == 0x0D {
                    state = .trailerLF(empty: false)
                } else if byte == 0x0A || byte == 0 {
                    return .failed(.badRequest("invalid chunked trailer"))
                }
            case .trailerLF(let empty):
                guard byte == 0x0A else { return .failed(.badRequest("bare CR in chunked trailer")) }
                if empty { return .done(index) }
                state = .trailerLineStart
            case .length, .chunkData:
                break
            }
        }
    }

    private var pendingChunk = 0
}
