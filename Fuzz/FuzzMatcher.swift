import AASA

/// Pattern compilation and matching: the input is a document's components and a URL (split at the first
/// newline); no crash, and matching twice gives the same decision.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let newline = bytes.firstIndex(of: 0x0A) ?? bytes.count
    let url = String(decoding: bytes[min(newline + 1, bytes.count)...], as: UTF8.self)
    let document = Array(bytes[..<newline])
    guard let decoded = AASADecoder.decode(document).document else { return 0 }
    let matcher = Matcher(decoded)
    let first = matcher.match("https://example.com" + url)
    let second = matcher.match("https://example.com" + url)
    precondition(first.app == second.app, "matching is not deterministic")
    return 0
}
