/// Who may use the admin listener for what (docs/serving.md, SECURITY.md).
struct AdminPolicy: Sendable, Equatable {
    /// The bearer token `/metrics` and `POST /reload` need; nil without `adminTokenFile`. With a token,
    /// any Host is accepted (a page that rebinds a name still cannot send the token).
    var token: [UInt8]?
    /// `server.linkAPI.tokenFile`'s token: the link API under `/v1/` and nothing else.
    var linkAPIToken: [UInt8]?
    /// Exposed beyond loopback without a token: health, readiness and metrics only.
    var readOnly = false

    init(token: [UInt8]? = nil, linkAPIToken: [UInt8]? = nil, readOnly: Bool = false) {
        self.token = token
        self.linkAPIToken = linkAPIToken
        self.readOnly = readOnly
    }
}

/// Which token a link API call came with: each has its own creation budget. `none`: a public call on a
/// link domain (an app claiming a code), which creates nothing.
enum APIToken: Sendable, Equatable {
    case admin, linkAPI, none
}
