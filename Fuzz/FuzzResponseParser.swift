import HTTP1

/// The response parser `check` runs on whatever an untrusted server sends: it must never crash, every
/// complete answer must lie inside the bytes, a HEAD answer has no body, and a response that is complete
/// on the bytes so far must stay the same response when more bytes arrive.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let limit = 4096
    if case .complete(let response, let consumed) = ResponseParser.parse(bytes, closed: true, bodyLimit: limit) {
        precondition(consumed <= bytes.count, "consumed more than arrived")
        precondition(response.body.count <= limit, "a body over the limit was accepted")
        if case .contentLength(let declared) = response.framing { precondition(response.body.count <= declared, "more body than declared") }
        precondition(response.receivedBodyBytes <= bytes.count, "more body bytes than arrived")
    }
    if case .complete(let response, _) = ResponseParser.parse(bytes, closed: true, isHEAD: true, bodyLimit: limit) {
        precondition(response.body.isEmpty, "a HEAD answer with a body")
    }
    guard let first = bytes.first, bytes.count > 1 else { return 0 }
    let split = 1 + Int(first) % (bytes.count - 1)
    let early = ResponseParser.parse(Array(bytes[0..<split]), closed: false, bodyLimit: limit)
    if case .complete(_, let consumed) = early {
        precondition(consumed <= split, "consumed more than arrived")
        let later = ResponseParser.parse(bytes, closed: false, bodyLimit: limit)
        precondition(later == early, "more bytes changed a response that was already complete")
    }
    return 0
}
