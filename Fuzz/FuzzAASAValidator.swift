import AASA

/// Decoding and validating a hosted AASA file: no crash; a document that decodes renders to JSON that
/// decodes again to the same rendering.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let (document, _) = AASAValidator.validateFile(bytes)
    if let document {
        let rendered = AASARenderer.bytes(document)
        if let again = AASADecoder.decode(rendered).document {
            precondition(AASARenderer.bytes(again) == rendered, "render → decode → render is not stable")
        }
    }
    return 0
}
