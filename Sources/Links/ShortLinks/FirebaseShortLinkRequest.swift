import AASA

/// A request body of FDL's short-link API (`POST /v1/shortLinks`), so that a backend that called Firebase
/// changes only its base URL: `{"longDynamicLink": "https://go.example.com/?link=…"}` or
/// `{"dynamicLinkInfo": {…}, "suffix": {"option": "SHORT" | "UNGUESSABLE"}}`. Read into FDL's long-link
/// parameters, so that one function (``FirebaseLongLink/rule(_:links:ownHosts:)``) checks every way a
/// link arrives. Keys FDL never had are refused by name: a typo must not silently drop a fallback.
public struct FirebaseShortLinkRequest: Sendable, Equatable {
    public enum SuffixOption: String, Sendable, Equatable {
        case unguessable = "UNGUESSABLE"
        case short = "SHORT"
    }

    /// The domain the link is asked for (`domainUriPrefix`, or the long link's host), lower case; the
    /// server answers only for its own link domains.
    public var domain: String
    /// FDL's parameters (`link`, `apn`, `afl`, `ibi`, `st` …), as a long link would carry them.
    public var parameters: [String: String]
    public var suffix: SuffixOption
    /// The body was `{"longDynamicLink": …}`: a parameter's problem is reported at that path.
    public var fromLongLink = false

    /// Why a body is refused: the JSON path of the value and what is wrong with it.
    public struct Problem: Error, Sendable, Equatable {
        public var path: String
        public var reason: String
    }

    /// Larger than any FDL request (a few hundred bytes): bodies past it are refused unread by the server.
    public static let bodyLimit = 64 * 1024

    /// Where each `dynamicLinkInfo` field goes among FDL's long-link parameters.
    static let fields: [String: [String: String]] = [
        "": ["link": "link"],
        "androidInfo": ["androidPackageName": "apn", "androidFallbackLink": "afl", "androidMinPackageVersionCode": "amv"],
        "iosInfo": [
            "iosBundleId": "ibi", "iosFallbackLink": "ifl", "iosCustomScheme": "ius", "iosIpadFallbackLink": "ipfl",
            "iosIpadBundleId": "ipbi", "iosAppStoreId": "isi",
        ],
        "navigationInfo": ["enableForcedRedirect": "efr"],
        "socialMetaTagInfo": ["socialTitle": "st", "socialDescription": "sd", "socialImageLink": "si"],
        "analyticsInfo.googlePlayAnalytics": [
            "utmSource": "utm_source", "utmMedium": "utm_medium", "utmCampaign": "utm_campaign", "utmTerm": "utm_term",
            "utmContent": "utm_content",
        ],
        "analyticsInfo.itunesConnectAnalytics": ["at": "at", "ct": "ct", "mt": "mt", "pt": "pt"],
    ]

    /// A creation body's JSON object, or why it is none: over the limit, not JSON (where), a duplicate
    /// key, not an object (`expected` says what it must hold).
    static func object(_ body: [UInt8], expected: String) -> Result<(root: JSONNode, members: [JSONMember]), Problem> {
        guard body.count <= bodyLimit else { return .failure(Problem(path: "$", reason: "is over \(bodyLimit) bytes")) }
        let parsed = JSONParser.parse(body, duplicateKeys: .error)
        if let first = parsed.diagnostics.first(where: { $0.severity == .error }) {
            let position = first.location.map { " (line \($0.line), column \($0.column))" } ?? ""
            return .failure(Problem(path: "$", reason: "is not valid JSON\(position): \(first.message)"))
        }
        guard let root = parsed.root, let members = root.objectValue else {
            return .failure(Problem(path: "$", reason: "must be a JSON object with \(expected)"))
        }
        return .success((root, members))
    }

