import HTTP1

/// The request-head parser, fed the input whole and then split at every point the first byte chooses:
/// the outcome must not depend on how the bytes arrive, and every range must lie inside the buffer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let limits = HTTPLimits(requestLineBytes: 256, headerBytes: 1024, headerCount: 20, bodyBytes: 1024)
    var whole = RequestHeadParser(limits: limits)
    let expected = bytes.withUnsafeBufferPointer { whole.parse($0) }
    if case .complete(let head) = expected {
        for range in [head.methodRange, head.targetRange, head.pathRange]
            + [head.hostRange, head.userAgentRange, head.originRange].compactMap({ $0 })
        {
            precondition(range.lowerBound >= 0 && range.upperBound <= head.length && head.length <= bytes.count, "range outside the head")
        }
    }
    guard let first = bytes.first, bytes.count > 1 else { return 0 }
    // Arrival in two parts, split where the first byte says.
    let split = 1 + Int(first) % (bytes.count - 1)
    var pieces = RequestHeadParser(limits: limits)
    var outcome = bytes[0..<split].withUnsafeBufferPointer { pieces.parse($0) }
    if outcome == .incomplete { outcome = bytes.withUnsafeBufferPointer { pieces.parse($0) } }
    switch (expected, outcome) {
    case (.complete(let a), .complete(let b)): precondition(a == b, "a split changed the parsed head")
    case (.failed(let a), .failed(let b)): precondition(a.status == b.status, "a split changed the error")
    case (.incomplete, .incomplete): break
    case (.failed, .complete), (.complete, .failed):
        // A head may complete before the bytes that make the whole input fail arrive; nothing else may differ.
        break
    default:
        preconditionFailure("a split changed completeness: \(expected) vs \(outcome)")
    }
    return 0
}
