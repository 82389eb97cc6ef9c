import Support

/// Apple's 128 KB: the size findings, and which parts of a document take the bytes.
extension AASAValidator {
    /// Size findings for the exact bytes that will be served.
    public static func validateSize(
        _ byteCount: Int,
        contributors: [(String, Int)] = [],
        origin: Provenance = Provenance(nil, .root)
    ) -> [Diagnostic] {
        let biggest = contributors.sorted { $0.1 > $1.1 }.prefix(3).map { "\($0.0) \(formatBytes($0.1))" }
        let biggestText = biggest.isEmpty ? "" : "; biggest parts: " + biggest.joined(separator: ", ")
        let advice =
            ". Shrink it: use components with wildcards instead of many literal paths, substitution variables "
            + "for repeated alternatives, and drop the legacy format if you do not support iOS 12"
        if byteCount > sizeLimit {
            return [
                Diagnostic(
                    .error,
                    "size.limit",
                    "the document is \(formatBytes(byteCount)) uncompressed, over Apple's 128 KB limit "
                        + "(\(sizeLimit) bytes); iOS ignores the whole file\(biggestText)\(advice)",
                    at: origin.location,
                    path: origin.path.description
                )
            ]
        }
        if byteCount >= sizeWarningThreshold {
            return [
                Diagnostic(
                    .warning,
                    "size.near-limit",
                    "the document is \(formatBytes(byteCount)) uncompressed, close to Apple's 128 KB limit "
                        + "(\(sizeLimit) bytes)\(biggestText)\(advice)",
                    at: origin.location,
                    path: origin.path.description
                )
            ]
        }
        return []
    }

    static func formatBytes(_ count: Int) -> String {
        count >= 10_240 ? "\(count / 1024) KiB (\(count) bytes)" : count == 1 ? "1 byte" : "\(count) bytes"
    }

    /// Size findings for a file's bytes, naming the biggest parts of its document when it is near the limit.
    public static func validateSize(_ byteCount: Int, of document: AASADocument?) -> [Diagnostic] {
        let contributors = byteCount >= sizeWarningThreshold ? document.map(sizeContributors) ?? [] : []
        return validateSize(byteCount, contributors: contributors)
    }

    /// Which parts of a document take the most bytes, for the size-limit message.
    public static func sizeContributors(_ document: AASADocument) -> [(String, Int)] {
        var parts: [(String, Int)] = []
        if let applinks = document.applinks {
            for details in applinks.details {
                let name =
                    details.appIDs != nil
                    ? "details entry for \(details.effectiveAppIDs.joined(separator: ", "))"
                    : "legacy entry for \(details.appID?.value ?? "?")"
                parts.append((name + " (\(details.origin.path))", JSONWriter.bytes(AASARenderer.render(details)).count))
            }
            for variable in applinks.substitutionVariables {
                let size = JSONWriter.bytes(.array(variable.values.map { .string($0.value) })).count
                parts.append(("substitution variable \"\(variable.name)\"", size))
            }
        }
        return parts
    }
}
