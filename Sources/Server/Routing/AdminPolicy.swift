/// Who may use the admin listener for what (docs/serving.md, SECURITY.md).
struct AdminPolicy: Sendable, Equatable {
    /// The bearer token `/metrics` and `POST /reload` need; nil without `adminTokenFile`. With a token,
    /// any Host is accepted (a page that rebinds a name still cannot send the token).
    var token: [UInt8]?
    /// Exposed beyond loopback without a token: health, readiness and metrics only.
    var readOnly = false

    init(token: [UInt8]? = nil, readOnly: Bool = false) {
        self.token = token
        self.readOnly = readOnly
    }
}
