import AASA

/// Arbitrary bytes as a hosted AASA file, decoded straight from its bytes and the tree's way: whatever the
/// direct reader takes, the tree's way reads without a finding as the same document (rendered, byte for
/// byte) with the same findings of the check; and the reader's checked document is there only when the
/// tree's way finds nothing at all — a server never keeps quiet about a file `validate` would fault.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let checked = DirectAASADecoder.checked(bytes)
    let tree = AASADecoder.decode(bytes)
    var treeFindings = tree.diagnostics
    if let document = tree.document { treeFindings += AASAValidator.validate(document) }
    treeFindings += AASAValidator.validateSize(bytes.count, of: tree.document)
    precondition(checked == nil || treeFindings.isEmpty, "a document checked without the tree has findings the tree's way")
    guard let direct = bytes.withUnsafeBufferPointer({ DirectAASADecoder.decode($0) }) else { return 0 }
    precondition(tree.diagnostics.isEmpty, "the direct reader took a file the tree's way has findings in")
    let document = tree.document!
    precondition(AASARenderer.bytes(direct) == AASARenderer.bytes(document), "another document without the tree")
    let directRules = (AASAValidator.validate(direct) + AASAValidator.validateSize(bytes.count, of: direct)).map(\.rule).sorted()
    let treeRules = (AASAValidator.validate(document) + AASAValidator.validateSize(bytes.count, of: document)).map(\.rule).sorted()
    precondition(directRules == treeRules, "other findings without the tree")
    return 0
}
