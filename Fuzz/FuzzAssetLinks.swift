import AASA

/// Decoding and checking an assetlinks.json (what `check` fetches from hosts it does not control): no
/// crash; the statements that decode render to a list that decodes to the same rendering.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let result = AssetLinksDecoder.validateFile(bytes)
    if let statements = result.statements {
        let rendered = JSONWriter.bytes(AssetLinksGenerator.render(statements))
        if let again = AssetLinksDecoder.validateFile(rendered).statements {
            precondition(JSONWriter.bytes(AssetLinksGenerator.render(again)) == rendered, "render → decode → render is not stable")
        }
        _ = AppLinkVerification.grants(statements)
    }
    for text in [String(decoding: bytes.prefix(128), as: UTF8.self)] {
        let check = AndroidIdentity.checkFingerprint(text)
        if let canonical = check.canonical { precondition(AndroidIdentity.checkFingerprint(canonical).problem == nil) }
        _ = AndroidIdentity.packageNameProblem(text)
    }
    return 0
}