    public static func decode(_ body: [UInt8]) -> Result<FirebaseShortLinkRequest, Problem> {
        let root: JSONNode
        let members: [JSONMember]
        switch object(body, expected: "\"longDynamicLink\" or \"dynamicLinkInfo\"") {
        case .failure(let problem): return .failure(problem)
        case .success(let object): (root, members) = object
        }
        for member in members where !["longDynamicLink", "dynamicLinkInfo", "suffix"].contains(member.key) {
            return .failure(Problem(path: "$.\(member.key)", reason: "is not a field of FDL's shortLinks request"))
        }
        var suffix = SuffixOption.unguessable
        if let suffixNode = root["suffix"] {
            guard let suffixMembers = suffixNode.objectValue, suffixMembers.allSatisfy({ $0.key == "option" }),
                let text = suffixNode["option"]?.stringValue, let option = SuffixOption(rawValue: text)
            else {
                return .failure(Problem(path: "$.suffix", reason: "must be {\"option\": \"UNGUESSABLE\"} or {\"option\": \"SHORT\"}"))
            }
            suffix = option
        }
        switch (root["longDynamicLink"], root["dynamicLinkInfo"]) {
        case (let long?, nil):
            guard let text = long.stringValue, let url = CheckedURL(text) else {
                return .failure(Problem(path: "$.longDynamicLink", reason: "must be an https URL of a long link"))
            }
            let query = text.firstIndex(of: "?").map { String(text[text.index(after: $0)...]) } ?? ""
            switch FirebaseLongLink.parameters(query: query) {
            case .failure(let refusal):
                return .failure(Problem(path: "$.longDynamicLink", reason: "\(refusal.parameter) \(refusal.reason)"))
            case .success(let parameters):
                return .success(FirebaseShortLinkRequest(domain: url.host, parameters: parameters, suffix: suffix, fromLongLink: true))
            }
        case (nil, let info?):
            return decodeInfo(info).map { FirebaseShortLinkRequest(domain: $0.domain, parameters: $0.parameters, suffix: suffix) }
        case (.some, .some):
            return .failure(Problem(path: "$", reason: "has both \"longDynamicLink\" and \"dynamicLinkInfo\"; send one"))
        case (nil, nil):
            return .failure(Problem(path: "$", reason: "needs \"longDynamicLink\" or \"dynamicLinkInfo\""))
        }
    }

    static func decodeInfo(_ info: JSONNode) -> Result<(domain: String, parameters: [String: String]), Problem> {
        guard let members = info.objectValue else {
            return .failure(Problem(path: "$.dynamicLinkInfo", reason: "must be an object"))
        }
        var parameters: [String: String] = [:]
        var domain: String?
        for member in members {
            let path = "$.dynamicLinkInfo.\(member.key)"
            switch member.key {
            case "domainUriPrefix":
                guard let text = member.value.stringValue, let url = CheckedURL(text.hasSuffix("/") ? text : text + "/"),
                    url.scheme == "https"
                else {
                    return .failure(Problem(path: path, reason: "must be the https URL of a link domain, e.g. https://go.example.com"))
                }
                domain = url.host
            case "link":
                guard let text = member.value.stringValue else { return .failure(Problem(path: path, reason: "must be a string")) }
                parameters["link"] = text
            case "androidInfo", "iosInfo", "navigationInfo", "socialMetaTagInfo":
                if let problem = copy(member.value, section: member.key, path: path, into: &parameters) { return .failure(problem) }
            case "analyticsInfo":
                guard let sections = member.value.objectValue else { return .failure(Problem(path: path, reason: "must be an object")) }
                for section in sections {
                    let name = "analyticsInfo.\(section.key)"
                    guard fields[name] != nil else {
                        return .failure(Problem(path: "\(path).\(section.key)", reason: "is not a field of FDL's analyticsInfo"))
                    }
                    if let problem = copy(section.value, section: name, path: "\(path).\(section.key)", into: &parameters) {
                        return .failure(problem)
                    }
                }
            default:
                return .failure(Problem(path: path, reason: "is not a field of FDL's dynamicLinkInfo"))
            }
        }
        guard let domain else {
            return .failure(
                Problem(path: "$.dynamicLinkInfo.domainUriPrefix", reason: "is required: the link domain, e.g. https://go.example.com")
            )
        }
        return .success((domain, parameters))
    }

    /// One section's fields into parameters; booleans and numbers as a long link writes them.
    static func copy(_ node: JSONNode, section: String, path: String, into parameters: inout [String: String]) -> Problem? {
        guard let members = node.objectValue, let names = fields[section] else { return Problem(path: path, reason: "must be an object") }
        for member in members {
            guard let parameter = names[member.key] else {
                return Problem(path: "\(path).\(member.key)", reason: "is not a field of FDL's \(section.split(separator: ".").last ?? "")")
            }
            switch member.value.value {
            case .string(let text): parameters[parameter] = text
            case .number(let text): parameters[parameter] = text
            case .bool(let flag): parameters[parameter] = flag ? "1" : "0"
            default: return Problem(path: "\(path).\(member.key)", reason: "must be a string")
            }
        }
        return nil
    }
}
