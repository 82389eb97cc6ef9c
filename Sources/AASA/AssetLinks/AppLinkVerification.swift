/// Which Android apps a host's statement list lets open its links: Android verifies an App Links host
/// by fetching its `assetlinks.json` and looking for `handle_all_urls` granted to the app's package and
/// one of its signing certificates. Unlike iOS there are no paths: a verified app gets every URL of the
/// host that its intent filters declare.
public enum AppLinkVerification {
    public struct Grant: Sendable, Equatable {
        public var package: String
        public var fingerprints: [String]
        /// Index of the statement in the list.
        public var statement: Int
    }

    /// The packages granted App Links, in statement order (a package once, with every fingerprint).
    public static func grants(_ statements: [AssetStatement]) -> [Grant] {
        var grants: [Grant] = []
        for (index, statement) in statements.enumerated()
        where statement.relations.contains(where: { $0.value == AssetRelation.handleAllURLs }) {
            guard case .androidApp(let package, let fingerprints) = statement.target else { continue }
            if let existing = grants.firstIndex(where: { $0.package == package.value }) {
                for fingerprint in fingerprints where !grants[existing].fingerprints.contains(fingerprint.value) {
                    grants[existing].fingerprints.append(fingerprint.value)
                }
            } else {
                grants.append(Grant(package: package.value, fingerprints: fingerprints.map(\.value), statement: index))
            }
        }
        return grants
    }

    /// App Links are http(s) URLs only; the verifier fetches the list over https whatever the link's scheme.
    public static func whyNotALink(_ url: MatchURL) -> String? {
        guard let scheme = url.scheme else {
            return "missing scheme: an App Link is a full URL (write https://\(url.text))"
        }
        guard scheme == "http" || scheme == "https" else {
            return "only http and https URLs are App Links (\(scheme): URLs go to an ordinary intent filter)"
        }
        return nil
    }
}
