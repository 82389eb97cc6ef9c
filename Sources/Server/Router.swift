import AASA
import HTTP1

/// What a request was, for metrics and logs.
enum PathClass: UInt8, Sendable {
    case aasa
    case health
    case other

    var label: String {
        switch self {
        case .aasa: return "aasa"
        case .health: return "health"
        case .other: return "other"
        }
    }
}

struct Routed {
    let response: PreparedResponse
    let siteLabel: String
    let pathClass: PathClass
}

/// Picks the prepared response for a request on a main listener. No I/O, no allocation on the AASA path
/// beyond the host name.
enum Router {
    static let wellKnownPath: [UInt8] = Array("/.well-known/apple-app-site-association".utf8)
    static let rootPath: [UInt8] = Array("/apple-app-site-association".utf8)

    static func route(_ head: RequestHead, _ buffer: UnsafeBufferPointer<UInt8>, _ snapshot: Snapshot) -> Routed {
        if head.method == .unknown {
            return Routed(response: snapshot.notImplemented, siteLabel: "-", pathClass: .other)
        }
        let path = UnsafeBufferPointer(rebasing: buffer[head.pathRange])
        let isAASA = !head.isAsteriskForm && (equal(path, wellKnownPath) || equal(path, rootPath))
        if isAASA {
            guard head.method == .get || head.method == .head else {
                return Routed(response: snapshot.methodNotAllowed, siteLabel: "-", pathClass: .aasa)
            }
            let site = head.hostRange.flatMap { range in snapshot.hosts.lookup(normalized: normalizedHost(buffer, range)) }
            guard let responses = site.map({ snapshot.sites[$0] }) ?? snapshot.unknownHost else {
                return Routed(response: snapshot.notFound, siteLabel: "unknown", pathClass: .aasa)
            }
            let response = head.acceptsGzip ? responses.gzip ?? responses.identity : responses.identity
            return Routed(response: response, siteLabel: responses.label, pathClass: .aasa)
        }
        if let health = snapshot.healthPath, equal(path, health) {
            guard head.method == .get || head.method == .head else {
                return Routed(response: snapshot.methodNotAllowed, siteLabel: "-", pathClass: .health)
            }
            return Routed(response: snapshot.health, siteLabel: "-", pathClass: .health)
        }
        return Routed(response: snapshot.notFound, siteLabel: "-", pathClass: .other)
    }

    /// The Host value as the host table keys it: ASCII lower case, no port, no trailing dot. Built from
    /// the bytes in one step (the parser has already rejected anything but ASCII host characters).
    static func normalizedHost(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        var end = range.upperBound
        if buffer[range.lowerBound] == UInt8(ascii: "[") {
            if let close = buffer[range].firstIndex(of: UInt8(ascii: "]")) { end = close + 1 }
        } else if let colon = buffer[range].lastIndex(of: UInt8(ascii: ":")) {
            end = colon
        }
        if end > range.lowerBound && buffer[end - 1] == UInt8(ascii: ".") { end -= 1 }
        let count = end - range.lowerBound
        return String(unsafeUninitializedCapacity: count) { output in
            for offset in 0..<count {
                let byte = buffer[range.lowerBound + offset]
                output[offset] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            }
            return count
        }
    }

    @inline(__always)
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return b.withUnsafeBufferPointer { b in
            for index in 0..<a.count where a[index] != b[index] { return false }
            return true
        }
    }
}
