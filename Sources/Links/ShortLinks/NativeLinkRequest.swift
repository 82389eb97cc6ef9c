import AASA

/// The API's own creation body, `POST /v1/links`: the shape `links export` writes and `GET /v1/links/…`
/// answers, less what the server decides —
/// `{"domain": "go.example.com", "suffix": "spring", "parameters": {"link": "https://…", "ifl": "…"}}`.
/// `suffix` is an alias (checked as the command line's `--alias`); without it the suffix is unguessable,
/// or the shortest free one with `"short": true`. Keys outside this shape are refused by name.
public struct NativeLinkRequest: Sendable, Equatable {
    public var domain: String
    public var parameters: [String: String]
    public var suffix: ShortLinkAPI.SuffixChoice

    public static func decode(_ body: [UInt8]) -> Result<NativeLinkRequest, FirebaseShortLinkRequest.Problem> {
        typealias Problem = FirebaseShortLinkRequest.Problem
        let root: JSONNode
        let members: [JSONMember]
        switch FirebaseShortLinkRequest.object(body, expected: "\"domain\" and \"parameters\"") {
        case .failure(let problem): return .failure(problem)
        case .success(let object): (root, members) = object
        }
        for member in members where !["domain", "suffix", "short", "parameters"].contains(member.key) {
            return .failure(Problem(path: "$.\(member.key)", reason: "is not a field of a link (domain, suffix, short, parameters)"))
        }
        guard let domain = root["domain"]?.stringValue, !domain.isEmpty else {
            return .failure(Problem(path: "$.domain", reason: "is required: the link domain's host, e.g. go.example.com"))
        }
        guard let parameterMembers = root["parameters"]?.objectValue else {
            return .failure(Problem(path: "$.parameters", reason: "is required: an object of FDL parameters, at least \"link\""))
        }
        var parameters: [String: String] = [:]
        for member in parameterMembers {
            guard let value = member.value.stringValue else {
                return .failure(Problem(path: "$.parameters.\(member.key)", reason: "must be a string"))
            }
            parameters[member.key] = value
        }
        guard parameters["link"] != nil else {
            return .failure(Problem(path: "$.parameters.link", reason: "is required: the deep link the app receives"))
        }
        var short = false
        if let node = root["short"] {
            guard case .bool(let flag) = node.value else { return .failure(Problem(path: "$.short", reason: "must be true or false")) }
            short = flag
        }
        var suffix: ShortLinkAPI.SuffixChoice = short ? .short : .unguessable
        if let node = root["suffix"] {
            guard let alias = node.stringValue else { return .failure(Problem(path: "$.suffix", reason: "must be a string")) }
            guard !short else {
                return .failure(Problem(path: "$.short", reason: "and \"suffix\" both name the suffix; send one"))
            }
            if let problem = ShortLinkSuffix.aliasProblem(alias) { return .failure(Problem(path: "$.suffix", reason: problem)) }
            suffix = .alias(alias)
        }
        return .success(NativeLinkRequest(domain: domain.lowercased(), parameters: parameters, suffix: suffix))
    }
}
